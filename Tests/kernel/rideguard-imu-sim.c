// SPDX-License-Identifier: GPL-2.0
/*
 * rideguard-imu-sim: a test-only IIO accelerometer + gyro, for RideGuard's VM test.
 *
 * It looks to userspace like an MPU6050 behind the kernel's inv_mpu6050 driver: channels
 * accel_x/y/z and anglvel_x/y/z stored big-endian as s16 with a shared scale per type, a
 * soft timestamp (le:s64), sampling_frequency, and in_accel_scale_available (±2/4/8/16 g) so that
 * a client can ask for the widest range. Samples come from a kfifo buffer filled by an hrtimer at
 * the sampling frequency, so libiio's local backend reads it exactly as it reads a real sensor.
 *
 * What the "sensor" measures is written to /dev/rideguard-imu-sim: records of six native-endian
 * s32, accel x y z in µm/s² then gyro x y z in µrad/s. Each tick takes the next record; the
 * writer blocks while the queue is full, so `cat trace.bin > /dev/rideguard-imu-sim` plays a trace
 * at the device's rate. With nothing queued the sensor keeps measuring the last record (at load:
 * lying flat, +1 g on z). Values are quantised at the current scale, saturate at ±32767 like the
 * real part, and carry ±1 LSB of noise.
 *
 * Not for real hardware: it binds to a platform device it creates itself.
 */
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/iio/buffer.h>
#include <linux/iio/iio.h>
#include <linux/iio/kfifo_buf.h>
#include <linux/iio/sysfs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#define RG_NAME "rideguard-imu-sim"
#define RG_QUEUE 1024 /* records: 5 s at 200 Hz */

struct rg_record {
	s32 value[6]; /* µm/s² ×3, µrad/s ×3 */
};

/* The MPU6050's accelerometer ranges, m/s² per LSB (as inv_mpu6050 reports them). */
static const int rg_accel_scales[] = { 0, 598, 0, 1196, 0, 2392, 0, 4788 };
/* ±2000 °/s: rad/s per LSB, in nano. */
#define RG_GYRO_SCALE_NANO 1064724

struct rg_imu {
	struct iio_dev *indio_dev;
	struct hrtimer timer;
	ktime_t period;
	int frequency;
	int accel_scale_micro;
	spinlock_t lock; /* the queue, `last` and `noise` */
	struct rg_record queue[RG_QUEUE];
	unsigned int head, count;
	struct rg_record last;
	u32 noise;
	wait_queue_head_t space;
	struct {
		__be16 channel[6];
		s64 timestamp __aligned(8);
	} scan;
};

static struct rg_imu *rg_device; /* the one instance, for the feeding misc device */

#define RG_CHANNEL(_type, _axis, _index) {                                     \
	.type = (_type),                                                       \
	.modified = 1,                                                         \
	.channel2 = (_axis),                                                   \
	.info_mask_separate = BIT(IIO_CHAN_INFO_RAW),                          \
	.info_mask_shared_by_type = BIT(IIO_CHAN_INFO_SCALE),                  \
	.info_mask_shared_by_all = BIT(IIO_CHAN_INFO_SAMP_FREQ),               \
	.scan_index = (_index),                                                \
	.scan_type = { .sign = 's', .realbits = 16, .storagebits = 16,         \
		       .endianness = IIO_BE },                                  \
}

static const struct iio_chan_spec rg_channels[] = {
	RG_CHANNEL(IIO_ACCEL, IIO_MOD_X, 0),
	RG_CHANNEL(IIO_ACCEL, IIO_MOD_Y, 1),
	RG_CHANNEL(IIO_ACCEL, IIO_MOD_Z, 2),
	RG_CHANNEL(IIO_ANGL_VEL, IIO_MOD_X, 3),
	RG_CHANNEL(IIO_ANGL_VEL, IIO_MOD_Y, 4),
	RG_CHANNEL(IIO_ANGL_VEL, IIO_MOD_Z, 5),
	IIO_CHAN_SOFT_TIMESTAMP(6),
};

/* The core demuxes whatever subset a reader enables out of the full scan. */
static const unsigned long rg_scan_masks[] = { 0x3f, 0 };

static s16 rg_saturate(s64 value)
{
	return (s16)clamp_t(s64, value, -32768, 32767);
}

/* One reading of channel `index` in LSB at the current scale, without noise. Lock held. */
static s16 rg_raw(struct rg_imu *imu, int index)
{
	s64 value = imu->last.value[index];

	if (index < 3)
		return rg_saturate(div_s64(value + (value < 0 ? -imu->accel_scale_micro / 2 : imu->accel_scale_micro / 2),
					   imu->accel_scale_micro));
	return rg_saturate(div_s64(value * 1000, RG_GYRO_SCALE_NANO));
}

