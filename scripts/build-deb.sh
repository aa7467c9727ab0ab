#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Turns the staged install (make install DESTDIR=…) into a .deb with dpkg-deb: control file with
# the dependencies dpkg-shlibdeps reads off the binary and the maintainer scripts in scripts/deb/
# (which make /etc/rideguard/config.yaml from the default where there is none: no conffile, so no
# upgrade ever asks about it). Called by `make deb` and scripts/build-package.sh.
#   build-deb.sh ROOT VERSION ARCH OUT [SHLIBS]
# A cross-built binary's libraries are not this machine's: SHLIBS, the shlibs control files of the
# target's library packages (scripts/sysroot.sh collects them), maps each library the binary
# needs to its package, as dpkg-shlibdeps does from the installed ones.
set -euo pipefail
root=$1 version=$2 arch=$3 out=$4 shlibs=${5:-}
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/install-deps.sh" --deb

install -d -m 0755 "$root/DEBIAN"
for script in postinst prerm postrm; do
    install -m 0755 "$here/deb/$script" "$root/DEBIAN/$script"
done

binaries=("$(readlink -f "$root/usr/bin/rideguard")" "$(readlink -f "$root/usr/bin/rideguard-web")")
if [ -n "$shlibs" ]; then
    # Each NEEDED soname (libfoo.so.N) → the shlibs line "libfoo N package (>= version)".
    depends=$(for binary in "${binaries[@]}"; do readelf -d "$binary"; done | sed -n 's/.*(NEEDED).*\[\(.*\)\.so\.\(.*\)\]/\1 \2/p' | while read -r name soversion; do
        awk -v n="$name" -v v="$soversion" '$1 == n && $2 == v { $1 = $2 = ""; sub(/^ +/, ""); print; exit }' "$shlibs"
    done | sort -u | paste -sd, | sed 's/,/, /g')
else
    # dpkg-shlibdeps wants to run in a source package: give it the smallest one.
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    mkdir "$work/debian"
    printf 'Source: rideguard\n\nPackage: rideguard\nArchitecture: any\n' > "$work/debian/control"
    depends=$(cd "$work" && dpkg-shlibdeps -O "${binaries[@]}" | sed -n 's/^shlibs:Depends=//p')
fi
[ -n "$depends" ] || { echo "build-deb: dpkg-shlibdeps found no dependency for ${binaries[*]}" >&2; exit 1; }

cat > "$root/DEBIAN/control" <<CONTROL
Package: rideguard
Version: $version
Architecture: $arch
Maintainer: RideGuard developers <rideguard@users.noreply.github.com>
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $depends, passwd
Recommends: gpsd
Suggests: gpiod, libiio-utils, i2c-tools
Section: misc
Priority: optional
Description: crash detection for motorbikes on a Raspberry Pi
 RideGuard reads the bike's accelerometer and gyro through Linux IIO, detects
 a fall, sounds a buzzer and counts down, and unless the rider holds the
 "I'm fine" button texts the rider's emergency contacts the bike's position
 through a cellular modem. After installing: sudo rideguard setup, then
 rideguard doctor, then sudo systemctl start rideguard; man rideguard.
CONTROL

(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
mkdir -p "$(dirname "$out")"
dpkg-deb --root-owner-group -Zxz --build "$root" "$out"
