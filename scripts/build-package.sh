#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A package for one Debian release and architecture, from any Debian machine:
#   scripts/build-package.sh RELEASE ARCH [VERSION]     → build/rideguard_<VERSION>+deb<N>_<ARCH>.deb
#   RELEASE: trixie (Debian 13, Raspberry Pi OS trixie) or bookworm (Debian 12, Raspberry Pi OS bookworm)
#   ARCH:    arm64 (a 64-bit Raspberry Pi) or amd64
# Debian's amd64 Swift (scripts/debian-swift.sh) compiles for ARCH against RELEASE's libraries and
# sid's Swift runtime for ARCH (scripts/sysroot.sh), linked statically, so the Pi needs no Swift.
# VERSION (default: the source's) is what `rideguard --version` says; the package's version adds
# +deb12 or +deb13, so one repository holds both releases' builds and a Pi upgraded from bookworm to
# trixie moves to trixie's. Nothing is emulated but one `rideguard config example` for the package.
set -euo pipefail
cd "$(dirname "$0")/.."
release=${1:?release: trixie or bookworm} arch=${2:?arch: arm64 or amd64}
source_version=$(sed -n 's/.*static let version = "\(.*\)"/\1/p' Sources/RideGuardCommands/RideGuard.swift)
version=${3:-$source_version}
started=$(date +%s)
say() { echo "build-package $release $arch: $*"; }
. scripts/targets.sh
suffix=$(release_suffix "$release")
triple=$(arch_triple "$arch") multiarch=$(arch_multiarch "$arch") emulator=$(arch_emulator "$arch")
[ "$(id -u)" -eq 0 ] || { echo "build-package: run as root (the Debian Swift root is a chroot)" >&2; exit 1; }

bash scripts/install-deps.sh --cross
sysroot=$(bash scripts/sysroot.sh "$release" "$arch")
compiler=$(bash scripts/debian-swift.sh dpkg-query -W -f='${Version}' swiftlang)
[ "${compiler%%-*}" = "$(cut -d- -f1 "$sysroot/swiftlang-version")" ] || {
    echo "build-package: the compiler is swiftlang $compiler but the $arch runtime is $(cat "$sysroot/swiftlang-version"):" \
         "remove $sysroot and ${RIDEGUARD_CACHE:-/var/cache/rideguard}/swift-runtime-$arch to fetch the matching one" >&2
    exit 1
}
say "swiftlang $compiler (amd64) → $triple, against $sysroot"

# The release's .pc files, their paths read inside the release's root (Debian's libcurl keeps its
# headers in /usr/include/<multiarch>, which for amd64 is also the build root's own: sid's glibc
# headers would be mixed with the release's); -s: lld strips the binary (the host's strip reads x86
# only).
scratch=.build-$release-$arch
# arm64 kernels run with 4, 16 (a Pi 5's kernel_2712.img) or 64 KiB pages: segments aligned to 64 KiB,
# and the end of GNU_RELRO padded to 16 KiB so that no page of it stays writable (scripts/lint-deb.sh
# checks both).
page_flags=()
[ "$arch" != arm64 ] || page_flags=(-Xlinker -z -Xlinker max-page-size=65536 -Xlinker -z -Xlinker common-page-size=16384)
versioned=()
[ "$version" = "$source_version" ] || versioned=(--version "$version")
PKG_CONFIG_PATH=/sysroot/usr/lib/$multiarch/pkgconfig:/sysroot/usr/share/pkgconfig PKG_CONFIG_SYSROOT_DIR=/sysroot \
bash scripts/debian-swift.sh --sysroot "$release" "$arch" "${versioned[@]}" \
    bash -c 'scratch=$1 sdk=$2; shift 2
    for product in rideguard rideguard-web; do
        swift build -c release --product "$product" --static-swift-stdlib -Xlinker -s "$@" \
            --scratch-path "$scratch" --swift-sdks-path /sysroot/swift-sdks --swift-sdk "$sdk" || exit 1
    done' build "$scratch" "rideguard-$release-$arch" "${page_flags[@]}"
binary=$scratch/$triple/release/rideguard
say "compiled in $(( $(date +%s) - started )) s: $(du -m "$binary" | cut -f1) MB"

# The newest glibc symbol it needs must be in the release's glibc.
needs=$(objdump -T "$binary" "$(dirname "$binary")/rideguard-web" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
has=$(sed -n 's/^libc 6 libc6 (>= \(.*\))$/\1/p' "$sysroot/shlibs")
say "needs $needs; $release's glibc is $has"
[ "$(printf '%s\n%s\n' "${needs#GLIBC_}" "$has" | sort -V | tail -1)" = "$has" ] || { echo "build-package: too new for $release" >&2; exit 1; }

deb=build/rideguard_${version}${suffix}_${arch}.deb
root=build/deb-$release-$arch/root
rm -rf "build/deb-$release-$arch"
make -s stage DESTDIR="$(pwd)/$root" PREFIX=/usr BINARY="$binary" STRIP=true RUN="$emulator -L $sysroot"
bash scripts/build-deb.sh "$root" "$version$suffix" "$arch" "$deb" "$sysroot/shlibs"
say "$deb ($(du -k "$deb" | cut -f1) kB) in $(( $(date +%s) - started )) s"
