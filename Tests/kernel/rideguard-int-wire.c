// SPDX-License-Identifier: GPL-2.0
/*
 * rideguard-int-wire: a test-only "INT wire" for RideGuard's VM test of the IMUs riders buy.
 *
 * Creates I2C devices on an adapter (i2c-stub's, in the test) the way a device tree with an
 * `interrupts` property would: each with its own interrupt, which this module raises at `rate_hz`
 * as the chip's data-ready output would. The chip's own kernel driver (inv_mpu6050, st_accel,
 * st_lsm6dsx...) then probes with an IRQ, makes its data-ready trigger or hardware FIFO buffer, and
 * reads its registers on every interrupt, exactly as on a Pi with the INT pin wired.
 *
 * The interrupts are level-high: the line "stays active" only for the one raise, so drivers that
 * keep reading while their status register says data is ready (st_sensors on an edge interrupt)
 * read once per raise even though i2c-stub's status register never clears. A raise while the
 * line is masked (the driver's handler still at work) is skipped.
 *
 *   insmod rideguard-int-wire.ko bus=N chips=mpu6050@0x68,lis3dh@0x18 rate_hz=200 [mount_matrix=0,1,0,-1,0,0,0,0,1]
 *
 * mount_matrix gives every chip a software node with that `mount-matrix` property, which the
 * drivers read with iio_read_mount_matrix() and show as in_accel_mount_matrix.
 *
 * An adxl345 gets the ACPI device ADS0345 as its firmware node, which the VM is booted with
 * (Tests/kernel/adxl345.asl): Linux 6.1's adxl345 driver takes the chip's type only from the
 * firmware, as a PC's ACPI tables or a Pi's device tree give it, and refuses a chip without one.
 *
 * /sys/module/rideguard_int_wire/parameters/rate_hz can be changed while loaded; 0 stops the
 * interrupts (a broken INT wire). Not for real hardware.
 */
#include <linux/acpi.h>
#include <linux/hrtimer.h>
#include <linux/i2c.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/property.h>
#include <linux/slab.h>
#include <linux/string.h>

#define RG_MAX_CHIPS 8

static int bus = -1;
module_param(bus, int, 0444);
MODULE_PARM_DESC(bus, "the I2C adapter's number");
static char *chips = "";
module_param(chips, charp, 0444);
MODULE_PARM_DESC(chips, "TYPE@ADDRESS,... the devices to create, each with its own interrupt");
static char *mount_matrix = "";
module_param(mount_matrix, charp, 0444);
MODULE_PARM_DESC(mount_matrix, "nine numbers a,b,c,...: every chip's mount-matrix property, as a device tree gives it");
static int rate_hz = 200;
module_param(rate_hz, int, 0644);
MODULE_PARM_DESC(rate_hz, "data-ready interrupts a second, for every chip; 0 stops them");

/* The mount matrix's nine strings, shared by every chip's software node. */
static char rg_matrix_text[9][12];
static const char *rg_matrix[9];
static struct property_entry rg_properties[2];
static struct software_node rg_node = { .properties = rg_properties };

static struct i2c_client *rg_clients[RG_MAX_CHIPS];
static struct acpi_device *rg_acpi[RG_MAX_CHIPS];
static int rg_irqs[RG_MAX_CHIPS];
static int rg_count;
static struct hrtimer rg_timer;

static void rg_noop(struct irq_data *d) { }

static int rg_set_type(struct irq_data *d, unsigned int type)
{
	return IRQ_SET_MASK_OK;
}

static struct irq_chip rg_chip = {
	.name = "rideguard-int-wire",
	.irq_mask = rg_noop,
	.irq_unmask = rg_noop,
	.irq_set_type = rg_set_type,
};

static enum hrtimer_restart rg_tick(struct hrtimer *timer)
{
	int rate = READ_ONCE(rate_hz);
	int i;

	if (rate > 0) {
		/* A masked line does not reach the CPU (a real interrupt controller holds it): the
		 * driver's threaded handler still at work on the last sample (IRQF_ONESHOT keeps the
		 * line masked until it ends) is not entered again with a newer timestamp, as it would
		 * be with the mask ignored. That sample is lost, as a chip's data register is
		 * overwritten when read too late. */
		for (i = 0; i < rg_count; i++) {
			if (!irqd_irq_masked(irq_get_irq_data(rg_irqs[i])))
				generic_handle_irq(rg_irqs[i]);
		}
	}
	hrtimer_forward_now(timer, ns_to_ktime(rate > 0 ? NSEC_PER_SEC / rate : NSEC_PER_SEC / 10));
	return HRTIMER_RESTART;
}

static void rg_remove_all(void)
{
	while (rg_count > 0) {
		rg_count--;
		if (rg_clients[rg_count])
			i2c_unregister_device(rg_clients[rg_count]);
		if (rg_acpi[rg_count])
			acpi_dev_put(rg_acpi[rg_count]);
		rg_acpi[rg_count] = NULL;
		irq_free_desc(rg_irqs[rg_count]);
	}
}

