# SPDX-License-Identifier: Apache-2.0
# Sourced by vm-checks.sh (busybox sh, its ok/bad/wait helpers): the IMUs riders buy, each through
# Debian's own driver, on i2c-stub (the kernel's emulated SMBus adapter: a register file per chip
# address, written here with i2cset as the chip's data registers would be filled). Every chip is
# wired as most hobby breakouts are, SDA/SCL only, without its INT line:
#   mpu6050 (inv_mpu6050)   no buffer at all without an IRQ
#   bmi160 (bmi160)         a triggered buffer whose trigger comes only from INT1/INT2
#   lis3dh (st_accel)       a triggered buffer, its trigger only with an IRQ
#   lsm6dsl (st_lsm6dsx)    two devices, lsm6dsl_accel and lsm6dsl_gyro, no buffer without an IRQ
#   adxl345 (adxl345)       no buffer in this kernel, and no use of its IRQ; 6.1's probe takes
#                           its type from the device tree or ACPI only (device_get_match_data), so
#                           a device made here from userspace is refused (-EINVAL): it is measured
#                           in the second half, where rideguard-int-wire gives it the ACPI node
#                           ADS0345 the VM is booted with (Tests/kernel/adxl345.asl)
# Debian's amd64 kernel builds no stand-alone trigger (iio-trig-hrtimer, iio-trig-sysfs), so each
# is read polled: `rideguard record` must say so, read the known acceleration (and rotation)
# written into the registers back in m/s² (rad/s) with the right sign, scale and axis, with
# timestamps, and give the rate it achieved. Then the kernel's timer trigger is loaded (built here
# from linux-source, as Raspberry Pi OS's kernels build it) and the BMI160 and LIS3DH are read
# through their buffers on RideGuard's own trigger. Then the chips are made again with their INT
# wired (the second half of this file). RIDEGUARD_VM_BREAK=axes writes the chips' x and y swapped,
# RIDEGUARD_VM_BREAK=noint raises no interrupt on the INT wires, RIDEGUARD_VM_BREAK=notimer loads
# no timer trigger: each must fail checks.

for m in $(cat /modules/imu-order); do
    case "$m" in
        # The BNO055 (0x28) pages its registers (PAGESEL, 0x07): i2c-stub's banks give it a page 1
        # over 0x08-0x7F, where its driver writes its configuration, apart from page 0's data.
        i2c-stub.ko) insmod /modules/$m chip_addr=0x68,0x69,0x18,0x6a,0x53,0x28 bank_reg=0,0,0,0,0,0x07 bank_mask=0,0,0,0,0,0x01 \
            bank_start=0,0,0,0,0,0x08 bank_end=0,0,0,0,0,0x7f ;;
        *) insmod /modules/$m ;;
    esac || bad "insmod $m"
