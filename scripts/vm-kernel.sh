# SPDX-License-Identifier: Apache-2.0
# Sourced by the VM tests (scripts/vm-test.sh, scripts/vm-systemd-test.sh): Debian's own kernel for
# $vm_arch (RIDEGUARD_VM_ARCH: amd64, the default, or arm64, the Pi's) and our test-only modules,
# built here at test time from Debian's packages. Sets
#   vm_arch  amd64 or arm64;
#   abi      the kernel's ABI name (6.1.0-NN-amd64), the one linux-image-<arch> depends on now;
#   kdir     its cache: image/ (the linux-image package unpacked: boot/vmlinuz-*, lib/modules/*),
#            source/ (the few files of linux-source that Debian does not build: gpio-sim, the IIO
#            timer trigger with the configfs modules it needs, the BNO055's driver, and i2c-stub,
#            which Debian's arm64 kernel lacks) and, for arm64, headers/ (its linux-headers, built
#            against with the cross compiler and this machine's own linux-kbuild) and busybox;
#   vmlinuz  the kernel to boot;
# and defines vm_modules DIR: builds rideguard-imu-sim.ko, rideguard-int-wire.ko, gpio-sim-rg.ko and the
# kernel's industrialio-configfs.ko, industrialio-sw-trigger.ko, iio-trig-hrtimer.ko, bno055.ko,
# bno055_i2c.ko (and on arm64 i2c-stub.ko) into DIR.
# Downloads are kept under $RIDEGUARD_CACHE (default /var/cache/rideguard)/kernel.

vm_arch=${RIDEGUARD_VM_ARCH:-amd64}
bash scripts/install-deps.sh --vm
# apt for the kernel's architecture: this machine's own for amd64; for arm64 a private state
# (nothing installed, the system's sources left alone).
vm_apt=()
if [ "$vm_arch" != "$(dpkg --print-architecture)" ]; then
    bash scripts/install-deps.sh qemu-system-arm gcc-aarch64-linux-gnu
    state=${RIDEGUARD_CACHE:-/var/cache/rideguard}/apt-$vm_arch
    mkdir -p "$state/lists/partial" "$state/archives/partial"
    printf 'deb http://deb.debian.org/debian bookworm main\ndeb http://deb.debian.org/debian bookworm-updates main\ndeb http://deb.debian.org/debian-security bookworm-security main\n' > "$state/sources.list"
    vm_apt=(-o Dir::Etc::sourcelist="$state/sources.list" -o Dir::Etc::sourceparts=/dev/null -o Dir::State::lists="$state/lists"
            -o Dir::Cache="$state" -o Dir::State::status=/dev/null -o APT::Architecture="$vm_arch" -o APT::Architectures="$vm_arch"
            -o APT::Sandbox::User=root)
    # Read again at most once a day: the kernel it names is the one the cache is kept for.
    [ -n "$(find "$state/lists" -name '*Packages*' -mtime -1 2>/dev/null | head -1)" ] || apt-get "${vm_apt[@]}" -qq update
fi
# The kernel Debian installs by default on the architecture, and the headers to build modules against it.
abi=$(apt-cache "${vm_apt[@]}" depends "linux-image-$vm_arch" 2>/dev/null | sed -n 's/.*Depends: linux-image-\(.*\)$/\1/p' | head -1)
if [ -z "$abi" ]; then
    apt-get "${vm_apt[@]}" update -qq
    abi=$(apt-cache "${vm_apt[@]}" depends "linux-image-$vm_arch" | sed -n 's/.*Depends: linux-image-\(.*\)$/\1/p' | head -1)
fi
[ -n "$abi" ] || { echo "vm-kernel: apt knows no linux-image-$vm_arch" >&2; exit 1; }
kversion=$(apt-cache "${vm_apt[@]}" show "linux-image-$abi" | sed -n 's/^Version: //p' | head -1)
kseries=${abi%%-*}                                  # 6.1.0 → the source package is linux-source-6.1
kseries=${kseries%.*}
# The headers common to every architecture and the build tools (this machine's own: they run here).
bash scripts/install-deps.sh "linux-headers-${abi%-*}-common" "linux-kbuild-$kseries"
[ "$vm_arch" = "$(dpkg --print-architecture)" ] && bash scripts/install-deps.sh "linux-headers-$abi"

