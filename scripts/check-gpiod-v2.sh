#!/usr/bin/env bash
# Compiles the libgpiod shim against the libgpiod 2.x header as well as the installed 1.6 one, to
# show the same sources build on Raspberry Pi OS trixie (libgpiod 2.2). The 2.x headers come from
# bookworm-backports' libgpiod-dev, unpacked into a temporary folder (nothing is installed).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat > "$work/use-shim.c" <<'C'
#include "shim.h"
/* Reference every function so each is compiled, not just declared. */
void *uses[] = { (void *)rg_gpiod_api_major, (void *)rg_gpiod_version, (void *)rg_gpio_line_open,
                 (void *)rg_gpio_line_set, (void *)rg_gpio_line_get, (void *)rg_gpio_line_wait,
                 (void *)rg_gpio_line_read, (void *)rg_gpio_line_close };
int expected_api(void) { return RG_GPIOD_API; }
C

echo "libgpiod 1.x (installed $(pkg-config --modversion libgpiod)):"
cc -Wall -Werror -c -I Sources/CGPIOD "$work/use-shim.c" -o "$work/v1.o"
echo "  shim compiles (API $(cc -E -dM -I Sources/CGPIOD Sources/CGPIOD/shim.h | awk '/define RG_GPIOD_API/{print $3}'))"

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if ! apt-cache policy libgpiod-dev 2>/dev/null | grep -q "bpo12"; then
    echo "Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" | $sudo tee /etc/apt/sources.list.d/rideguard-bookworm-backports.sources >/dev/null
    $sudo apt-get update -qq
fi
version=$(apt-cache policy libgpiod-dev | awk '/bpo12/{print $1; exit}')
[ -n "$version" ] || version=$(apt-cache policy libgpiod-dev | grep -oE '2\.[0-9.]+-[^ ]*' | head -1)
(cd "$work" && apt-get download -qq "libgpiod-dev=$version" 2>&1 | grep -v "unsandboxed" || true)
dpkg-deb -x "$work"/libgpiod-dev_*.deb "$work/v2"
header="$work/v2/usr/include/gpiod.h"
grep -q "gpiod_line_request_read_edge_events" "$header"
echo "libgpiod 2.x ($version from bookworm-backports):"
# -I is searched before /usr/include, so <gpiod.h> is the 2.x header here.
cc -Wall -Werror -c -I Sources/CGPIOD -I "$work/v2/usr/include" "$work/use-shim.c" -o "$work/v2.o"
api=$(cc -E -dM -I Sources/CGPIOD -I "$work/v2/usr/include" Sources/CGPIOD/shim.h | awk '/define RG_GPIOD_API/{print $3}')
[ "$api" = "2" ] || { echo "expected the v2 path, got API $api"; exit 1; }
echo "  shim compiles (API $api)"