done
bus=
for adapter in /sys/bus/i2c/devices/i2c-*; do
    grep -q "SMBus stub driver" $adapter/name 2>/dev/null && bus=${adapter##*i2c-}
done
[ -n "$bus" ] && [ -e /dev/i2c-$bus ] && ok "i2c-stub: bus $bus, chips at 0x68 0x69 0x18 0x6a 0x53 0x28" || bad "no i2c-stub bus (/dev/i2c-$bus)"

# put8 ADDR REG VALUE, numbers in any base: written as hex, the one base every i2cset reads alike
# (busybox's takes bare numbers as hex, i2c-tools' as decimal).
put8() { i2cset -f -y $bus $1 $(printf '0x%02x 0x%02x' $(($2)) $(($3))) || bad "i2cset $bus $1 $2 $3"; }
# put16 ADDR REG VALUE be|le: a signed 16-bit value into two registers
put16() {
    v=$3
    [ $v -lt 0 ] && v=$((v + 65536))
    if [ $4 = be ]; then put8 $1 $2 $((v >> 8)); put8 $1 $(($2 + 1)) $((v & 255))
    else put8 $1 $2 $((v & 255)); put8 $1 $(($2 + 1)) $((v >> 8)); fi
}
# The device's sysfs folder, by name.
iio_dir() { for d in /sys/bus/iio/devices/iio:device*; do [ "$(cat $d/name)" = "$1" ] && echo $d; done; }
# raw VALUE SCALE: the register count for VALUE (SI units) at SCALE
raw() { awk -v v="$1" -v s="$2" 'BEGIN { r = v / s; printf "%d", (r < 0 ? r - 0.5 : r + 0.5) }'; }

# What each chip is made to measure: +0.5 g, -0.25 g, +1 g; 0.5, -0.25, 1 rad/s.
ax=4.903325 ay=-2.4516625 az=9.80665 gx=0.5 gy=-0.25 gz=1.0
if [ "$break" = axes ]; then swapped=1; else swapped=0; fi

# measure NAME ADDR ACCEL_REG GYRO_REG ENDIAN SHIFT [GYRO_DEVICE]: sets the widest accelerometer
# range, writes the values, records 4 s, and checks what came out: read as $want says (polled or
# through a buffer), and at least $minrate Hz where set.
want="polled: " minrate=
measure() {
    name=$1 addr=$2 areg=$3 greg=$4 endian=$5 shift=$6 gdev=${7:-$1}
    dir=$(iio_dir $name)
    [ -n "$dir" ] || { bad "$name: no IIO device (the driver did not probe: $(dmesg | tail -3))"; return; }
    # The scale is the type's (in_accel_scale) or, on st_accel, each axis's (in_accel_x_scale).
    scalefile=$dir/in_accel_scale
    [ -e $scalefile ] || scalefile=$dir/in_accel_x_scale
    if [ -e $dir/in_accel_scale_available ]; then
        widest=$(tr ' ' '\n' < $dir/in_accel_scale_available | sort -g | tail -1)
        echo $widest > $scalefile
    fi
    scale=$(cat $scalefile)
    gscale=
    if [ -n "$greg" ]; then
        gdir=$(iio_dir $gdev)
        # The gyro's widest range too, as RideGuard asks it.
        if [ -e $gdir/in_anglvel_scale_available ]; then
            tr ' ' '\n' < $gdir/in_anglvel_scale_available | sort -g | tail -1 > $gdir/in_anglvel_scale
        fi
        gscale=$(cat $gdir/in_anglvel_scale)
    fi
    # A chip that pages its registers ($pagesel: its page register) is put on page 0, where its
    # data registers are, and back on the page its driver last chose once they are written (regmap
    # remembers the page it selected and does not select it again).
    if [ -n "${pagesel:-}" ]; then
        page=$(i2cget -f -y $bus $addr $pagesel)
        put8 $addr $pagesel 0
    fi
    x=$ax y=$ay
    [ $swapped = 1 ] && x=$ay y=$ax
    put16 $addr $areg $(( $(raw $x $scale) << shift )) $endian
    put16 $addr $((areg + 2)) $(( $(raw $y $scale) << shift )) $endian
    put16 $addr $((areg + 4)) $(( $(raw $az $scale) << shift )) $endian
    if [ -n "$greg" ]; then
        put16 $addr $greg $(raw $gx $gscale) $endian
        put16 $addr $((greg + 2)) $(raw $gy $gscale) $endian
        put16 $addr $((greg + 4)) $(raw $gz $gscale) $endian
    fi
    [ -n "${pagesel:-}" ] && put8 $addr $pagesel $page
    rideguard record --device $name --rate 200 --duration 4 --out /tmp/$name.csv > /tmp/$name.out 2>&1
    status=$?
    # The last opening is how it was read in the end (a buffer that stayed empty is followed by
    # a polled one).
    grep "recording" /tmp/$name.out | sed 's/^/vm-test: /'
    said=$(grep "recording" /tmp/$name.out | tail -1)
    [ $status -eq 0 ] && echo "$said" | grep -q "$want" && ok "$name: record runs, read as expected ($want)" \
        || { bad "$name: record (exit $status), not '$want': $(tail -3 /tmp/$name.out)"; return; }
    # The samples: count, rate, strictly increasing times, and each axis's value within 1.5 counts.
    awk -F, -v name=$name -v minrate=${minrate:-0} -v s=$scale -v g="$gscale" -v ax=$ax -v ay=$ay -v az=$az -v gx=$gx -v gy=$gy -v gz=$gz '
        function off(v, want, unit) { d = v - want; if (d < 0) d = -d; return d > 1.5 * unit }
        /^#/ || /^time_s/ { next }
        { n++; if (n == 1) first = $1; if (n > 1 && $1 <= last) back++; last = $1
          if (off($2, ax, s) || off($3, ay, s) || off($4, az, s)) wrong++
          if (g != "" && (NF < 7 || off($5, gx, g) || off($6, gy, g) || off($7, gz, g))) wrong++
          if (n == 1) seen = $2 " " $3 " " $4 (g != "" ? " / " $5 " " $6 " " $7 : "") }
        END {
            rate = n > 1 ? (n - 1) / (last - first) : 0
            printf "vm-test: %s: %d samples, %.1f Hz achieved (200 asked), %d out of time order, %d off the values written, first %s\n", name, n, rate, back, wrong, seen
            printf "%.1f\n", rate > "/tmp/" name ".rate"
            exit !(n >= 8 && back == 0 && wrong == 0 && rate >= minrate)
        }' /tmp/$name.csv && ok "$name: values, signs, axes and scale as written, times increasing${gscale:+, gyro too}${minrate:+, at least $minrate Hz}" \
        || bad "$name: the recorded values are not what the registers hold${minrate:+, or slower than $minrate Hz}"
}

# run_on NAME MODE DRIVER [MATRIX]: doctor and the agent itself on a real driver, the chip named in
# the configuration: doctor names the chip, how it is read ($MODE), its driver and mount matrix;
# `rideguard run` arms on it and status says how it is read and its driver (what the page's
# doctor shows: the page's program cannot look at sysfs for it).
run_on() {
    sed "s/device: rideguard-imu-sim/device: $1/; s/rate_hz: .*/rate_hz: 200/" /etc/rideguard/config.yaml > /tmp/$1.yaml
    # doctor first, with the agent down: it opens the IMU itself and names the chip's driver.
    rideguard doctor --config /tmp/$1.yaml > /tmp/doctor-$1.out 2>&1
    imu=$(grep "IMU:" /tmp/doctor-$1.out)
    echo "vm-test: doctor on $1: $imu"
    echo "$imu" | grep -q "IMU: $1.* ($2.*; driver $3${4:+, mount matrix $4 }" && ok "doctor on $1: how it is read, its driver ($3)${4:+, its mount matrix}" \
        || bad "doctor on $1: not '$2', driver $3${4:+, mount matrix $4}"
    rideguard run --config /tmp/$1.yaml > /tmp/agent.log 2>&1 &
    agent=$!
    i=0
    while [ $i -lt 100 ] && ! rideguard status 2>/dev/null | grep -q "^IMU: $1"; do usleep 200000; i=$((i + 1)); done
    sleep 6   # a rate window
    rideguard status > /tmp/status.out 2>&1
    echo "vm-test: run on $1: $(grep '^IMU' /tmp/status.out)"
    grep -q "^IMU: $1[^,]*, $2.*; driver $3" /tmp/status.out && wait_log "armed: protecting" 60 && kill -0 $agent \
        && ok "run on $1: armed, status says '$2' and its driver ($3)" || { bad "run on $1: not '$2', driver $3"; cat /tmp/status.out; tail -20 /tmp/agent.log; }
    kill -TERM $agent
    wait $agent
}
# doctor_on_bus NAME WANT…: doctor, its chip named but no IIO device made of it yet, must say WANT…
# (what answers on the bus, whether the kernel has its driver, what to do).
doctor_on_bus() {
    name=$1
    shift
    sed "s/device: rideguard-imu-sim/device: $name/" /etc/rideguard/config.yaml > /tmp/bus-$name.yaml
    rideguard doctor --config /tmp/bus-$name.yaml > /tmp/bus-$name.out 2>&1
    echo "vm-test: doctor, $name on the bus without a device: $(grep -A1 'IMU:' /tmp/bus-$name.out | tr '\n' ' ')"
    for expected in "$@"; do
        grep -qF "$expected" /tmp/bus-$name.out || { bad "doctor on the bus ($name): not '$expected'"; return; }
    done
    ok "doctor on the bus ($name): the chip found read-only on i2c-$bus, the kernel's driver, what to do"
}
# The chips answer on the bus before any device is made of them (no overlay yet): doctor looks.
# The BMI160 first, its lines taken out of this VM's modules.alias (a kernel without its driver).
put8 0x69 0x00 0xd1
doctor_on_bus bmi160 "BMI160 answers at 0x69 on i2c-$bus, but no driver has made an IIO device of it" \
    "this kernel has no driver for the BMI160 (CONFIG_BMI160_I2C, bosch,bmi160): build the module"
put8 0x68 0x75 0x68
doctor_on_bus mpu6050 "MPU-6050 answers at 0x68 on i2c-$bus" "the kernel has its driver (inv_mpu6050_i2c)" \
    "add \`dtoverlay=i2c-sensor,mpu6050,int_pin=4\` to /boot/firmware/config.txt"

# mpu6050: WHO_AM_I (0x75) 0x68; big-endian ACCEL_XOUT_H 0x3B, GYRO_XOUT_H 0x43.
echo mpu6050 0x68 > /sys/bus/i2c/devices/i2c-$bus/new_device
# bmi160: CHIP_ID (0x00) 0xD1; little-endian DATA_GYR 0x0C, DATA_ACC 0x12.
put8 0x69 0x00 0xd1
echo bmi160 0x69 > /sys/bus/i2c/devices/i2c-$bus/new_device
# lis3dh: WHO_AM_I 0x33 at 0x0F; st_sensors reads with the auto-increment bit (0x80) set on every
# address, so the chip's registers are seen at 0x8F and OUT_X_L at 0xA8; 12 bits, left-justified.
put8 0x18 0x0f 0x33
put8 0x18 0x8f 0x33
echo lis3dh 0x18 > /sys/bus/i2c/devices/i2c-$bus/new_device
# lsm6dsl: WHO_AM_I (0x0F) 0x6A; little-endian OUTX_L_G 0x22, OUTX_L_XL 0x28.
put8 0x6a 0x0f 0x6a
echo lsm6dsl 0x6a > /sys/bus/i2c/devices/i2c-$bus/new_device
# adxl345: DEVID (0x00) 0xE5; little-endian DATAX0 0x32.
put8 0x53 0x00 0xe5
echo adxl345 0x53 > /sys/bus/i2c/devices/i2c-$bus/new_device
sleep 1
echo "vm-test: IIO devices: $(cat /sys/bus/iio/devices/iio:device*/name | tr '\n' ' ')"

measure mpu6050 0x68 0x3b 0x43 be 0
measure bmi160 0x69 0x12 0x0c le 0
measure lis3dh 0x18 0xa8 "" le 4
measure lsm6dsl_accel 0x6a 0x28 0x22 le 0 lsm6dsl_gyro
echo "vm-test: adxl345 made from userspace: $(dmesg | grep -o 'adxl345_i2c: probe of .*' | tail -1) (its type comes from firmware only; measured below with its ACPI node)"

# What polling costs: the record process's CPU time (user + system, from the shell's `times`) over
# 4 s on the MPU-6050 at 200 Hz and 1 kHz. Under emulation, so only an upper bound for a Pi; printed,
# not judged.
for rate in 200 1000; do
    cpu=$( (rideguard record --device mpu6050 --rate $rate --duration 4 --out /tmp/cost.csv > /dev/null 2>&1; times) | tail -1 \
        | awk '{ split($1, u, "m"); split($2, s, "m"); printf "%.1f", (u[1] * 60 + u[2] + s[1] * 60 + s[2]) / 4 * 100 }')
    n=$(grep -c '^[0-9]' /tmp/cost.csv)
    echo "vm-test: polling cost: mpu6050 asked $rate Hz, $((n / 4)) samples a second, ${cpu}% of one emulated core"
done

# --- A kernel that offers a timer trigger: the BMI160 and the LIS3DH, still without INT, have
# buffers that any trigger may fill. `rideguard record` (root here, as the service's unit is when it
# makes the trigger) makes RideGuard's through configfs, runs it at the chip's rate, and reads the
# buffer: at the rate asked, with the driver's timestamps.
if [ "$break" != notimer ]; then
    for m in industrialio-configfs industrialio-sw-trigger iio-trig-hrtimer; do insmod /modules/$m.ko || bad "insmod $m"; done
fi
want="buffer, trigger rideguard (a kernel timer" minrate=160
measure bmi160 0x69 0x12 0x0c le 0
measure lis3dh 0x18 0xa8 "" le 4
timer=
for t in /sys/bus/iio/devices/trigger*; do [ "$(cat $t/name 2>/dev/null)" = rideguard ] && timer=$t; done
# 6.1's hrtimer trigger says its rate in fixed point: 200.000000.
[ -n "$timer" ] && awk '{ exit $1 != 200 }' $timer/sampling_frequency && ok "RideGuard's timer trigger made through configfs, at 200 Hz" \
    || bad "no RideGuard timer trigger at 200 Hz (${timer:-none}: $(cat $timer/sampling_frequency 2>/dev/null))"
# The BNO055, through the kernel's own driver (built here from linux-source: Debian's 6.1 lacks it,
# Raspberry Pi OS's has it). Its probe resets it and starts its on-chip fusion; RideGuard turns the
# fusion off (AMG mode: its accelerometer's range can then be ±16 g, not fusion's fixed ±4 g) and
# reads its buffer on its timer trigger (the driver has no trigger of its own). CHIP_ID (0x00) 0xA0;
# software revision 3.17 (0x04, 0x05), the one its driver is tested with; little-endian ACC_DATA
# 0x08, GYR_DATA 0x14 on page 0. Its channels yaw, pitch, roll and linear_x/y/z carry modifiers
# newer than libiio 0.24 (Debian bookworm's, this VM's), which then refuses to open any of the
# machine's IIO devices (EINVAL): RideGuard reads them through sysfs and the character device
# instead, and says so; the other chips too while the BNO055's device is there (the MPU-6050's
# measured again so). RIDEGUARD_VM_BREAK=notimer: the BNO055 is polled.
for m in bno055 bno055_i2c; do insmod /modules/$m.ko || bad "insmod $m: $(dmesg | tail -2)"; done
put8 0x28 0x00 0xa0
put8 0x28 0x04 0x11
put8 0x28 0x05 0x03
echo bno055 0x28 > /sys/bus/i2c/devices/i2c-$bus/new_device
sleep 2
bno=$(iio_dir bno055)
if [ -z "$bno" ]; then
    bad "bno055: its driver did not probe: $(dmesg | grep -i bno055 | tail -3)"
else
    # RideGuard turns its fusion off (the probe turned it on) and asks its widest range.
    rideguard record --device bno055 --rate 200 --duration 1 --out /tmp/bno-first.csv > /tmp/bno-first.out 2>&1
    range=$(cat $bno/in_accel_range_raw)
    [ "$(cat $bno/fusion_enable)" = 0 ] && [ "$range" = 15696 ] \
        && ok "bno055: RideGuard turned its fusion off and asked its widest range, ±16 g (in_accel_range_raw $range)" \
        || bad "bno055: fusion_enable $(cat $bno/fusion_enable), range $range, not ±16 g (15696): $(tail -2 /tmp/bno-first.out)"
    # Its values, with the gyro's scale of AMG mode, the one RideGuard reads with (in fusion mode
    # the driver reports another).
    want="buffer, trigger rideguard (a kernel timer" minrate=160
    [ "$break" = notimer ] && want="polled: " minrate=
    pagesel=0x07
    measure bno055 0x28 0x08 0x14 le 0
    pagesel=
    grep -q "read through sysfs: libiio [0-9.]* cannot open this machine's IIO devices" /tmp/bno055.out \
        && ok "bno055: read through sysfs, as libiio $(grep -o 'libiio [0-9.]*' /tmp/bno055.out | head -1 | cut -d' ' -f2) cannot open the devices beside it, and said so" \
        || echo "vm-test: bno055 read through libiio: $(grep -m1 recording /tmp/bno055.out)"
    want="polled: INT not wired" minrate=
    measure mpu6050 0x68 0x3b 0x43 be 0
    grep -q "read through sysfs" /tmp/mpu6050.out && ok "mpu6050 beside the BNO055: read through sysfs too" \
        || echo "vm-test: mpu6050 beside the BNO055: $(grep -m1 recording /tmp/mpu6050.out)"
    echo 0x28 > /sys/bus/i2c/devices/i2c-$bus/delete_device
    rideguard record --device mpu6050 --duration 1 --out /tmp/after-bno.csv > /tmp/after-bno.out 2>&1
    ! grep -q "read through sysfs" /tmp/after-bno.out && grep -q "^[0-9]" /tmp/after-bno.csv \
        && ok "bno055: once its device is gone, the chips are read through libiio again" || bad "bno055 removed: $(grep -m1 recording /tmp/after-bno.out)"
fi

# The agent on each chip wired without INT.
run_on mpu6050 "polled: INT not wired" inv-mpu6050-i2c
run_on bmi160 "buffer, trigger rideguard (a kernel timer" bmi160_i2c
run_on lis3dh "buffer, trigger rideguard (a kernel timer" st-accel-i2c
run_on lsm6dsl_accel "polled: INT not wired" st_lsm6dsx_i2c

# --- Wired with INT: the same chips made again by our rideguard-int-wire module, each with a
# data-ready interrupt raised 200 times a second, as a device tree's `interrupts` gives them. Each
# driver then makes what it makes with an IRQ: the MPU-6050 its own trigger and a buffer filled from
# its FIFO registers, the LIS3DH its own trigger, the LSM6DSL a hardware-FIFO buffer on each half.
# The BMI160 takes its trigger only from a device tree's "INT1"/"INT2" interrupt names, which an
# I2C device made here cannot carry: it stays on RideGuard's timer trigger. RIDEGUARD_VM_BREAK=noint
# raises no interrupt.
irq_rate=200
[ "$break" = noint ] && irq_rate=0
for addr in 0x68 0x69 0x18 0x6a 0x53; do echo $addr > /sys/bus/i2c/devices/i2c-$bus/delete_device; done
put8 0x68 0x75 0x68                      # WHO_AM_I again: the FIFO's bytes below overwrite it
# Each chip also gets a mount matrix, as a board's device tree gives one: turned 90° about z.
matrix="0, 1, 0; -1, 0, 0; 0, 0, 1"
insmod /modules/rideguard-int-wire.ko bus=$bus chips=mpu6050@0x68,bmi160@0x69,lis3dh@0x18,lsm6dsl@0x6a,adxl345@0x53 rate_hz=$irq_rate \
    mount_matrix=$(echo "$matrix" | tr -d ' ' | tr ';' ',') \
    && ok "the chips made again with a data-ready interrupt each ($irq_rate a second)" || bad "insmod rideguard-int-wire: $(dmesg | tail -3)"
sleep 1
echo "vm-test: with INT: IIO devices $(cat /sys/bus/iio/devices/iio:device*/name | tr '\n' ' '), triggers $(cat /sys/bus/iio/devices/trigger*/name 2>/dev/null | tr '\n' ' ')"

# mpu6050: on each interrupt inv_mpu6050 reads the interrupt status, FIFO_COUNT (0x72, big-endian)
# and that many bytes from FIFO_R_W (0x74): i2c-stub answers a block read there with the registers
# from 0x74 on, so one sample (accel, gyro: 12 bytes) is written there, and the count says 12. 6.1's
# driver reads the MPU-6050's data-ready bit from register 0x00 (its register map has no interrupt
# status entry), so bit 0 of 0x00 is set, as 0x3A's would be.
put8 0x68 0x72 0
put8 0x68 0x73 12
put8 0x68 0x00 1
put8 0x68 0x3a 1
# lis3dh: STATUS_REG (0x27, read as 0xA7) says x, y and z are ready.
put8 0x18 0xa7 0x07
want="buffer, trigger " minrate=160
measure mpu6050 0x68 0x74 0x7a be 0
measure lis3dh 0x18 0xa8 "" le 4
want="buffer, trigger rideguard (a kernel timer" minrate=160
measure bmi160 0x69 0x12 0x0c le 0
# lsm6dsl: both halves have a FIFO buffer now, but i2c-stub holds no FIFO for it to fill from, so
# the sampler finds it empty and reads the halves' raw channels together.
want="polled: the buffer stayed empty" minrate=
measure lsm6dsl_accel 0x6a 0x28 0x22 le 0 lsm6dsl_gyro
for name in lsm6dsl_accel lsm6dsl_gyro; do
    [ -e "$(iio_dir $name)/buffer/enable" ] || bad "$name: no buffer with an IRQ"
done
# adxl345: made with its firmware node (ACPI ADS0345); 6.1's driver has no buffer and leaves the
# IRQ unused, so it reads the same wired or not: polled, saying why.
want="polled: the adxl345 driver gives no buffer" minrate=
measure adxl345 0x53 0x32 "" le 0

# An MPU-6050 whose driver drops every sample (the data-ready bit it tests is clear): the buffer
# stays empty while the raw channels answer; the sampler must say so and poll them.
put8 0x68 0x00 0
want="polled: the buffer stayed empty" minrate=
measure mpu6050 0x68 0x3b 0x43 be 0
put8 0x68 0x00 1

run_on mpu6050 "buffer, trigger mpu6050-dev" inv-mpu6050-i2c "$matrix"
run_on bmi160 "buffer, trigger rideguard (a kernel timer" bmi160_i2c "$matrix"
run_on lis3dh "buffer, trigger lis3dh-trigger" st-accel-i2c "$matrix"
run_on lsm6dsl_accel "polled: the buffer stayed empty" st_lsm6dsx_i2c "$matrix"
run_on adxl345 "polled: the adxl345 driver gives no buffer" adxl345_i2c
rmmod rideguard-int-wire && ok "rideguard-int-wire unloads, its chips removed" || bad "rmmod rideguard-int-wire"