static enum hrtimer_restart rg_tick(struct hrtimer *timer)
{
	struct rg_imu *imu = container_of(timer, struct rg_imu, timer);
	bool took = false;
	int i;

	spin_lock(&imu->lock);
	if (imu->count) {
		imu->last = imu->queue[imu->head];
		imu->head = (imu->head + 1) % RG_QUEUE;
		imu->count--;
		took = true;
	}
	for (i = 0; i < 6; i++) {
		imu->noise = imu->noise * 1664525u + 1013904223u;
		imu->scan.channel[i] = cpu_to_be16(rg_saturate((s64)rg_raw(imu, i) + (s64)((imu->noise >> 24) % 3) - 1));
	}
	spin_unlock(&imu->lock);
	if (took)
		wake_up_interruptible(&imu->space);
	iio_push_to_buffers_with_timestamp(imu->indio_dev, &imu->scan, iio_get_time_ns(imu->indio_dev));
	hrtimer_forward_now(timer, imu->period);
	return HRTIMER_RESTART;
}

static int rg_postenable(struct iio_dev *indio_dev)
{
	struct rg_imu *imu = iio_priv(indio_dev);

	hrtimer_start(&imu->timer, imu->period, HRTIMER_MODE_REL_SOFT);
	return 0;
}

static int rg_predisable(struct iio_dev *indio_dev)
{
	struct rg_imu *imu = iio_priv(indio_dev);

	hrtimer_cancel(&imu->timer);
	return 0;
}

static const struct iio_buffer_setup_ops rg_buffer_ops = {
	.postenable = rg_postenable,
	.predisable = rg_predisable,
};

static int rg_read_raw(struct iio_dev *indio_dev, struct iio_chan_spec const *chan, int *val, int *val2, long mask)
{
	struct rg_imu *imu = iio_priv(indio_dev);

	switch (mask) {
	case IIO_CHAN_INFO_RAW:
		spin_lock_bh(&imu->lock);
		*val = rg_raw(imu, chan->scan_index);
		spin_unlock_bh(&imu->lock);
		return IIO_VAL_INT;
	case IIO_CHAN_INFO_SCALE:
		*val = 0;
		if (chan->type == IIO_ACCEL) {
			*val2 = imu->accel_scale_micro;
			return IIO_VAL_INT_PLUS_MICRO;
		}
		*val2 = RG_GYRO_SCALE_NANO;
		return IIO_VAL_INT_PLUS_NANO;
	case IIO_CHAN_INFO_SAMP_FREQ:
		*val = imu->frequency;
		return IIO_VAL_INT;
	}
	return -EINVAL;
}

static int rg_write_raw(struct iio_dev *indio_dev, struct iio_chan_spec const *chan, int val, int val2, long mask)
{
	struct rg_imu *imu = iio_priv(indio_dev);
	int i;

	switch (mask) {
	case IIO_CHAN_INFO_SCALE:
		if (chan->type != IIO_ACCEL)
			return -EINVAL;
		for (i = 0; i < ARRAY_SIZE(rg_accel_scales); i += 2) {
			if (val == rg_accel_scales[i] && val2 == rg_accel_scales[i + 1]) {
				spin_lock_bh(&imu->lock);
				imu->accel_scale_micro = val2;
				spin_unlock_bh(&imu->lock);
				return 0;
			}
		}
		return -EINVAL;
	case IIO_CHAN_INFO_SAMP_FREQ:
		if (val < 4 || val > 1000 || val2 != 0)
			return -EINVAL;
		imu->frequency = val;
		imu->period = ns_to_ktime(NSEC_PER_SEC / val); /* taken at the next tick */
		return 0;
	}
	return -EINVAL;
}

static int rg_read_avail(struct iio_dev *indio_dev, struct iio_chan_spec const *chan, const int **vals,
			 int *type, int *length, long mask)
{
	if (mask != IIO_CHAN_INFO_SCALE || chan->type != IIO_ACCEL)
		return -EINVAL;
	*vals = rg_accel_scales;
	*type = IIO_VAL_INT_PLUS_MICRO;
	*length = ARRAY_SIZE(rg_accel_scales);
	return IIO_AVAIL_LIST;
}

static int rg_write_raw_get_fmt(struct iio_dev *indio_dev, struct iio_chan_spec const *chan, long mask)
{
	return mask == IIO_CHAN_INFO_SCALE && chan->type == IIO_ANGL_VEL ? IIO_VAL_INT_PLUS_NANO
									  : IIO_VAL_INT_PLUS_MICRO;
}

