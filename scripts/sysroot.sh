#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The root a package for RELEASE (trixie, bookworm) and ARCH (arm64, amd64) compiles and links
# against, made without emulating anything: that Debian release's C libraries for ARCH (what
# Raspberry Pi OS of the same name runs), unpacked from their packages with a private apt state, and
# the Swift runtime and modules for ARCH from sid's `swiftlang` (the same release as the compiler in
# scripts/debian-swift.sh). Also writes the Swift SDK description that points the compiler at it.
# Prints the root's path; made once, kept under ${RIDEGUARD_CACHE:-/var/cache/rideguard}, libraries
# added to the list later unpacked into it.
#   scripts/sysroot.sh RELEASE ARCH
set -euo pipefail
release=${1:?release: trixie or bookworm} arch=${2:?arch: arm64 or amd64}
cache=${RIDEGUARD_CACHE:-/var/cache/rideguard}
sysroot="$cache/sysroot-$release-$arch"
mirror=${RIDEGUARD_DEBIAN_MIRROR:-http://deb.debian.org/debian}
. "$(dirname "$0")/targets.sh"
gcc=$(release_gcc "$release")
triple=$(arch_triple "$arch")
# What RideGuard links: the C libraries of its system-library targets, and the C/C++ runtime.
libraries=(libc6-dev "libgcc-$gcc-dev" "libstdc++-$gcc-dev" libgpiod-dev libiio-dev libgps-dev libsqlite3-dev libqrencode-dev libyaml-dev libmosquitto-dev libcurl4-openssl-dev)
work="$cache/apt-$release-$arch"
bundle="$sysroot/swift-sdks/rideguard.artifactbundle"

# Downloads PACKAGES (with what they depend on) for ARCH from SUITE into $work/SUITE.
download() {
    local suite=$1; shift
    local dir="$work/$suite"
    mkdir -p "$dir/lists/partial" "$dir/archives/partial" "$dir/state"
    touch "$dir/state/status"
    echo "deb [arch=$arch] $mirror $suite main" > "$dir/sources.list"
    local apt=(-o Dir::Etc::sourcelist="$dir/sources.list" -o Dir::Etc::sourceparts=/dev/null
               -o Dir::State::lists="$dir/lists" -o Dir::State::status="$dir/state/status"
               -o Dir::Cache="$dir" -o Dir::Cache::archives="$dir/archives" -o Debug::NoLocking=1
               -o APT::Architecture="$arch" -o APT::Architectures::="$arch" -o APT::Sandbox::User=root
               -o Acquire::Check-Valid-Until=false)
    apt-get "${apt[@]}" -qq update >&2
    apt-get "${apt[@]}" -qq -y --download-only install "$@" >&2
}

# Unpacks the release's PACKAGES (with what they depend on) into the root.
unpack_libraries() {
    rm -rf "${work:?}/$release"
    download "$release" "$@"
    for deb in "$work/$release"/archives/*.deb; do
        dpkg-deb -x "$deb" "$sysroot"
        dpkg-deb --info "$deb" shlibs 2>/dev/null | grep -v '^#' >> "$sysroot/shlibs" || true   # for the .deb's Depends
    done
    # Links to absolute paths (bookworm's libm.so → /lib/aarch64-linux-gnu/libm.so.6) would point
    # out of the root: made relative, so that the linker finds the shared library, not the static one.
    find "$sysroot" -type l -lname '/*' | while read -r link; do
        ln -sfnr "$sysroot$(readlink "$link")" "$link"
    done
    # A library unpacked again (a dependency of one added later) is listed once.
    sort -u -o "$sysroot/shlibs" "$sysroot/shlibs"
}

# The Swift runtime, static libraries, modules and clang's resource headers for ARCH: only those
# folders of the (large) compiler package, unpacked once for every release's root.
runtime() {
    local into="$cache/swift-runtime-$arch"
    if [ ! -f "$into/swiftlang-version" ]; then
        rm -rf "$into"
        mkdir -p "$into"
        download sid --no-install-recommends swiftlang
        local swiftlang
        swiftlang=$(ls "$work"/sid/archives/swiftlang_*_"$arch".deb)
        dpkg-deb --fsys-tarfile "$swiftlang" | tar -x -C "$into" \
            ./usr/libexec/swift/lib/swift ./usr/libexec/swift/lib/swift_static ./usr/libexec/swift/lib/clang
        dpkg-deb -f "$swiftlang" Version > "$into/swiftlang-version"
    fi
    echo "$into"
}

# A root made already: the libraries added to the list since are unpacked into it (the Swift
# runtime, the large part, stays). One made by an earlier version of this script (no SDK of this
# name) is made again.
if [ -f "$sysroot/ready" ] && [ -f "$bundle/info.json" ]; then
    read -ra made < "$sysroot/ready"
    missing=()
    for library in "${libraries[@]}"; do
        [[ " ${made[*]} " == *" $library "* ]] || missing+=("$library")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        unpack_libraries "${missing[@]}"
        rm -rf "$work"
        echo "${made[*]} ${missing[*]}" > "$sysroot/ready"
    fi
    echo "$sysroot"
    exit 0
fi
rm -rf "$sysroot" "$work"
mkdir -p "$sysroot"

unpack_libraries "${libraries[@]}"
swift_runtime=$(runtime)
# Hard links: one copy on disk for every release's root (a link out of the root would not resolve
# inside the build's chroot, where the root is /sysroot).
mkdir -p "$sysroot/usr/libexec"
cp -al "$swift_runtime/usr/libexec/swift" "$sysroot/usr/libexec/"
cp "$swift_runtime/swiftlang-version" "$sysroot/swiftlang-version"
# The compiler looks for the runtime under the root's /usr/lib.
ln -sfn ../libexec/swift/lib/swift "$sysroot/usr/lib/swift"
ln -sfn ../libexec/swift/lib/swift_static "$sysroot/usr/lib/swift_static"

# The Swift SDK, for the compiler in scripts/debian-swift.sh, which sees this root at /sysroot.
mkdir -p "$bundle/sdk"
cat > "$bundle/info.json" <<JSON
{"schemaVersion": "1.0", "artifacts": {"rideguard-$release-$arch": {"type": "swiftSDK", "version": "1",
  "variants": [{"path": "sdk", "supportedTriples": ["x86_64-unknown-linux-gnu", "x86_64-pc-linux-gnu"]}]}}}
JSON
cat > "$bundle/sdk/swift-sdk.json" <<JSON
{"schemaVersion": "4.0", "targetTriples": {"$triple": {
  "sdkRootPath": "/sysroot",
  "swiftResourcesPath": "/sysroot/usr/libexec/swift/lib/swift",
  "swiftStaticResourcesPath": "/sysroot/usr/libexec/swift/lib/swift_static",
  "toolsetPaths": ["toolset.json"]}}}
JSON
# GNU ld in the build root links the host only; the toolchain's lld links any target.
echo '{"schemaVersion": "1.0", "swiftCompiler": {"extraCLIOptions": ["-use-ld=lld"]}}' > "$bundle/sdk/toolset.json"

rm -rf "$work"
echo "${libraries[*]}" > "$sysroot/ready"
echo "$sysroot"
