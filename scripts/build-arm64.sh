#!/usr/bin/env bash
# build/rideguard_<version>_arm64.deb, for Raspberry Pi OS trixie (64-bit), from any Debian machine:
#   make deb-arm64      (or scripts/build-arm64.sh VERSION)
# On an arm64 machine whose Swift is 6.2 or newer this is `make deb`. Elsewhere it cross-compiles:
# Debian's amd64 Swift (scripts/debian-swift.sh) builds for aarch64 against trixie's arm64 libraries
# and sid's arm64 Swift runtime (scripts/arm64-sysroot.sh), linked statically, so the Pi needs no
# Swift. Nothing is emulated but one `rideguard config example` for the package's configuration.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-$(sed -n 's/.*static let version = "\(.*\)"/\1/p' Sources/rideguard/RideGuard.swift)}
started=$(date +%s)

if [ "$(dpkg --print-architecture)" = arm64 ]; then
    exec make deb
fi
[ "$(id -u)" -eq 0 ] || { echo "build-arm64: run as root (the Debian Swift root is a chroot)" >&2; exit 1; }

bash scripts/install-deps.sh --cross
sysroot=$(bash scripts/arm64-sysroot.sh)
compiler=$(bash scripts/debian-swift.sh dpkg-query -W -f='${Version}' swiftlang)
[ "${compiler%%-*}" = "$(cut -d- -f1 "$sysroot/swiftlang-version")" ] || {
    echo "build-arm64: the compiler is swiftlang $compiler but the arm64 runtime is $(cat "$sysroot/swiftlang-version"):" \
         "remove $sysroot to fetch the matching one" >&2
    exit 1
}
echo "build-arm64: swiftlang $compiler (amd64) → aarch64, against $sysroot"

# pkg-config reads the target's .pc files; -s: lld strips the binary (the host's strip reads x86 only).
PKG_CONFIG_PATH=/sysroot/usr/lib/aarch64-linux-gnu/pkgconfig:/sysroot/usr/share/pkgconfig \
bash scripts/debian-swift.sh --arm64-sysroot \
    bash -c 'for product in rideguard rideguard-web; do
        swift build -c release --product "$product" --static-swift-stdlib -Xlinker -s \
            --scratch-path .build-arm64 --swift-sdks-path /sysroot/swift-sdks --swift-sdk rideguard-arm64 || exit 1
    done'
binary=.build-arm64/aarch64-unknown-linux-gnu/release/rideguard
echo "build-arm64: compiled in $(( $(date +%s) - started )) s: $(du -m "$binary" | cut -f1) MB"

# The newest glibc symbol it needs must be in trixie's glibc.
needs=$(objdump -T "$binary" "$(dirname "$binary")/rideguard-web" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
has=$(sed -n 's/^libc 6 libc6 (>= \(.*\))$/\1/p' "$sysroot/shlibs")
echo "build-arm64: needs $needs; trixie's glibc is $has"
[ "$(printf '%s\n%s\n' "${needs#GLIBC_}" "$has" | sort -V | tail -1)" = "$has" ] || { echo "build-arm64: too new for trixie" >&2; exit 1; }

root=build/deb-arm64/root
rm -rf build/deb-arm64
make -s stage DESTDIR="$(pwd)/$root" PREFIX=/usr BINARY="$binary" STRIP=true RUN="qemu-aarch64-static -L $sysroot"
bash scripts/build-deb.sh "$root" "$version" arm64 "build/rideguard_${version}_arm64.deb" "$sysroot/shlibs"
echo "build-arm64: build/rideguard_${version}_arm64.deb ($(du -k "build/rideguard_${version}_arm64.deb" | cut -f1) kB) in $(( $(date +%s) - started )) s"