# The kernel image and the matching source, downloaded once (apt-get download, not installed).
kdir=${RIDEGUARD_CACHE:-/var/cache/rideguard}/kernel/$abi
# The timer trigger's, the BNO055's and i2c-stub's sources came with the cache later: a cache without them is fetched again.
if [ ! -e "$kdir/ready" ] || [ ! -e "$kdir/source/drivers/iio/trigger/iio-trig-hrtimer.c" ] || [ ! -e "$kdir/source/drivers/iio/imu/bno055/bno055.c" ] \
        || [ ! -e "$kdir/source/drivers/i2c/i2c-stub.c" ]; then
    echo "vm-kernel: fetching linux-image-$abi and linux-source-$kseries $kversion"
    rm -rf "$kdir"
    mkdir -p "$kdir/debs"
    (cd "$kdir/debs" && apt-get "${vm_apt[@]}" download -qq "linux-image-$abi=$kversion" 2>&1 | grep -v unsandboxed || true)
    (cd "$kdir/debs" && apt-get download -qq "linux-source-$kseries=$kversion" 2>&1 | grep -v unsandboxed || true)
    mkdir "$kdir/image" "$kdir/source"
    dpkg-deb -x "$kdir"/debs/linux-image-*.deb "$kdir/image"
    dpkg-deb --fsys-tarfile "$kdir"/debs/linux-source-*.deb | tar -x -C "$kdir/source" --wildcards '*.tar.xz'
    tar -xJf "$kdir"/source/usr/src/linux-source-*.tar.xz -C "$kdir/source" --strip-components=1 \
        --wildcards '*/drivers/gpio/gpio-sim.c' '*/drivers/gpio/gpiolib.h' '*/kernel/irq/irq_sim.c' \
        '*/drivers/iio/industrialio-configfs.c' '*/drivers/iio/industrialio-sw-trigger.c' '*/drivers/iio/trigger/iio-trig-hrtimer.c' \
        '*/drivers/iio/imu/bno055/bno055.c' '*/drivers/iio/imu/bno055/bno055.h' '*/drivers/iio/imu/bno055/bno055_i2c.c' \
        '*/drivers/i2c/i2c-stub.c'
    if [ "$vm_arch" != "$(dpkg --print-architecture)" ]; then
        # Its headers, and the Pi's busybox for the initramfs.
        (cd "$kdir/debs" && apt-get "${vm_apt[@]}" download -qq "linux-headers-$abi=$kversion" busybox-static 2>&1 | grep -v unsandboxed || true)
        mkdir "$kdir/headers" "$kdir/busybox"
        dpkg-deb -x "$kdir"/debs/linux-headers-*.deb "$kdir/headers"
        dpkg-deb -x "$kdir"/debs/busybox-static_*.deb "$kdir/busybox"
    fi
    rm -rf "$kdir/debs" "$kdir/source/usr"
    # The modules' dependencies, for `modprobe -d "$kdir/image" --show-depends` (the package leaves
    # that to its postinst).
    depmod -b "$kdir/image" "$abi"
    touch "$kdir/ready"
fi
[ -e "$kdir/image/lib/modules/$abi/modules.dep" ] || depmod -b "$kdir/image" "$abi"
if [ "$vm_arch" = "$(dpkg --print-architecture)" ]; then
    headers=/usr/src/linux-headers-$abi
    cross=()
    busybox=/bin/busybox
else
    # The arch's headers name the common ones and the build tools by their installed paths: the
    # common headers are this machine's (the same package), the tools this machine's linux-kbuild.
    headers=$kdir/headers/usr/src/linux-headers-$abi
    mkdir -p "$kdir/headers/usr/lib"
    ln -sfn "/usr/lib/linux-kbuild-$kseries" "$kdir/headers/usr/lib/linux-kbuild-$kseries"
    cross=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
    busybox=$kdir/busybox/bin/busybox
fi

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
       "$kdir"/source/drivers/iio/imu/bno055/bno055_i2c.c "$kdir"/source/drivers/i2c/i2c-stub.c "$out/"
    sed -i 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq(irqnum);/' "$out/irq_sim.c"
    make -s -C "$headers" M="$out" "${cross[@]}" modules 2>&1 | grep -v "Skipping BTF" || true
    local m extra=
    [ "$vm_arch" = arm64 ] && extra=i2c-stub
    for m in rideguard-imu-sim rideguard-int-wire gpio-sim-rg industrialio-configfs industrialio-sw-trigger iio-trig-hrtimer bno055 bno055_i2c $extra; do
        [ -e "$out/$m.ko" ] || { echo "vm-kernel: building $m.ko failed" >&2; exit 1; }
    done
}
