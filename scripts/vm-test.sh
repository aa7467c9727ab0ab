#!/usr/bin/env bash
# Hardware in the loop on a real kernel: boots Debian's own kernel under qemu-system-x86_64
# (software emulation, no KVM needed) with an initramfs holding the rideguard binary, its libraries,
# busybox, gpio-sim and our test-only IIO IMU (Tests/kernel), and runs Tests/kernel/vm-checks.sh
# inside it: the buzzer on a real GPIO line, a press decoded from the line, doctor on healthy, taken
# and missing lines, a fall played through the kernel's IIO and detected, the chip going away.
#
# The kernel pieces are built here, at test time, from Debian's packages: linux-image (the kernel
# and its IIO/configfs modules), linux-headers (to build against) and linux-source (gpio-sim, which
# Debian does not build). Nothing kernel-side is committed but Tests/kernel.
#
#   scripts/vm-test.sh [BINARY]     default: .build/release/rideguard (built when missing)
#   RIDEGUARD_VM_BREAK=buzzer|button scripts/vm-test.sh    must fail: shows the checks can
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
binary=${1:-.build/release/rideguard}
cache=${RIDEGUARD_CACHE:-/var/cache/rideguard}/kernel
started=$(date +%s)

bash scripts/install-deps.sh --vm
# The kernel Debian installs by default on amd64, and the headers to build modules against it.
abi=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/.*Depends: linux-image-\(.*\)$/\1/p' | head -1)
if [ -z "$abi" ]; then
    apt-get update -qq
    abi=$(apt-cache depends linux-image-amd64 | sed -n 's/.*Depends: linux-image-\(.*\)$/\1/p' | head -1)
fi
[ -n "$abi" ] || { echo "vm-test: apt knows no linux-image-amd64" >&2; exit 1; }
bash scripts/install-deps.sh "linux-headers-$abi"

# The kernel image and the matching source, downloaded once (apt-get download, not installed).
version=$(dpkg-query -W -f='${Version}' "linux-headers-$abi")
series=${abi%%-*}                                  # 6.1.0 → the source package is linux-source-6.1
series=${series%.*}
kdir="$cache/$abi"
if [ ! -e "$kdir/ready" ]; then
    echo "vm-test: fetching linux-image-$abi and linux-source-$series $version"
    rm -rf "$kdir"
    mkdir -p "$kdir/debs"
    (cd "$kdir/debs" && apt-get download -qq "linux-image-$abi=$version" "linux-source-$series=$version")
    mkdir "$kdir/image" "$kdir/source"
    dpkg-deb -x "$kdir"/debs/linux-image-*.deb "$kdir/image"
    dpkg-deb --fsys-tarfile "$kdir"/debs/linux-source-*.deb | tar -x -C "$kdir/source" --wildcards '*.tar.xz'
    tar -xJf "$kdir"/source/usr/src/linux-source-*.tar.xz -C "$kdir/source" --strip-components=1 \
        --wildcards '*/drivers/gpio/gpio-sim.c' '*/drivers/gpio/gpiolib.h' '*/kernel/irq/irq_sim.c'
    rm -rf "$kdir/debs" "$kdir/source/usr"
    touch "$kdir/ready"
fi

work=$(mktemp -d)
trap '[ -n "${RIDEGUARD_VM_KEEP:-}" ] || rm -rf "$work"' EXIT

# The modules: ours, and the kernel's gpio-sim (with irq_sim where the kernel lacks it). irq_to_desc
# is not exported to modules: the simulated interrupt is raised through generic_handle_irq instead.
mkdir "$work/modules"
cp Tests/kernel/Kbuild Tests/kernel/rideguard-imu-sim.c "$kdir"/source/drivers/gpio/gpio-sim.c \
   "$kdir"/source/drivers/gpio/gpiolib.h "$kdir"/source/kernel/irq/irq_sim.c "$work/modules/"
sed -i 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq(irqnum);/' "$work/modules/irq_sim.c"
make -s -C "/usr/src/linux-headers-$abi" M="$work/modules" modules 2>&1 | grep -v "Skipping BTF" || true
for m in rideguard-imu-sim gpio-sim-rg; do
    [ -e "$work/modules/$m.ko" ] || { echo "vm-test: building $m.ko failed" >&2; exit 1; }
done

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
for program in "$binary" /usr/sbin/iiod; do ldd "$program"; done | grep -o '/[^ ]*' | sort -u | while read -r lib; do
    mkdir -p "$fs$(dirname "$lib")"
    cp -L "$lib" "$fs$lib"
done
cp "$work"/modules/{rideguard-imu-sim,gpio-sim-rg}.ko "$fs/modules/"
for m in fs/configfs/configfs drivers/iio/industrialio drivers/iio/buffer/kfifo_buf; do
    cp "$kdir/image/lib/modules/$abi/kernel/$m.ko" "$fs/modules/"
done
trace=Tests/Fixtures/example-lowside.csv
python3 Tests/kernel/trace-feed.py "$trace" "$fs/feed/ride.bin" > "$fs/feed/rate"
python3 Tests/kernel/trace-feed.py "$trace" "$fs/feed/rest.bin" --rest 400 > /dev/null
printf 'root:x:0:0:root:/:/bin/sh\n' > "$fs/etc/passwd"
printf 'root:x:0:\n' > "$fs/etc/group"
install -m 0755 Tests/kernel/vm-checks.sh "$fs/init"
(cd "$fs" && find . | cpio -o -H newc --quiet) > "$work/initrd.cpio"
echo "vm-test: kernel $abi, initramfs $(du -m "$work/initrd.cpio" | cut -f1) MB, prepared in $(( $(date +%s) - started )) s"

# Boot. TCG: about 10 s to userspace here; the checks take about 2 minutes.
log="$work/console.log"
append="console=ttyS0 panic=-1 quiet loglevel=4"
[ -n "${RIDEGUARD_VM_BREAK:-}" ] && append+=" RIDEGUARD_VM_BREAK=$RIDEGUARD_VM_BREAK"
timeout 900 qemu-system-x86_64 -accel tcg -cpu max -smp 2 -m 1536 -nographic -no-reboot \
    -kernel "$kdir/image/boot/vmlinuz-$abi" -initrd "$work/initrd.cpio" -append "$append" \
    | tee "$log" | grep --line-buffered '^vm-test:' || true
summary=$(tr -d '\r' < "$log" | grep -a '^vm-test: [0-9]* passed, [0-9]* failed' | tail -1 || true)
if [ -z "$summary" ] || ! grep -q ', 0 failed' <<<"$summary"; then
    echo "vm-test: FAILED (${summary:-the VM never reported}); the console:" >&2
    tr -d '\r' < "$log" | tail -150 >&2
    exit 1
fi
echo "vm-test: passed in $(( $(date +%s) - started )) s"
echo "${summary#vm-test: }"
