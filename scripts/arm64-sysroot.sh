#!/usr/bin/env bash
# The root an arm64 build compiles and links against, made without emulating anything: Debian
# trixie's arm64 C libraries (what Raspberry Pi OS trixie runs), unpacked from their packages with a
# private apt state, and the aarch64 Swift runtime and modules from sid's arm64 `swiftlang` (the
# same release as the compiler in scripts/debian-swift.sh). Also writes the Swift SDK description
# that points the compiler at it. Prints the root's path; made once, kept under
# ${RIDEGUARD_CACHE:-/var/cache/rideguard}, libraries added to the list later unpacked into it.
set -euo pipefail
cache=${RIDEGUARD_CACHE:-/var/cache/rideguard}
sysroot="$cache/sysroot-trixie-arm64"
mirror=${RIDEGUARD_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# What RideGuard links: the C libraries of its system-library targets, and the C/C++ runtime.
libraries=(libc6-dev libgcc-14-dev libstdc++-14-dev libgpiod-dev libiio-dev libgps-dev libsqlite3-dev libqrencode-dev libyaml-dev libmosquitto-dev libcurl4-openssl-dev)
work="$cache/apt-arm64"

# Downloads PACKAGES (with what they depend on) for arm64 from SUITE into $work/SUITE.
download() {
    local suite=$1; shift
    local dir="$work/$suite"
    mkdir -p "$dir/lists/partial" "$dir/archives/partial" "$dir/state"
    touch "$dir/state/status"
    echo "deb [arch=arm64] $mirror $suite main" > "$dir/sources.list"
    local apt=(-o Dir::Etc::sourcelist="$dir/sources.list" -o Dir::Etc::sourceparts=/dev/null
               -o Dir::State::lists="$dir/lists" -o Dir::State::status="$dir/state/status"
               -o Dir::Cache="$dir" -o Dir::Cache::archives="$dir/archives" -o Debug::NoLocking=1
               -o APT::Architecture=arm64 -o APT::Architectures::=arm64 -o APT::Sandbox::User=root
               -o Acquire::Check-Valid-Until=false)
    apt-get "${apt[@]}" -qq update >&2
    apt-get "${apt[@]}" -qq -y --download-only install "$@" >&2
}

# Unpacks trixie's arm64 PACKAGES (with what they depend on) into the root.
unpack_libraries() {
    rm -rf "$work/trixie"
    download trixie "$@"
    for deb in "$work"/trixie/archives/*.deb; do
        dpkg-deb -x "$deb" "$sysroot"
        dpkg-deb --info "$deb" shlibs 2>/dev/null | grep -v '^#' >> "$sysroot/shlibs" || true   # for the .deb's Depends
    done
    # A library unpacked again (a dependency of one added later) is listed once.
    sort -u -o "$sysroot/shlibs" "$sysroot/shlibs"
}

# A root made already: the libraries added to the list since are unpacked into it (the Swift
# runtime, the large part, stays).
if [ -f "$sysroot/ready" ]; then
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

# The aarch64 Swift runtime, static libraries, modules and clang's resource headers: only those
# folders of the (large) compiler package.
download sid --no-install-recommends swiftlang
swiftlang=$(ls "$work"/sid/archives/swiftlang_*_arm64.deb)
dpkg-deb --fsys-tarfile "$swiftlang" | tar -x -C "$sysroot" \
    ./usr/libexec/swift/lib/swift ./usr/libexec/swift/lib/swift_static ./usr/libexec/swift/lib/clang
# The compiler looks for the runtime under the root's /usr/lib.
ln -sfn ../libexec/swift/lib/swift "$sysroot/usr/lib/swift"
ln -sfn ../libexec/swift/lib/swift_static "$sysroot/usr/lib/swift_static"
dpkg-deb -f "$swiftlang" Version > "$sysroot/swiftlang-version"

# The Swift SDK, for the compiler in scripts/debian-swift.sh, which sees this root at /sysroot.
bundle="$sysroot/swift-sdks/rideguard-arm64.artifactbundle"
mkdir -p "$bundle/sdk"
cat > "$bundle/info.json" <<'JSON'
{"schemaVersion": "1.0", "artifacts": {"rideguard-arm64": {"type": "swiftSDK", "version": "1",
  "variants": [{"path": "sdk", "supportedTriples": ["x86_64-unknown-linux-gnu", "x86_64-pc-linux-gnu"]}]}}}
JSON
cat > "$bundle/sdk/swift-sdk.json" <<'JSON'
{"schemaVersion": "4.0", "targetTriples": {"aarch64-unknown-linux-gnu": {
  "sdkRootPath": "/sysroot",
  "swiftResourcesPath": "/sysroot/usr/libexec/swift/lib/swift",
  "swiftStaticResourcesPath": "/sysroot/usr/libexec/swift/lib/swift_static",
  "toolsetPaths": ["toolset.json"]}}}
JSON
# GNU ld in the build root links x86 only; the toolchain's lld links any target.
echo '{"schemaVersion": "1.0", "swiftCompiler": {"extraCLIOptions": ["-use-ld=lld"]}}' > "$bundle/sdk/toolset.json"

rm -rf "$work"
echo "${libraries[*]}" > "$sysroot/ready"
echo "$sysroot"
