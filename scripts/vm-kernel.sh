# SPDX-License-Identifier: Apache-2.0
# Sourced by the VM tests (scripts/vm-test.sh, scripts/vm-systemd-test.sh): Debian's own amd64
# kernel and our test-only modules, built here at test time from Debian's packages. Sets
#   abi      the kernel's ABI name (6.1.0-NN-amd64), the one linux-image-amd64 depends on now;
#   kdir     its cache: image/ (the linux-image package unpacked: boot/vmlinuz-*, lib/modules/*)
#            and source/ (the few files of linux-source that Debian does not build: gpio-sim, the
#            IIO timer trigger with the configfs modules it needs, and the BNO055's driver);
#   vmlinuz  the kernel to boot;
# and defines vm_modules DIR: builds rideguard-imu-sim.ko, rideguard-int-wire.ko, gpio-sim-rg.ko and the
# kernel's industrialio-configfs.ko, industrialio-sw-trigger.ko, iio-trig-hrtimer.ko, bno055.ko and
# bno055_i2c.ko into DIR.
# Downloads are kept under $RIDEGUARD_CACHE (default /var/cache/rideguard)/kernel.

bash scripts/install-deps.sh --vm
# The kernel Debian installs by default on amd64, and the headers to build modules against it.
abi=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/.*Depends: linux-image-\(.*\)$/\1/p' | head -1)
if [ -z "$abi" ]; then
    apt-get update -qq
    abi=$(apt-cache depends linux-image-amd64 | sed -n 's/.*Depends: linux-image-\(.*\)$/\1/p' | head -1)
fi
[ -n "$abi" ] || { echo "vm-kernel: apt knows no linux-image-amd64" >&2; exit 1; }
bash scripts/install-deps.sh "linux-headers-$abi"

# The kernel image and the matching source, downloaded once (apt-get download, not installed).
kversion=$(dpkg-query -W -f='${Version}' "linux-headers-$abi")
kseries=${abi%%-*}                                  # 6.1.0 → the source package is linux-source-6.1
kseries=${kseries%.*}
kdir=${RIDEGUARD_CACHE:-/var/cache/rideguard}/kernel/$abi
# The timer trigger's and the BNO055's sources came with the cache later: a cache without them is fetched again.
if [ ! -e "$kdir/ready" ] || [ ! -e "$kdir/source/drivers/iio/trigger/iio-trig-hrtimer.c" ] || [ ! -e "$kdir/source/drivers/iio/imu/bno055/bno055.c" ]; then
    echo "vm-kernel: fetching linux-image-$abi and linux-source-$kseries $kversion"
    rm -rf "$kdir"
    mkdir -p "$kdir/debs"
    (cd "$kdir/debs" && apt-get download -qq "linux-image-$abi=$kversion" "linux-source-$kseries=$kversion")
    mkdir "$kdir/image" "$kdir/source"
    dpkg-deb -x "$kdir"/debs/linux-image-*.deb "$kdir/image"
    dpkg-deb --fsys-tarfile "$kdir"/debs/linux-source-*.deb | tar -x -C "$kdir/source" --wildcards '*.tar.xz'
    tar -xJf "$kdir"/source/usr/src/linux-source-*.tar.xz -C "$kdir/source" --strip-components=1 \
        --wildcards '*/drivers/gpio/gpio-sim.c' '*/drivers/gpio/gpiolib.h' '*/kernel/irq/irq_sim.c' \
        '*/drivers/iio/industrialio-configfs.c' '*/drivers/iio/industrialio-sw-trigger.c' '*/drivers/iio/trigger/iio-trig-hrtimer.c' \
        '*/drivers/iio/imu/bno055/bno055.c' '*/drivers/iio/imu/bno055/bno055.h' '*/drivers/iio/imu/bno055/bno055_i2c.c'
    rm -rf "$kdir/debs" "$kdir/source/usr"
    # The modules' dependencies, for `modprobe -d "$kdir/image" --show-depends` (the package leaves
    # that to its postinst).
    depmod -b "$kdir/image" "$abi"
    touch "$kdir/ready"
fi
[ -e "$kdir/image/lib/modules/$abi/modules.dep" ] || depmod -b "$kdir/image" "$abi"

# vm_module_files MODULE…: the kernel's files for MODULE… and what they depend on, in load order.
vm_module_files() {
    local m
    for m in "$@"; do
        modprobe -d "$kdir/image" -S "$abi" --show-depends "$m" | sed -n 's/^insmod \([^ ]*\).*/\1/p'
    done | awk '!seen[$0]++'
}
vmlinuz=$kdir/image/boot/vmlinuz-$abi

# Ours, and the kernel's gpio-sim (with irq_sim where the kernel lacks it) and IIO timer trigger
# (with the IIO configfs modules; Debian builds none of them). irq_to_desc is not exported to
# modules: the simulated interrupt is raised through generic_handle_irq instead.
vm_modules() {
    local out=$1
    mkdir -p "$out"
    cp Tests/kernel/Kbuild Tests/kernel/rideguard-imu-sim.c Tests/kernel/rideguard-int-wire.c "$kdir"/source/drivers/gpio/gpio-sim.c \
       "$kdir"/source/drivers/gpio/gpiolib.h "$kdir"/source/kernel/irq/irq_sim.c "$kdir"/source/drivers/iio/industrialio-configfs.c \
       "$kdir"/source/drivers/iio/industrialio-sw-trigger.c "$kdir"/source/drivers/iio/trigger/iio-trig-hrtimer.c \
       "$kdir"/source/drivers/iio/imu/bno055/bno055.c "$kdir"/source/drivers/iio/imu/bno055/bno055.h \
       "$kdir"/source/drivers/iio/imu/bno055/bno055_i2c.c "$out/"
    sed -i 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq(irqnum);/' "$out/irq_sim.c"
    make -s -C "/usr/src/linux-headers-$abi" M="$out" modules 2>&1 | grep -v "Skipping BTF" || true
    local m
    for m in rideguard-imu-sim rideguard-int-wire gpio-sim-rg industrialio-configfs industrialio-sw-trigger iio-trig-hrtimer bno055 bno055_i2c; do
        [ -e "$out/$m.ko" ] || { echo "vm-kernel: building $m.ko failed" >&2; exit 1; }
    done
}
