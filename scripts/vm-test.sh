#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Hardware in the loop on a real kernel: boots Debian's own kernel under qemu-system-x86_64
# (software emulation, no KVM needed) with an initramfs holding the rideguard binary, its libraries,
# busybox, gpio-sim and our test-only IIO IMU (Tests/kernel), and runs Tests/kernel/vm-checks.sh
# inside it: the buzzer on a real GPIO line, a press decoded from the line, doctor on healthy, taken
# and missing lines, a fall played through the kernel's IIO and detected, the chip going away; then
# the IMUs riders buy through Debian's own drivers on i2c-stub, wired without INT and then with it
# (our rideguard-int-wire module gives each chip a data-ready interrupt; Tests/kernel/imu-drivers.sh),
# and with the kernel's timer trigger loaded: values, axes, scale, rate and how each is read, by
# `rideguard record` and by the agent.
#
# The kernel pieces are built here, at test time, from Debian's packages: linux-image (the kernel
# and its IIO/configfs modules), linux-headers (to build against our modules) and linux-source
# (gpio-sim and the IIO timer trigger, which Debian does not build). Nothing kernel-side is
# committed but Tests/kernel.
#
#   scripts/vm-test.sh [BINARY]     default: .build/release/rideguard (built when missing)
#   RIDEGUARD_VM_BREAK=buzzer|button|axes|noint|notimer scripts/vm-test.sh    must fail: shows the checks can
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
binary=${1:-.build/release/rideguard}
started=$(date +%s)

. scripts/vm-kernel.sh
work=$(mktemp -d)
trap '[ -n "${RIDEGUARD_VM_KEEP:-}" ] || rm -rf "$work"' EXIT
vm_modules "$work/modules"

if [ ! -x "$binary" ]; then
    scripts/install-deps.sh
    swift build -c release --product rideguard --static-swift-stdlib
fi

# The initramfs: busybox, the binary with every library it loads, the modules, the trace.
fs="$work/fs"
mkdir -p "$fs"/{bin,usr/bin,modules,feed,etc,proc,sys,dev}
cp /bin/busybox "$fs/bin/busybox"
ln -s busybox "$fs/bin/sh"
cp "$binary" "$fs/usr/bin/rideguard"
# iiod, Debian's own: the network backend's real peer, serving the VM's kernel IIO device.
mkdir -p "$fs/usr/sbin"
cp /usr/sbin/iiod "$fs/usr/sbin/iiod"
# i2cset and i2cget, Debian's: the IMU chips' registers on i2c-stub.
cp /usr/sbin/i2cset /usr/sbin/i2cget "$fs/usr/sbin/"
for program in "$binary" /usr/sbin/iiod /usr/sbin/i2cset /usr/sbin/i2cget; do ldd "$program"; done | grep -o '/[^ ]*' | sort -u | while read -r lib; do
    mkdir -p "$fs$(dirname "$lib")"
    cp -L "$lib" "$fs$lib"
done
cp "$work"/modules/{rideguard-imu-sim,rideguard-int-wire,gpio-sim-rg,industrialio-configfs,industrialio-sw-trigger,iio-trig-hrtimer,bno055,bno055_i2c}.ko "$fs/modules/"
for m in fs/configfs/configfs drivers/iio/industrialio drivers/iio/buffer/kfifo_buf; do
    cp "$kdir/image/lib/modules/$abi/kernel/$m.ko" "$fs/modules/"
done
# The IMUs riders buy, through Debian's own drivers on i2c-stub (Tests/kernel/imu-drivers.sh).
vm_module_files i2c-stub i2c-dev inv-mpu6050-i2c bmi160_i2c st_accel_i2c st_lsm6dsx_i2c adxl345_i2c | while read -r ko; do
    [ -e "$fs/modules/$(basename "$ko")" ] || cp "$ko" "$fs/modules/"
    basename "$ko"
done | grep -v '^\(configfs\|industrialio\|kfifo_buf\)\.ko$' > "$fs/modules/imu-order"
install -m 0644 Tests/kernel/imu-drivers.sh "$fs/imu-drivers.sh"
# The kernel's own module index, as doctor reads it to tell whether the kernel has a chip's driver,
# without the BMI160's lines: a kernel that lacks its driver, as Raspberry Pi OS's does.
mkdir -p "$fs/lib/modules/$abi"
grep -v bmi160 "$kdir/image/lib/modules/$abi/modules.alias" > "$fs/lib/modules/$abi/modules.alias"
trace=Tests/Fixtures/example-lowside.csv
python3 Tests/kernel/trace-feed.py "$trace" "$fs/feed/ride.bin" > "$fs/feed/rate"
python3 Tests/kernel/trace-feed.py "$trace" "$fs/feed/rest.bin" --rest 400 > /dev/null
printf 'root:x:0:0:root:/:/bin/sh\n' > "$fs/etc/passwd"
printf 'root:x:0:\n' > "$fs/etc/group"
install -m 0755 Tests/kernel/vm-checks.sh "$fs/init"
(cd "$fs" && find . | cpio -o -H newc --quiet) > "$work/initrd.cpio"
# The ADXL345 as a PC's firmware declares it (ACPI id ADS0345), an extra SSDT for qemu: 6.1's
# adxl345 driver takes the chip's type only from firmware (Tests/kernel/adxl345.asl).
iasl -p "$work/adxl345" Tests/kernel/adxl345.asl > "$work/iasl.log" 2>&1 || { cat "$work/iasl.log" >&2; exit 1; }
echo "vm-test: kernel $abi, initramfs $(du -m "$work/initrd.cpio" | cut -f1) MB, prepared in $(( $(date +%s) - started )) s"

# Boot. TCG: about 10 s to userspace here; the checks take about 5 minutes.
log="$work/console.log"
append="console=ttyS0 panic=-1 quiet loglevel=4"
[ -n "${RIDEGUARD_VM_BREAK:-}" ] && append+=" RIDEGUARD_VM_BREAK=$RIDEGUARD_VM_BREAK"
timeout 900 qemu-system-x86_64 -accel tcg -cpu max -smp 2 -m 1536 -nographic -no-reboot \
    -kernel "$vmlinuz" -initrd "$work/initrd.cpio" -append "$append" -acpitable file="$work/adxl345.aml" \
    | tee "$log" | grep --line-buffered '^vm-test:' || true
summary=$(tr -d '\r' < "$log" | grep -a '^vm-test: [0-9]* passed, [0-9]* failed' | tail -1 || true)
if [ -z "$summary" ] || ! grep -q ', 0 failed' <<<"$summary"; then
    echo "vm-test: FAILED (${summary:-the VM never reported}); the console:" >&2
    tr -d '\r' < "$log" | tail -150 >&2
    exit 1
fi
echo "vm-test: passed in $(( $(date +%s) - started )) s"
echo "${summary#vm-test: }"
