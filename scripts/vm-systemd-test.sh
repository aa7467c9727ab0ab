#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The installed package under the real systemd as PID 1, booted as a Pi boots it: a Debian bookworm
# amd64 root (debootstrap: systemd, udev, the libraries the package depends on) on a virtio disk,
# Debian's own kernel under qemu (TCG, no KVM), gpio-sim lines named as the Pi's and our test IIO
# IMU (Tests/kernel). Tests/kernel/systemd-checks.sh runs inside, as a unit of its own, in three
# boots (each a new qemu on the same disk; a reboot inside ends qemu, and the next boot begins):
#   install    a kernel without IIO (module_blacklist=industrialio): the package installed with
#              `apt-get install ./rideguard_*.deb` under systemd; `systemctl start` returns; the
#              agent runs and says why it does not protect; simulated hardware runs; both units
#              pass `systemd-analyze verify` and keep their exposure (≤ 2.0 agent, ≤ 1.5 page);
#   firstboot  the first boot after install with no contact: the boot completes, the agent runs,
#              sounds the fault pattern and says why; its IMU's driver loaded later is found with no
#              restart; the real GPIO lines and IIO device through the hardened unit; the watchdog,
#              kill -9; the page under its unit; a crash played through the IMU, then a reboot
#              during its countdown;
#   upgraded   the countdown resumed after the reboot; apt upgrades N−1 to N during it; the alert
#              goes out at the deadline, once.
# N is the .deb given (default: build/rideguard_<version>_amd64.deb, made by `make deb` when
# missing); N−1 is the same package as version <version>~previous (repacked: the upgrade under
# test is systemd's and the maintainer scripts', the data's is scripts/check-repo.sh's).
# The root is cached in $RIDEGUARD_CACHE (default /var/cache/rideguard); nothing is committed but
# our sources. Run as root.
#   scripts/vm-systemd-test.sh [DEB]
#   RIDEGUARD_VM_UNIT=FILE scripts/vm-systemd-test.sh    the agent's unit replaced by FILE (the
#                                                       package's own otherwise): an older unit fails
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
[ "$(id -u)" -eq 0 ] || { echo "vm-systemd-test: run as root (debootstrap, chroot)" >&2; exit 1; }
mirror=${RIDEGUARD_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${RIDEGUARD_CACHE:-/var/cache/rideguard}
version=$(sed -n 's/.*static let version = "\(.*\)"/\1/p' Sources/RideGuardCommands/RideGuard.swift)
deb=${1:-build/rideguard_${version}_amd64.deb}
[ -e "$deb" ] || make deb
bash scripts/install-deps.sh --cross e2fsprogs

. scripts/vm-kernel.sh
work=$(mktemp -d /tmp/rideguard-vm-systemd.XXXXXX)
trap '[ -n "${RIDEGUARD_VM_KEEP:-}" ] || rm -rf "$work"' EXIT
vm_modules "$work/modules"

# The root: what a minimal Debian with systemd has, and what the package depends on and recommends
# (read off the .deb: apt installs both, and the VM has no network), made once per package list
# and kept as a tar.
depends=$(dpkg-deb -f "$deb" Depends Recommends | sed 's/^[A-Za-z]*: //' | tr ',' '\n' | sed 's/^ *//; s/[ (].*//' | grep . | sort -u | tr '\n' ',')
include="systemd,systemd-sysv,udev,kmod,dbus,procps,curl,${depends%,}"
tarball=$cache/systemd-root/bookworm-$(echo "$include" | md5sum | cut -c1-12).tar
if [ ! -e "$tarball" ]; then
    echo "vm-systemd-test: debootstrap bookworm amd64 with $include"
    mkdir -p "$cache/systemd-root"
    rm -f "$cache"/systemd-root/*.tar
    fresh="$work/fresh"
    debootstrap --variant=minbase --include="$include" bookworm "$fresh" "$mirror" > "$work/debootstrap.log" 2>&1 \
        || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
    rm -rf "$fresh"/var/cache/apt/archives/*.deb
    tar -C "$fresh" -cf "$tarball.part" .
    mv "$tarball.part" "$tarball"
    rm -rf "$fresh"
fi
root="$work/root"
mkdir "$root"
tar -C "$root" -xf "$tarball"

# The kernel's modules the boot and the checks use (with what they depend on), and ours.
modules=(virtio_pci virtio_blk ext4 configfs industrialio kfifo_buf)
mdir=$root/lib/modules/$abi
mkdir -p "$mdir/extra"
cp "$kdir"/image/lib/modules/"$abi"/modules.{order,builtin,builtin.modinfo} "$mdir/"
vm_module_files "${modules[@]}" | while read -r ko; do
    install -D -m 0644 "$ko" "$root${ko#"$kdir/image"}"
done
cp "$work"/modules/{rideguard-imu-sim,gpio-sim-rg,industrialio-configfs,industrialio-sw-trigger,iio-trig-hrtimer}.ko "$mdir/extra/"
depmod -b "$root" "$abi"

# The machine: a name, an id, the packages to install, the checks as a unit of their own.
echo rideguard-pi > "$root/etc/hostname"
systemd-machine-id-setup --root="$root" > /dev/null
mkdir -p "$root/root/debs" "$root/usr/local/lib/rideguard-vm"
cp "$deb" "$root/root/debs/rideguard_${version}_amd64.deb"
previous="$work/previous"
dpkg-deb -R "$deb" "$previous"
sed -i "s/^Version: .*/Version: $version~previous/" "$previous/DEBIAN/control"
if [ -n "${RIDEGUARD_VM_UNIT:-}" ]; then
    cp "$RIDEGUARD_VM_UNIT" "$previous/usr/lib/systemd/system/rideguard.service"
    sed -i '/usr\/lib\/systemd\/system\/rideguard.service/d' "$previous/DEBIAN/md5sums"
fi
dpkg-deb --root-owner-group -Zxz -b "$previous" "$root/root/debs/rideguard_${version}~previous_amd64.deb" > /dev/null
install -m 0755 Tests/kernel/systemd-checks.sh "$root/usr/local/lib/rideguard-vm/checks.sh"
trace=Tests/Fixtures/example-lowside.csv
python3 Tests/kernel/trace-feed.py "$trace" "$root/usr/local/lib/rideguard-vm/ride.bin" > "$root/usr/local/lib/rideguard-vm/rate"
python3 Tests/kernel/trace-feed.py "$trace" "$root/usr/local/lib/rideguard-vm/rest.bin" --rest 400 > /dev/null
cat > "$root/etc/systemd/system/rideguard-vm-checks.service" <<'UNIT'
[Unit]
Description=RideGuard's checks under systemd (scripts/vm-systemd-test.sh)
After=basic.target
[Service]
Type=simple
ExecStart=/usr/local/lib/rideguard-vm/checks.sh
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS1
[Install]
WantedBy=multi-user.target
UNIT
# The Pi's GPIO chip is there at every boot, before the agent: a gpio-sim chip with its line names.
cat > "$root/etc/systemd/system/rideguard-vm-gpio.service" <<'UNIT'
[Unit]
Description=A gpio-sim chip named as the Pi's lines (scripts/vm-systemd-test.sh)
DefaultDependencies=no
After=sys-kernel-config.mount systemd-modules-load.service
Before=rideguard.service sysinit.target
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/lib/rideguard-vm/checks.sh gpio
[Install]
WantedBy=sysinit.target
UNIT
mkdir -p "$root/etc/systemd/system/multi-user.target.wants" "$root/etc/systemd/system/sysinit.target.wants"
ln -s ../rideguard-vm-checks.service "$root/etc/systemd/system/multi-user.target.wants/"
ln -s ../rideguard-vm-gpio.service "$root/etc/systemd/system/sysinit.target.wants/"
# No login prompt on the console the kernel writes to.
ln -sf /dev/null "$root/etc/systemd/system/serial-getty@ttyS0.service"

# The disk, and an initramfs that mounts it and hands over to systemd.
disk="$work/disk.img"
mkfs.ext4 -q -L rideguard-root -d "$root" "$disk" 1536M
rm -rf "$root"
fs="$work/initramfs"
mkdir -p "$fs"/{bin,proc,sys,dev,newroot,modules}
cp /bin/busybox "$fs/bin/busybox"
ln -s busybox "$fs/bin/sh"
vm_module_files virtio_pci virtio_blk ext4 > "$work/initramfs-modules"
while read -r ko; do cp "$ko" "$fs/modules/"; echo "$(basename "$ko")"; done < "$work/initramfs-modules" > "$fs/modules/order"
cat > "$fs/init" <<'INIT'
#!/bin/sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
while read -r m; do insmod "/modules/$m" 2>/dev/null; done < /modules/order
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
mount -t ext4 -o rw /dev/vda /newroot || { echo "initramfs: cannot mount /dev/vda"; poweroff -f; }
umount /proc /sys
mount --move /dev /newroot/dev
exec switch_root /newroot /sbin/init
INIT
chmod 0755 "$fs/init"
(cd "$fs" && find . | cpio -o -H newc --quiet) > "$work/initrd.cpio"
echo "vm-systemd-test: kernel $abi, root $(du -m "$disk" | cut -f1) MB, prepared in $(( $(date +%s) - started )) s"

# The boots, each until the VM powers off or reboots (-no-reboot: a reboot ends qemu too).
passed=0
failed=0
for phase in install firstboot upgraded; do
    append="console=ttyS0 quiet loglevel=4 rideguard.phase=$phase"
    [ "$phase" = install ] && append+=" module_blacklist=industrialio"
    boot_started=$(date +%s)
    timeout 900 qemu-system-x86_64 -accel tcg -cpu max -smp 2 -m 2048 -display none -no-reboot \
        -kernel "$vmlinuz" -initrd "$work/initrd.cpio" -append "$append" \
        -drive file="$disk",if=virtio,format=raw \
        -serial file:"$work/console-$phase.log" -serial file:"$work/checks-$phase.log" || true
    tr -d '\r' < "$work/checks-$phase.log" | grep -a '^vm-systemd:' || true
    summary=$(tr -d '\r' < "$work/checks-$phase.log" | grep -a '^vm-systemd: [0-9]* passed, [0-9]* failed' | tail -1 || true)
    echo "vm-systemd-test: boot '$phase' took $(( $(date +%s) - boot_started )) s"
    if [ -z "$summary" ]; then
        echo "vm-systemd-test: the boot '$phase' never reported; its console:" >&2
        tr -d '\r' < "$work/console-$phase.log" | tail -80 >&2
        failed=$((failed + 1))
        break
    fi
    read -r p f <<<"$(sed 's/^vm-systemd: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/' <<<"$summary")"
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$f" -gt 0 ]; then
        echo "vm-systemd-test: the console of the boot '$phase':" >&2
        tr -d '\r' < "$work/console-$phase.log" | tail -40 >&2
    fi
done
echo "vm-systemd-test: done in $(( $(date +%s) - started )) s"
echo "vm-systemd-test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
