#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Debian's own Swift: runs a command in this repository inside an amd64 Debian sid root that has
# sid's `swiftlang` (6.2.3) and RideGuard's build dependencies. Trixie's swiftlang 6.0.3 cannot
# build RideGuard: swift-log 1.16.2 needs the 6.2 language (`nonisolated(nonsending)`).
#
#   scripts/debian-swift.sh swift build ...                 the repository is at /src, the current directory
#   scripts/debian-swift.sh --sysroot RELEASE ARCH ...      also mounts that build root (scripts/sysroot.sh) at /sysroot
#   scripts/debian-swift.sh --version VERSION ...           the sources say they are VERSION (`rideguard --version`;
#                                                           the repository's file is left as it is)
#
# The root is made once with debootstrap (about a minute here) and kept under
# ${RIDEGUARD_CACHE:-/var/cache/rideguard}. Needs root (chroot, bind mounts).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
cache=${RIDEGUARD_CACHE:-/var/cache/rideguard}
root="$cache/sid-amd64"
mirror=${RIDEGUARD_DEBIAN_MIRROR:-http://deb.debian.org/debian}
packages=swiftlang,libc6-dev,g++,pkg-config,libgpiod-dev,libiio-dev,libgps-dev,libsqlite3-dev,libqrencode-dev,libyaml-dev,libmosquitto-dev,libcurl4-openssl-dev,git,ca-certificates

[ "$(id -u)" -eq 0 ] || { echo "debian-swift: run as root (chroot and bind mounts)" >&2; exit 1; }

sysroot="" version=""
while true; do
    case "${1:-}" in
        --sysroot) sysroot=$(bash "$here/sysroot.sh" "$2" "$3"); shift 3 ;;
        --version)
            version=$2; shift 2
            # What a Debian version may hold (and nothing sed or Swift would read otherwise).
            [[ "$version" =~ ^[0-9][A-Za-z0-9.+~-]*$ ]] || { echo "debian-swift: '$version' is not a version" >&2; exit 2; }
            ;;
        *) break ;;
    esac
done

# One run at a time: two would mount the repository (and the version's file) over each other in
# the one root. Another run waits here until the first is done.
mkdir -p "$cache"
exec 9> "$cache/sid-amd64.lock"
flock 9

# A root made with another list of packages gets only the ones it lacks (seconds, where making it
# again takes minutes), the rest left as they are: an upgraded swiftlang would no longer match the
# arm64 sysroot's runtime. One that cannot is made again.
made_with=$(cat "$root/etc/rideguard-packages" 2>/dev/null || true)
if [ -n "$made_with" ] && [ "$made_with" != "$packages" ]; then
    lacking=$(comm -13 <(tr , '\n' <<< "$made_with" | sort) <(tr , '\n' <<< "$packages" | sort) | tr '\n' ' ')
    echo "debian-swift: adding to $root: ${lacking:-nothing}" >&2
    cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
    if [ -z "$lacking" ] || { chroot "$root" apt-get -qq update >&2 \
        && chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get -qq -y --no-install-recommends --no-upgrade install $lacking >&2; }; then
        rm -f "$root"/var/cache/apt/archives/*.deb
        echo "$packages" > "$root/etc/rideguard-packages"
    else
        echo "debian-swift: could not add them; making the root again" >&2
    fi
fi
if [ "$(cat "$root/etc/rideguard-packages" 2>/dev/null)" != "$packages" ]; then
    bash "$here/install-deps.sh" --cross >&2
    mkdir -p "$cache"
    rm -rf "$root"
    echo "debian-swift: making a Debian sid root with swiftlang in $root" >&2
    debootstrap --variant=minbase --include="$packages" sid "$root" "$mirror" > "$cache/sid-amd64.log" 2>&1 \
        || { tail -20 "$cache/sid-amd64.log" >&2; exit 1; }
    # A snapshot mirror's Release files may be past their Valid-Until date.
    echo 'Acquire::Check-Valid-Until "false";' > "$root/etc/apt/apt.conf.d/99rideguard"
    rm -f "$root"/var/cache/apt/archives/*.deb
    echo "$packages" > "$root/etc/rideguard-packages"
    # Where git finds packages (a local mirror on machines without GitHub): the host's rewrites.
    git config --system --get-regexp '^url\.' 2>/dev/null | while read -r key value; do
        chroot "$root" git config --system --add "$key" "$value"
    done
fi

mounts=()
cleanup() {
    for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount "${mounts[$i]}" 2>/dev/null || umount -l "${mounts[$i]}"; done
}
trap cleanup EXIT
bind() {
    if [ -d "$1" ]; then mkdir -p "$root$2"; fi
    mount --bind "$1" "$root$2"
    mounts+=("$root$2")
}
# What a run killed mid-way left mounted (a CI job cut off: its /src then points at a folder that
# is gone, and mounting over it fails): nobody else uses the root while this run holds its lock,
# so it goes, deepest first.
findmnt -rn -o TARGET | awk -v root="$root" 'index($0, root "/") == 1' | sort -r | while read -r stale; do
    echo "debian-swift: unmounting $stale, left by a run that did not finish" >&2
    umount -l "$stale"
done
mkdir -p "$root/proc"
mount -t proc proc "$root/proc"
mounts+=("$root/proc")
bind /dev /dev
bind "$repo" /src
# What is mounted under /src stays in the root (the version's file below is not seen in the repository).
mount --make-private "$root/src"
for rewrite in $(git config --system --get-regexp '^url\.' 2>/dev/null | sed -n 's/^url\.\(\/[^ ]*\)\.insteadof .*/\1/p' | sort -u); do
    bind "$rewrite" "$rewrite"
done
[ -n "$sysroot" ] && bind "$sysroot" /sysroot
if [ -n "$version" ]; then
    # The one file that holds the release, with VERSION in it, over the repository's: SwiftPM sees
    # one changed file and compiles that module again, nothing else.
    release_file=Sources/RideGuardCommands/RideGuard.swift
    versioned=$(mktemp)
    trap 'cleanup; rm -f "$versioned"' EXIT
    sed "s/static let version = \".*\"/static let version = \"$version\"/" "$repo/$release_file" > "$versioned"
    grep -q "static let version = \"$version\"" "$versioned" || { echo "debian-swift: no version in $release_file" >&2; exit 1; }
    bind "$versioned" "/src/$release_file"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin TERM="${TERM:-dumb}" \
    PKG_CONFIG_PATH="${PKG_CONFIG_PATH:-}" PKG_CONFIG_SYSROOT_DIR="${PKG_CONFIG_SYSROOT_DIR:-}" /bin/bash -c 'cd /src && exec "$@"' bash "$@"
