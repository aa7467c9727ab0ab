#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian / Raspberry Pi OS packages RideGuard builds and tests with, when missing.
# Uses sudo only when not root. Swift itself must already be installed (see README).
set -euo pipefail

#   install-deps.sh [--test | --deb | --vm | --cross] [PACKAGE …]   extra arguments are more packages
packages=(pkg-config libgpiod-dev libiio-dev libgps-dev libsqlite3-dev libqrencode-dev libyaml-dev libmosquitto-dev libcurl4-openssl-dev)
case "${1:-}" in
    # The tests run a real gpsd fed by gpsfake (which needs Debian's python3 and its gps module),
    # open the HTML reports and the rescue card in headless Chromium, and read the card's QR code with zbarimg.
    # The MQTT tests run Debian's Mosquitto with TLS (certificates made with openssl) and read what it
    # delivers with mosquitto_sub. The page for the rider's phone is driven in Chromium by Selenium
    # (Debian's python3-selenium and chromium-driver).
    --test) packages+=(gpsd gpsd-clients python3-gps chromium chromium-driver python3-selenium zbar-tools mosquitto mosquitto-clients openssl); shift ;;
    # dpkg-shlibdeps works out the .deb's dependencies from the libraries the binary links.
    --deb) packages+=(dpkg-dev); shift ;;
    # scripts/vm-test.sh: qemu, the initramfs's busybox and cpio, module builds (kmod reads their
    # dependencies), Debian's iiod, i2cset for the IMUs' registers on i2c-stub, iasl for the
    # ADXL345's ACPI table.
    --vm) packages+=(qemu-system-x86 busybox-static cpio python3 make gcc kmod iiod i2c-tools acpica-tools); shift ;;
    # Debian roots for other releases and architectures, and running arm64 programs here.
    --cross) packages+=(debootstrap qemu-user-static binutils); shift ;;
esac
packages+=("$@")

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
