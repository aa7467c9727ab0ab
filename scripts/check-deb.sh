#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs a RideGuard .deb on this machine with dpkg -i and checks what an installer gets: the
# files, the changelog and manual pages, the configuration made from the default (no conffile), the service user and its groups, `config check` on the installed default,
# `doctor` naming the missing hardware, `setup --no-input` leaving the database to the service
# user, the demo from the installed binary, the service under systemd when systemd runs; then
# purges it. Run as root (CI does): it changes the machine.
set -euo pipefail
deb=$1
fail() { echo "check-deb: $*" >&2; exit 1; }

# man and col, to read the manual pages as a user does.
bash "$(dirname "$0")/install-deps.sh" man-db bsdextrautils
dpkg -i "$deb"
trap 'dpkg --purge rideguard >/dev/null 2>&1 || true' EXIT

for f in /usr/bin/rideguard /usr/bin/rideguard-web /usr/lib/systemd/system/rideguard.service /usr/lib/systemd/system/rideguard-web.service /usr/lib/udev/rules.d/60-rideguard-iio.rules \
         /usr/lib/udev/rules.d/77-rideguard-modem.rules /etc/rideguard/config.yaml /usr/share/rideguard/example-lowside.csv \
         /usr/share/doc/rideguard/boards/pi-5.md /usr/share/doc/rideguard/copyright; do
    [ -e "$f" ] || fail "$f is missing"
done
grep -q "^License: Apache-2.0" /usr/share/doc/rideguard/copyright || fail "the copyright file names no licence"
zcat /usr/share/doc/rideguard/changelog.gz | head -1 | grep -q "^rideguard (" || fail "no Debian changelog"
# The manual, as a user reads it: the command, a subcommand, the configuration's format.
for page in rideguard rideguard.run rideguard.doctor rideguard-web "5 rideguard.yaml"; do
    # shellcheck disable=SC2086
    text=$(MANWIDTH=100 man $page 2>/dev/null | col -b) || fail "man $page: no page"
    [ -n "$text" ] || fail "man $page is empty"
done
grep -q -- "--config" <<<"$(MANWIDTH=100 man rideguard.run | col -b)" || fail "man rideguard.run does not show its options"
grep -q "countdown_s: 60" <<<"$(MANWIDTH=100 man 5 rideguard.yaml | col -b)" || fail "man 5 rideguard.yaml does not show the defaults"
echo "check-deb: changelog and manual pages (man rideguard, rideguard.run, rideguard-web, 5 rideguard.yaml) installed"
# No conffile (an upgrade never asks about it): postinst made the configuration from the default.
[ -z "$(dpkg-query -W -f='${Conffiles}' rideguard)" ] || fail "the package has conffiles: $(dpkg-query -W -f='${Conffiles}' rideguard)"
cmp -s /etc/rideguard/config.yaml /usr/share/rideguard/config.yaml || fail "/etc/rideguard/config.yaml is not the default"
for group in iio gpio dialout; do
    id -nG rideguard | tr ' ' '\n' | grep -qx "$group" || fail "rideguard is not in group $group"
done
[ "$(stat -c %U:%G:%a /var/lib/rideguard)" = "rideguard:rideguard:770" ] || fail "/var/lib/rideguard is $(stat -c %U:%G:%a /var/lib/rideguard)"
[ -L /etc/systemd/system/multi-user.target.wants/rideguard.service ] || fail "the service is not enabled"
[ ! -e /etc/systemd/system/multi-user.target.wants/rideguard-web.service ] || fail "the page's service is enabled by default"
[ "$(id -nG rideguard-web)" = rideguard ] || fail "rideguard-web is in $(id -nG rideguard-web), not the group rideguard alone"
echo "check-deb: files, configuration, users, groups, state directory, the enabled agent and the disabled page are in place"

rideguard config check --config /etc/rideguard/config.yaml

# No IMU, GPIO chip or modem on this machine: doctor must say so, line by line, and exit 1.
set +e
rideguard doctor --gps-wait 1 --modem-wait 2 | tee /tmp/rideguard-doctor.out
status=${PIPESTATUS[0]}
set -e
[ "$status" -eq 1 ] || fail "doctor exited $status without the hardware"
for part in "✓ configuration" "✓ database" "✗ IMU" "✗ GPIO" "✗ modem" "✗ contacts: no emergency contact"; do
    grep -q "^$part" /tmp/rideguard-doctor.out || fail "doctor did not report '$part'"
done

