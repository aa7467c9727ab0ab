#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The installed package under the real systemd as PID 1, booted as a Pi boots it: a Debian bookworm
# root of the package's architecture (amd64, or arm64 as on a Pi: RIDEGUARD_VM_ARCH; debootstrap:
# systemd, udev, the libraries the package depends on) on a virtio disk, Debian's own kernel for it
# under qemu (TCG, no KVM: qemu-system-x86_64, or qemu-system-aarch64's `virt` with a Cortex-A72),
# gpio-sim lines named as the Pi's, our test IIO IMU and an MPU-6050 on i2c-stub through the
# kernel's inv_mpu6050 (Tests/kernel), the modem a USB serial adapter whose other end is the tests'
# fake modem on this machine. Tests/kernel/systemd-checks.sh runs inside, as a unit of its
# own, in three boots (each a new qemu on the same disk; a reboot inside ends qemu, and the next
# boot begins):
#   install    a kernel without IIO (module_blacklist=industrialio): the package installed with
#              `apt-get install ./rideguard_*.deb` under systemd; `systemctl start` returns; the
#              agent runs and says why it does not protect; simulated hardware runs; both units
#              pass `systemd-analyze verify` and keep their exposure (≤ 2.0 agent, ≤ 1.5 page);
#   firstboot  the first boot after install with no contact: the boot completes, the agent runs,
#              sounds the fault pattern and says why; its IMU's driver loaded later is found with no
#              restart; the real GPIO lines and IIO device through the hardened unit; the watchdog,
#              kill -9; the page under its unit; a crash played through the IMU, then a reboot
#              during its countdown;
#   upgraded   the countdown resumed after the reboot; apt upgrades N−1 to N during it (from the
#              signed repository RIDEGUARD_VM_REPO, as the installer's guide adds it, where given;
#              else the .deb); the alert goes out at the deadline, once, through the modem; then the
#              MPU-6050 on i2c-stub read polled, then with its INT wired (buffer, the driver's
#              trigger), its values checked, and the agent armed on it under its unit each way.
# N is the .deb given (default: build/rideguard_<version>_amd64.deb, made by `make deb` when
# missing; for arm64 build/rideguard_<version>+deb12_arm64.deb, made by `make repo`); N−1 is the
# same package as version <version>~previous (repacked: the upgrade under test is systemd's and the
# maintainer scripts', the data's is scripts/check-repo.sh's).
# The root is cached in $RIDEGUARD_CACHE (default /var/cache/rideguard); nothing is committed but
# our sources. Run as root.
#   scripts/vm-systemd-test.sh [DEB]
#   RIDEGUARD_VM_ARCH=arm64 RIDEGUARD_VM_REPO=build/repo/public scripts/vm-systemd-test.sh
#                                                       the Pi's architecture, N from the repository
#   RIDEGUARD_VM_UNIT=FILE scripts/vm-systemd-test.sh    the agent's unit replaced by FILE (the
#                                                       package's own otherwise): an older unit fails
#   RIDEGUARD_VM_BREAK=axes scripts/vm-systemd-test.sh   the MPU-6050's x and y written swapped: fails
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
[ "$(id -u)" -eq 0 ] || { echo "vm-systemd-test: run as root (debootstrap, chroot)" >&2; exit 1; }
mirror=${RIDEGUARD_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${RIDEGUARD_CACHE:-/var/cache/rideguard}
version=$(sed -n 's/.*static let version = "\(.*\)"/\1/p' Sources/RideGuardCommands/RideGuard.swift)
bash scripts/install-deps.sh --cross e2fsprogs

. scripts/vm-kernel.sh
if [ "$vm_arch" = "$(dpkg --print-architecture)" ]; then
    deb=${1:-build/rideguard_${version}_${vm_arch}.deb}
    [ -e "$deb" ] || make deb
else
    deb=${1:-build/rideguard_${version}+deb12_${vm_arch}.deb}
    [ -e "$deb" ] || bash scripts/build-package.sh bookworm "$vm_arch"
    # The root's programs run through qemu-user while it is made: registered with the kernel
    # where nothing did yet (F: the interpreter is opened now, so it also works in the chroot).
    if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
        [ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
        sed -n '/^:/p' /usr/lib/binfmt.d/qemu-aarch64.conf > /proc/sys/fs/binfmt_misc/register
    fi
fi
[ "$(dpkg-deb -f "$deb" Architecture)" = "$vm_arch" ] || { echo "vm-systemd-test: $deb is not for $vm_arch" >&2; exit 1; }
# N's version as the package has it (<version>+deb12 from make repo); N−1 sorts before it.
package_version=$(dpkg-deb -f "$deb" Version)
previous_version=$version~previous${package_version#"$version"}
work=$(mktemp -d /tmp/rideguard-vm-systemd.XXXXXX)
trap '[ -n "${RIDEGUARD_VM_KEEP:-}" ] || rm -rf "$work"' EXIT
vm_modules "$work/modules"

# The root: what a minimal Debian with systemd has, and what the package depends on and recommends
# (read off the .deb: apt installs both, and the VM has no network), made once per package list
# and kept as a tar.
depends=$(dpkg-deb -f "$deb" Depends Recommends | sed 's/^[A-Za-z]*: //' | tr ',' '\n' | sed 's/^ *//; s/[ (].*//' | grep . | sort -u | tr '\n' ',')
include="systemd,systemd-sysv,udev,kmod,dbus,procps,curl,i2c-tools,${depends%,}"
tarball=$cache/systemd-root/bookworm-$vm_arch-$(echo "$include" | md5sum | cut -c1-12).tar
if [ ! -e "$tarball" ]; then
    echo "vm-systemd-test: debootstrap bookworm $vm_arch with $include"
    mkdir -p "$cache/systemd-root"
    rm -f "$cache"/systemd-root/bookworm-"$vm_arch"-*.tar
    fresh="$work/fresh"
    debootstrap --arch="$vm_arch" --variant=minbase --include="$include" bookworm "$fresh" "$mirror" > "$work/debootstrap.log" 2>&1 \
        || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
    rm -rf "$fresh"/var/cache/apt/archives/*.deb
    tar -C "$fresh" -cf "$tarball.part" .
    mv "$tarball.part" "$tarball"
    rm -rf "$fresh"
fi
root="$work/root"
mkdir "$root"
tar -C "$root" -xf "$tarball"

# The kernel's modules the boot and the checks use (with what they depend on), and ours: the
# MPU-6050's driver and i2c-stub (built here where the kernel lacks it), the modem's USB serial
# adapter (xHCI, ftdi_sio), the checks' second console on arm64 (virtio_console: its `virt`
# machine has one serial port).
modules=(virtio_pci virtio_blk ext4 configfs industrialio kfifo_buf i2c-dev inv-mpu6050-i2c xhci-pci usbserial ftdi_sio)
[ -e "$work/modules/i2c-stub.ko" ] || modules+=(i2c-stub)
[ "$vm_arch" = arm64 ] && modules+=(virtio_console)
mdir=$root/lib/modules/$abi
mkdir -p "$mdir/extra"
cp "$kdir"/image/lib/modules/"$abi"/modules.{order,builtin,builtin.modinfo} "$mdir/"
vm_module_files "${modules[@]}" | while read -r ko; do
    install -D -m 0644 "$ko" "$root${ko#"$kdir/image"}"
done
cp "$work"/modules/{rideguard-imu-sim,rideguard-int-wire,gpio-sim-rg,industrialio-configfs,industrialio-sw-trigger,iio-trig-hrtimer}.ko "$mdir/extra/"
[ -e "$work/modules/i2c-stub.ko" ] && cp "$work/modules/i2c-stub.ko" "$mdir/extra/"
depmod -b "$root" "$abi"

# The machine: a name, an id, the packages to install, the checks as a unit of their own.
echo rideguard-pi > "$root/etc/hostname"
systemd-machine-id-setup --root="$root" > /dev/null
mkdir -p "$root/root/debs" "$root/usr/local/lib/rideguard-vm"
cp "$deb" "$root/root/debs/rideguard_${package_version}_${vm_arch}.deb"
previous="$work/previous"
dpkg-deb -R "$deb" "$previous"
sed -i "s/^Version: .*/Version: $previous_version/" "$previous/DEBIAN/control"
if [ -n "${RIDEGUARD_VM_UNIT:-}" ]; then
    cp "$RIDEGUARD_VM_UNIT" "$previous/usr/lib/systemd/system/rideguard.service"
    sed -i '/usr\/lib\/systemd\/system\/rideguard.service/d' "$previous/DEBIAN/md5sums"
fi
dpkg-deb --root-owner-group -Zxz -b "$previous" "$root/root/debs/rideguard_${previous_version}_${vm_arch}.deb" > /dev/null
# What the checks install: N−1 from its file, N from the file or, where given, from the signed
# repository, added as the installer's guide adds it (its key in /etc/apt/keyrings, a .sources
# file), served from a folder: the VM has no network, and no other source.
cat > "$root/usr/local/lib/rideguard-vm/packages" <<PACKAGES
version=$package_version
previous_version=$previous_version
deb=/root/debs/rideguard_${package_version}_${vm_arch}.deb
previous_deb=/root/debs/rideguard_${previous_version}_${vm_arch}.deb
PACKAGES
: > "$root/etc/apt/sources.list"
rm -f "$root"/etc/apt/sources.list.d/*
if [ -n "${RIDEGUARD_VM_REPO:-}" ]; then
    mkdir -p "$root/srv/rideguard" "$root/etc/apt/keyrings"
    cp -a "$RIDEGUARD_VM_REPO"/. "$root/srv/rideguard/"
    cp "$RIDEGUARD_VM_REPO/rideguard-archive-keyring.gpg" "$root/etc/apt/keyrings/"
    printf 'Types: deb\nURIs: file:/srv/rideguard\nSuites: bookworm\nComponents: main\nSigned-By: /etc/apt/keyrings/rideguard-archive-keyring.gpg\n' \
        > "$root/usr/local/lib/rideguard-vm/rideguard.sources"
fi
install -m 0755 Tests/kernel/systemd-checks.sh "$root/usr/local/lib/rideguard-vm/checks.sh"
trace=Tests/Fixtures/example-lowside.csv
python3 Tests/kernel/trace-feed.py "$trace" "$root/usr/local/lib/rideguard-vm/ride.bin" > "$root/usr/local/lib/rideguard-vm/rate"
python3 Tests/kernel/trace-feed.py "$trace" "$root/usr/local/lib/rideguard-vm/rest.bin" --rest 400 > /dev/null
# The checks' own console: the second serial port (amd64), the virtio console (arm64).
if [ "$vm_arch" = arm64 ]; then console=ttyAMA0 checks_tty=hvc0; else console=ttyS0 checks_tty=ttyS1; fi
cat > "$root/etc/systemd/system/rideguard-vm-checks.service" <<UNIT
[Unit]
Description=RideGuard's checks under systemd (scripts/vm-systemd-test.sh)
After=basic.target
[Service]
Type=simple
ExecStart=/usr/local/lib/rideguard-vm/checks.sh
StandardOutput=tty
StandardError=tty
TTYPath=/dev/$checks_tty
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
# No login prompt on the consoles.
for tty in "$console" "$checks_tty"; do ln -sf /dev/null "$root/etc/systemd/system/serial-getty@$tty.service"; done

# The disk, and an initramfs that mounts it and hands over to systemd.
disk="$work/disk.img"
mkfs.ext4 -q -L rideguard-root -d "$root" "$disk" 1536M
rm -rf "$root"
fs="$work/initramfs"
mkdir -p "$fs"/{bin,proc,sys,dev,newroot,modules}
cp "$busybox" "$fs/bin/busybox"
ln -s busybox "$fs/bin/sh"
# On arm64 the checks' console too (virtio_console): its /dev/hvc0 is there before systemd starts
# the unit that writes to it.
boot_modules=(virtio_pci virtio_blk ext4)
[ "$vm_arch" = arm64 ] && boot_modules+=(virtio_console)
vm_module_files "${boot_modules[@]}" > "$work/initramfs-modules"
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
echo "vm-systemd-test: $vm_arch, kernel $abi, root $(du -m "$disk" | cut -f1) MB, prepared in $(( $(date +%s) - started )) s"

# The modem: the tests' fake modem (a SIM ready, the network at home) on a pseudo-terminal here,
# which qemu gives the guest as a USB serial adapter (its usb-serial: an FTDI FT232, /dev/ttyUSB0
# through Debian's ftdi_sio), as a USB modem's AT port. It lives across the boots and writes down
# every SMS the agent hands it.
swift build --product rideguard-fake-modem > "$work/fake-modem-build.log" 2>&1 || { tail -20 "$work/fake-modem-build.log" >&2; exit 1; }
"$(swift build --show-bin-path)/rideguard-fake-modem" "$work/modem" > "$work/sms.log" 2> "$work/fake-modem.log" &
fake_modem=$!
trap 'kill $fake_modem 2>/dev/null; [ -n "${RIDEGUARD_VM_KEEP:-}" ] || rm -rf "$work"' EXIT
for _ in $(seq 100); do [ -L "$work/modem" ] && break; sleep 0.1; done
modem_tty=$(readlink "$work/modem") || { echo "vm-systemd-test: the fake modem did not start: $(cat "$work/fake-modem.log")" >&2; exit 1; }

# The boots, each until the VM powers off or reboots (-no-reboot: a reboot ends qemu too).
passed=0
failed=0
for phase in install firstboot upgraded; do
    append="console=$console quiet loglevel=4 rideguard.phase=$phase rideguard.tty=$checks_tty rideguard.break=${RIDEGUARD_VM_BREAK:-none}"
    [ "$phase" = install ] && append+=" module_blacklist=industrialio"
    boot_started=$(date +%s)
    if [ "$vm_arch" = arm64 ]; then
        machine=(qemu-system-aarch64 -machine virt -cpu cortex-a72
                 -device virtio-serial-pci -chardev file,id=checks,path="$work/checks-$phase.log" -device virtconsole,chardev=checks)
    else
        machine=(qemu-system-x86_64 -cpu max -serial file:"$work/checks-$phase.log")
    fi
    # The console first: the first serial port is the kernel's.
    timeout 900 "${machine[0]}" -accel tcg -smp 2 -m 2048 -display none -no-reboot \
        -serial file:"$work/console-$phase.log" "${machine[@]:1}" \
        -kernel "$vmlinuz" -initrd "$work/initrd.cpio" -append "$append" \
        -drive file="$disk",if=virtio,format=raw \
        -device qemu-xhci -chardev serial,id=modem,path="$modem_tty" -device usb-serial,chardev=modem || true
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
# What the modem was handed, seen from its side: the contact's request to confirm, then the
# alert, once, with the rider's message and where the crash was, then the rider's all clear.
alerts() { grep -c "^sms to=+33612345678 parts=[0-9]* text=.*I may have crashed. Please call me." "$work/sms.log"; }
sms_check() {
    if eval "$2"; then
        echo "vm-systemd: ok: $1"
        passed=$((passed + 1))
    else
        echo "vm-systemd: FAILED: $1; the modem was handed: $(cut -c1-160 "$work/sms.log")" >&2
        failed=$((failed + 1))
    fi
}
sms_check "the fake modem on the host was asked to send the contact's request to confirm" 'grep -q "^sms to=+33612345678 parts=[0-9]* text=.*emergency contact.*Reply OK to confirm" "$work/sms.log"'
sms_check "the alert reached the fake modem on the host once, with the rider's message and the crash's place" \
    '[ "$(alerts)" = 1 ] && grep "I may have crashed" "$work/sms.log" | grep -q "48\.8583"'
sms_check "then the contact was told the rider had cancelled it" 'grep -A100 "I may have crashed" "$work/sms.log" | grep -q "^sms to=+33612345678 parts=[0-9]* text=.*cancelled the alert"'
echo "vm-systemd-test: done in $(( $(date +%s) - started )) s"
echo "vm-systemd-test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
