#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Compiles the C shims against the headers of the other library versions RideGuard must build with:
# libgpiod 2.x (Raspberry Pi OS trixie; bookworm-backports has 2.1) and libgps 3.25 (trixie), as well
# as against the installed libgpiod 1.6 and libgps 3.22. The other headers come from Debian's
# packages, downloaded with a private apt state into a temporary folder: nothing is installed and
# the system's apt sources are left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
# The installed versions are compiled against too: a fresh machine has them installed first.
bash scripts/install-deps.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Downloads and unpacks PACKAGE from SUITE into $work/SUITE; prints the version.
fetch() {
    local suite=$1 package=$2
    local dir="$work/$suite"
    mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
    echo "deb http://deb.debian.org/debian $suite main" > "$dir/sources.list"
    local apt=(-o Dir::Etc::sourcelist="$dir/sources.list" -o Dir::Etc::sourceparts=/dev/null
               -o Dir::State::lists="$dir/lists" -o Dir::Cache="$dir/cache" -o APT::Get::List-Cleanup=0
               -o APT::Sandbox::User=root)
    apt-get "${apt[@]}" -qq update >/dev/null
    (cd "$dir" && apt-get "${apt[@]}" -qq download "$package" 2>&1 | grep -v unsandboxed || true)
    dpkg-deb -x "$dir"/"$package"_*.deb "$dir/root"
    dpkg-deb -f "$dir"/"$package"_*.deb Version
}

# Compiles a file that references every function of a shim; extra -I folders come first.
check() {
    local module=$1 source=$2; shift 2
    cc -Wall -Werror -c -I "Sources/$module" "$@" "$source" -o "$work/out.o"
}

cat > "$work/gpiod.c" <<'C'
#include "shim.h"
void *uses[] = { (void *)rg_gpiod_api_major, (void *)rg_gpiod_version, (void *)rg_gpio_line_open,
                 (void *)rg_gpio_line_set, (void *)rg_gpio_line_get, (void *)rg_gpio_line_fd,
                 (void *)rg_gpio_line_read, (void *)rg_gpio_line_close };
int api(void) { return RG_GPIOD_API; }
C
cat > "$work/gps.c" <<'C'
#include "shim.h"
void *uses[] = { (void *)rg_gps_api_major, (void *)rg_gps_current_fix, (void *)rg_gps_unpack };
C

api() { cc -E -dM -I Sources/CGPIOD "$@" Sources/CGPIOD/shim.h | awk '/define RG_GPIOD_API/{print $3}'; }

echo "libgpiod $(pkg-config --modversion libgpiod) (installed): shim compiles, API $(api)"
check CGPIOD "$work/gpiod.c"
version=$(fetch bookworm-backports libgpiod-dev)
check CGPIOD "$work/gpiod.c" -I "$work/bookworm-backports/root/usr/include"
[ "$(api -I "$work/bookworm-backports/root/usr/include")" = 2 ] || { echo "libgpiod $version: expected the v2 path"; exit 1; }
echo "libgpiod $version (bookworm-backports): shim compiles, API 2"

echo "libgps $(pkg-config --modversion libgps) (installed): shim compiles"
check CGPS "$work/gps.c"
version=$(fetch trixie libgps-dev)
check CGPS "$work/gps.c" -I "$work/trixie/root/usr/include"
echo "libgps $version (trixie): shim compiles"