# Setup as root leaves the database to the service user, who can read it.
rideguard setup --no-input --name Alex --contact "Sam=+33 6 12 34 56 78" --message "I may have crashed. Call me."
[ "$(stat -c %U /var/lib/rideguard/rideguard.sqlite)" = "rideguard" ] || fail "setup left the database to $(stat -c %U /var/lib/rideguard/rideguard.sqlite)"
runuser -u rideguard -- rideguard contacts list --database /var/lib/rideguard/rideguard.sqlite | grep -q "Sam  +33612345678" \
    || fail "the service user cannot read the contacts"
rideguard doctor --gps-wait 1 --modem-wait 2 > /tmp/rideguard-doctor.out || true    # still no hardware: exit 1
# No agent runs yet: the question waits in the outbox, and doctor says it has not gone out.
grep -q "^! contacts: 1: Sam +33•••••5678 (not sent yet); no contact has confirmed their number yet" /tmp/rideguard-doctor.out \
    || fail "doctor does not see the contact, asked by SMS: $(grep contacts /tmp/rideguard-doctor.out)"
# The rider called Sam: confirmed by hand, and doctor sees it.
rideguard contacts confirm Sam > /dev/null || fail "contacts confirm"
rideguard doctor --gps-wait 1 --modem-wait 2 > /tmp/rideguard-doctor.out || true
grep -q "^✓ contacts: 1: Sam +33•••••5678 (confirmed); alert message set" /tmp/rideguard-doctor.out \
    || fail "doctor does not see the contact confirmed: $(grep contacts /tmp/rideguard-doctor.out)"

# The page as its service runs it (its own user): it reads the database the agent's user owns,
# and pairs a phone with a code made as root.
runuser -u rideguard-web -- rideguard web serve --config /etc/rideguard/config.yaml > /tmp/rideguard-web.out 2>&1 &
web=$!
code=$(rideguard web pair 2>/dev/null | grep -o 'code=[a-z0-9]*' | cut -d= -f2)
port=$(sed -n 's/^ *listen: .*:\([0-9]*\).*/\1/p' /etc/rideguard/config.yaml)
# The page is up once it serves its style sheet; then the code is spent, once.
get() { bash -c 'exec 3<>/dev/tcp/127.0.0.1/$1 && printf "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n" "$2" >&3 && head -1 <&3' _ "$port" "$1" 2>/dev/null; }
for _ in $(seq 1 50); do
    case "$(get /style.css)" in *"200"*) break ;; esac
    sleep 0.2
done
answer=$(get "/pair?code=$code")
kill "$web"; wait "$web" || true
case "$answer" in *"303"*) ;; *) fail "the page did not pair a phone (answered '$answer'): $(tail -5 /tmp/rideguard-web.out)" ;; esac
rideguard web sessions | grep -q "paired" || fail "the pairing is not in the database"
echo "check-deb: the page, as rideguard-web, paired a phone"

# The agent as the service runs it, without its hardware: it keeps running (retrying each part)
# and says what is missing; only the timeout stops it.
set +e
runuser -u rideguard -- timeout 8 rideguard run --config /etc/rideguard/config.yaml > /tmp/rideguard-run.out 2>&1
status=$?
set -e
[ "$status" -eq 124 ] || fail "the installed agent exited by itself ($status): $(tail -5 /tmp/rideguard-run.out)"
grep -q "IMU: .*retrying" /tmp/rideguard-run.out || fail "the agent did not report the missing IMU: $(cat /tmp/rideguard-run.out)"
echo "check-deb: the installed agent ran 8 s without its hardware, retrying"

# The installed binary carries its Swift runtime: the demo runs from anywhere.
(cd / && rideguard demo --speed 6) | tee /tmp/rideguard-installed-demo.out | tail -1
grep -q "demo over: 3 SMS sent" /tmp/rideguard-installed-demo.out || fail "the installed demo did not send its 3 SMS"

if [ -d /run/systemd/system ]; then
    systemctl start rideguard.service
    sleep 5
    systemctl is-active --quiet rideguard.service || fail "the service did not stay up: $(systemctl status rideguard.service | tail -5)"
    systemctl stop rideguard.service
    echo "check-deb: the service ran under systemd"
else
    echo "check-deb: systemd is not running here: the service was not started"
fi

dpkg --purge rideguard
trap - EXIT
for f in /usr/bin/rideguard /usr/bin/rideguard-web /etc/rideguard/config.yaml /var/lib/rideguard /etc/systemd/system/multi-user.target.wants/rideguard.service; do
    [ ! -e "$f" ] || fail "$f is still there after purge"
done
echo "check-deb: installed, checked and purged $deb"