/* How many records wait to be measured: lets a test know when a trace has played. */
static ssize_t sim_queued_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct rg_imu *imu = iio_priv(dev_to_iio_dev(dev));
	unsigned int count;

	spin_lock_bh(&imu->lock);
	count = imu->count;
	spin_unlock_bh(&imu->lock);
	return sysfs_emit(buf, "%u\n", count);
}
static IIO_DEVICE_ATTR_RO(sim_queued, 0);

static struct attribute *rg_attributes[] = {
	&iio_dev_attr_sim_queued.dev_attr.attr,
	NULL,
};

static const struct attribute_group rg_attribute_group = {
	.attrs = rg_attributes,
};

static const struct iio_info rg_info = {
	.read_raw = rg_read_raw,
	.write_raw = rg_write_raw,
	.read_avail = rg_read_avail,
	.write_raw_get_fmt = rg_write_raw_get_fmt,
	.attrs = &rg_attribute_group,
};

static ssize_t rg_feed_write(struct file *file, const char __user *data, size_t size, loff_t *offset)
{
	struct rg_imu *imu = rg_device;
	struct rg_record record;
	size_t done = 0;
	int ret;

	if (!imu)
		return -ENODEV;
	if (size % sizeof(record))
		return -EINVAL;
	while (done < size) {
		if (copy_from_user(&record, data + done, sizeof(record)))
			return done ? done : -EFAULT;
		ret = wait_event_interruptible(imu->space, READ_ONCE(imu->count) < RG_QUEUE);
		if (ret)
			return done ? done : ret;
		spin_lock_bh(&imu->lock);
		imu->queue[(imu->head + imu->count) % RG_QUEUE] = record;
		imu->count++;
		spin_unlock_bh(&imu->lock);
		done += sizeof(record);
	}
	return done;
}

static const struct file_operations rg_feed_fops = {
	.owner = THIS_MODULE,
	.write = rg_feed_write,
	.llseek = noop_llseek,
};

static struct miscdevice rg_feed = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = RG_NAME,
	.fops = &rg_feed_fops,
	.mode = 0600,
};

static int rg_probe(struct platform_device *pdev)
{
	struct iio_dev *indio_dev;
	struct rg_imu *imu;
	int ret;

	indio_dev = devm_iio_device_alloc(&pdev->dev, sizeof(*imu));
	if (!indio_dev)
		return -ENOMEM;
	imu = iio_priv(indio_dev);
	imu->indio_dev = indio_dev;
	spin_lock_init(&imu->lock);
	init_waitqueue_head(&imu->space);
	imu->frequency = 200;
	imu->period = ns_to_ktime(NSEC_PER_SEC / imu->frequency);
	imu->accel_scale_micro = 598; /* ±2 g at power-up, as the real part */
	imu->last.value[2] = 9806650;
	imu->noise = 12345;
	hrtimer_init(&imu->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	imu->timer.function = rg_tick;

	indio_dev->name = RG_NAME;
	indio_dev->info = &rg_info;
	indio_dev->channels = rg_channels;
	indio_dev->num_channels = ARRAY_SIZE(rg_channels);
	indio_dev->available_scan_masks = rg_scan_masks;
	indio_dev->modes = INDIO_DIRECT_MODE;
	ret = devm_iio_kfifo_buffer_setup(&pdev->dev, indio_dev, &rg_buffer_ops);
	if (ret)
		return ret;
	ret = devm_iio_device_register(&pdev->dev, indio_dev);
	if (ret)
		return ret;
	rg_device = imu;
	return misc_register(&rg_feed);
}

static int rg_remove(struct platform_device *pdev)
{
	misc_deregister(&rg_feed);
	rg_device = NULL;
	return 0;
}

static struct platform_driver rg_driver = {
	.driver = { .name = RG_NAME },
	.probe = rg_probe,
	.remove = rg_remove,
};

static struct platform_device *rg_platform_device;

static int __init rg_init(void)
{
	int ret = platform_driver_register(&rg_driver);

	if (ret)
		return ret;
	rg_platform_device = platform_device_register_simple(RG_NAME, -1, NULL, 0);
	if (IS_ERR(rg_platform_device)) {
		platform_driver_unregister(&rg_driver);
		return PTR_ERR(rg_platform_device);
	}
	return 0;
}

static void __exit rg_exit(void)
{
	platform_device_unregister(rg_platform_device);
	platform_driver_unregister(&rg_driver);
}

module_init(rg_init);
module_exit(rg_exit);
MODULE_DESCRIPTION("RideGuard test-only IIO IMU fed from userspace");
MODULE_LICENSE("GPL");