static int rg_add(struct i2c_adapter *adapter, const char *spec)
{
	struct i2c_board_info info = {};
	const char *at = strchr(spec, '@');
	unsigned int address;
	int irq;

	if (!at || at == spec || at - spec >= I2C_NAME_SIZE || kstrtouint(at + 1, 0, &address) || address > 0x7f) {
		pr_err("rideguard-int-wire: '%s' is not TYPE@ADDRESS\n", spec);
		return -EINVAL;
	}
	if (rg_count == RG_MAX_CHIPS)
		return -ENOSPC;
	/* No owner: a driver holding the interrupt must not pin this module, whose exit releases
	 * the driver (by removing the device) before the interrupt. From 1: 0 means "no interrupt"
	 * to the I2C core and the drivers, and on arm64 (no legacy interrupts kept) it is free. */
	irq = __irq_alloc_descs(-1, 1, 1, NUMA_NO_NODE, NULL, NULL);
	if (irq < 0)
		return irq;
	irq_set_chip_and_handler(irq, &rg_chip, handle_level_irq);
	irq_clear_status_flags(irq, IRQ_NOREQUEST | IRQ_NOPROBE);
	irq_set_irq_type(irq, IRQ_TYPE_LEVEL_HIGH);
	rg_irqs[rg_count] = irq;

	memcpy(info.type, spec, at - spec);
	info.addr = address;
	info.irq = irq;
	if (rg_properties[0].name)
		info.swnode = &rg_node;
	if (!strcmp(info.type, "adxl345")) {
		rg_acpi[rg_count] = acpi_dev_get_first_match_dev("ADS0345", NULL, -1);
		if (!rg_acpi[rg_count]) {
			pr_err("rideguard-int-wire: no ACPI device ADS0345 for the adxl345 (boot with adxl345.aml)\n");
			irq_free_desc(irq);
			return -ENODEV;
		}
		info.fwnode = acpi_fwnode_handle(rg_acpi[rg_count]);
	}
	rg_clients[rg_count] = i2c_new_client_device(adapter, &info);
	if (IS_ERR(rg_clients[rg_count])) {
		int err = PTR_ERR(rg_clients[rg_count]);

		rg_clients[rg_count] = NULL;
		if (rg_acpi[rg_count])
			acpi_dev_put(rg_acpi[rg_count]);
		rg_acpi[rg_count] = NULL;
		irq_free_desc(irq);
		return err;
	}
	rg_count++;
	pr_info("rideguard-int-wire: %s at 0x%02x on i2c-%d, interrupt %d\n", info.type, address, bus, irq);
	return 0;
}

/* "a,b,...,i" into the mount-matrix property; nothing for an empty parameter. */
static int rg_parse_matrix(void)
{
	const char *cursor = mount_matrix;
	int i;

	if (!*cursor)
		return 0;
	for (i = 0; i < 9; i++) {
		size_t n = strcspn(cursor, ",");

		if (n == 0 || n >= sizeof(rg_matrix_text[i]) || (i < 8 && cursor[n] != ',') || (i == 8 && cursor[n]))
			return -EINVAL;
		memcpy(rg_matrix_text[i], cursor, n);
		rg_matrix[i] = rg_matrix_text[i];
		cursor += n + (i < 8);
	}
	rg_properties[0] = PROPERTY_ENTRY_STRING_ARRAY_LEN("mount-matrix", rg_matrix, 9);
	return 0;
}

static int __init rg_init(void)
{
	struct i2c_adapter *adapter;
	char *list, *cursor, *spec;
	int err = rg_parse_matrix();

	if (err) {
		pr_err("rideguard-int-wire: mount_matrix '%s' is not nine numbers a,b,...\n", mount_matrix);
		return err;
	}
	adapter = i2c_get_adapter(bus);

	if (!adapter) {
		pr_err("rideguard-int-wire: no I2C adapter %d\n", bus);
		return -ENODEV;
	}
	list = kstrdup(chips, GFP_KERNEL);
	if (!list) {
		i2c_put_adapter(adapter);
		return -ENOMEM;
	}
	cursor = list;
	while (!err && (spec = strsep(&cursor, ",")) != NULL) {
		if (*spec)
			err = rg_add(adapter, spec);
	}
	kfree(list);
	i2c_put_adapter(adapter);
	if (err) {
		rg_remove_all();
		return err;
	}
	hrtimer_init(&rg_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	rg_timer.function = rg_tick;
	hrtimer_start(&rg_timer, ms_to_ktime(10), HRTIMER_MODE_REL_HARD);
	return 0;
}

static void __exit rg_exit(void)
{
	hrtimer_cancel(&rg_timer);
	rg_remove_all();
}

module_init(rg_init);
module_exit(rg_exit);
MODULE_DESCRIPTION("RideGuard test-only data-ready interrupts for I2C chips on i2c-stub");
MODULE_LICENSE("GPL");
