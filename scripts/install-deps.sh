#!/usr/bin/env bash
# Installs the Debian / Raspberry Pi OS packages RideGuard builds and tests with, when missing.
# Uses sudo only when not root. Swift itself must already be installed (see README).
set -euo pipefail

packages=(pkg-config libgpiod-dev libiio-dev libgps-dev libsqlite3-dev)
if [ "${1:-}" = "--test" ]; then
    # The tests run a real gpsd fed by gpsfake (which needs Debian's python3 and its gps module),
    # and open the HTML reports in headless Chromium.
    packages+=(gpsd gpsd-clients python3-gps chromium)
fi
if [ "${1:-}" = "--deb" ]; then
    # dpkg-shlibdeps works out the .deb's dependencies from the libraries the binary links.
    packages+=(dpkg-dev)
fi

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "Installing: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
