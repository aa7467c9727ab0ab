#!/usr/bin/env bash
# Installs build/rideguard_*_arm64.deb in a Debian trixie arm64 root with `apt install ./…deb` (apt
# fetches its dependencies from trixie; not its Recommends: gpsd and what it pulls, unpacked and
# configured under emulation, prove nothing about our package and cost CI minutes) and runs, under qemu-user: --version, `config check` on the
# installed default, `replay` of the installed example trace (a crash must be detected) and the demo
# (3 SMS sent). The root is made once with debootstrap (kept under ${RIDEGUARD_CACHE:-/var/cache/rideguard})
# and each run installs into a fresh copy of it. Run as root.
#   scripts/check-deb-arm64.sh build/rideguard_0.2.0+deb13_arm64.deb
set -euo pipefail
deb=$(readlink -f "$1")
cache=${RIDEGUARD_CACHE:-/var/cache/rideguard}
base="$cache/trixie-arm64"
mirror=${RIDEGUARD_DEBIAN_MIRROR:-http://deb.debian.org/debian}
fail() { echo "check-deb-arm64: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "run as root (chroot)"
started=$(date +%s)

bash "$(dirname "$0")/install-deps.sh" --cross
# arm64 programs run through qemu-user: register it with the kernel where nothing did yet
# (F: the interpreter is opened now, so it also works inside the chroot).
if [ "$(dpkg --print-architecture)" != arm64 ] && [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
    [ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
    sed -n '/^:/p' /usr/lib/binfmt.d/qemu-aarch64.conf > /proc/sys/fs/binfmt_misc/register
fi

if [ ! -e "$base/ready" ]; then
    echo "check-deb-arm64: making a Debian trixie arm64 root in $base"
    rm -rf "$base"
    debootstrap --arch=arm64 --variant=minbase trixie "$base" "$mirror" > "$cache/trixie-arm64.log" 2>&1 \
        || { tail -20 "$cache/trixie-arm64.log" >&2; exit 1; }
    echo 'Acquire::Check-Valid-Until "false";' > "$base/etc/apt/apt.conf.d/99rideguard"
    touch "$base/ready"
fi

root=$(mktemp -d "$cache/trixie-arm64-check.XXXXXX")
mounts=()
# Stops whatever runs in the root (runuser under qemu does not pass a signal on to the page's
# server): a server left listening would answer the next run's requests.
kill_in_root() {
    for process in /proc/[0-9]*; do
        if [ "$(readlink "$process/root" 2>/dev/null)" = "$root" ]; then kill -9 "${process#/proc/}" 2>/dev/null || true; fi
    done
}
cleanup() {
    kill_in_root
    for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount "${mounts[$i]}" 2>/dev/null || umount -l "${mounts[$i]}"; done
    rm -rf "$root"
}
trap cleanup EXIT
cp -a "$base/." "$root/"
mount -t proc proc "$root/proc"; mounts+=("$root/proc")
mount --bind /dev "$root/dev"; mounts+=("$root/dev")
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp "$deb" "$root/tmp/"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }

in_root apt-get update -qq
install_started=$(date +%s)
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "/tmp/$(basename "$deb")" > "$root/tmp/apt.out" 2>&1 \
    || { tail -30 "$root/tmp/apt.out" >&2; fail "apt install failed"; }
echo "check-deb-arm64: installed with apt in $(( $(date +%s) - install_started )) s: $(in_root dpkg-query -W -f='${Package} ${Version} ${Architecture}, Depends: ${Depends}' rideguard)"

version=$(in_root rideguard --version)
package_version=$(dpkg-deb -f "$deb" Version)
[ "$version" = "${package_version%+deb*}" ] || fail "rideguard --version says '$version', the package $package_version"
in_root rideguard config check --config /etc/rideguard/config.yaml
in_root rideguard replay /usr/share/rideguard/example-lowside.csv | tee "$root/tmp/replay.out" | tail -2
grep -q "CRASH DETECTED" "$root/tmp/replay.out" || fail "replay of the example trace detected no crash"
in_root bash -c 'cd / && rideguard demo --speed 6' > "$root/tmp/demo.out" 2>&1 || { tail -20 "$root/tmp/demo.out" >&2; fail "the demo failed"; }
tail -1 "$root/tmp/demo.out"
grep -q "demo over: 3 SMS sent" "$root/tmp/demo.out" || fail "the demo did not send its 3 SMS"
# libqrencode, arm64's: the rescue card's QR code.
in_root rideguard contacts add Sam +33612345678 --database /tmp/card.sqlite > /dev/null
in_root rideguard card --terminal --database /tmp/card.sqlite > "$root/tmp/card.out" || fail "rideguard card failed"
grep -q "Sam: +33612345678" "$root/tmp/card.out" && grep -q "▀" "$root/tmp/card.out" || fail "rideguard card drew no QR code"
echo "check-deb-arm64: rideguard card drew its QR code ($(grep -c "▀\|▄" "$root/tmp/card.out") lines)"
# The page for the rider's phone: its unit installed and disabled, its user, and rideguard-web
# (its own bounded HTTP server, arm64's FoundationEssentials) serving a pairing as that user under qemu-user.
for f in /usr/bin/rideguard-web /usr/lib/systemd/system/rideguard-web.service; do
    [ -e "$root$f" ] || fail "$f is missing"
done
[ ! -e "$root/etc/systemd/system/multi-user.target.wants/rideguard-web.service" ] || fail "rideguard-web.service is enabled by default"
[ "$(in_root id -gn rideguard-web)" = rideguard ] || fail "the user rideguard-web is not in the group rideguard"
printf 'web:\n  listen: 127.0.0.1:18089\ndatabase: /var/lib/rideguard/rideguard.sqlite\ncontrol_socket: /run/rideguard/control.sock\n' > "$root/tmp/web.yaml"
in_root rideguard contacts add Sam +33612345678 --config /tmp/web.yaml > /dev/null
code=$(in_root rideguard web pair --config /tmp/web.yaml 2>/dev/null | grep -o 'code=[a-z0-9]*' | cut -d= -f2)
in_root runuser -u rideguard-web -- rideguard web serve --config /tmp/web.yaml > "$root/tmp/web.out" 2>&1 &
web=$!
# The page is up once it serves its style sheet; then the code is spent, once.
get() { in_root bash -c 'exec 3<>/dev/tcp/127.0.0.1/18089 && printf "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n" "$1" >&3 && head -1 <&3' _ "$1" 2>/dev/null; }
for _ in $(seq 1 120); do
    case "$(get /style.css)" in *"200"*) break ;; esac
    sleep 0.5
done
answer=$(get "/pair?code=$code")
kill_in_root
wait "$web" 2>/dev/null || true
case "$answer" in *"303"*) ;; *) fail "rideguard-web did not pair (answered '$answer'): $(tail -5 "$root/tmp/web.out")" ;; esac
in_root rideguard web sessions --config /tmp/web.yaml | grep -q "paired" || fail "the pairing by rideguard-web is not in the database"
echo "check-deb-arm64: rideguard-web paired a phone as its own user"
echo "check-deb-arm64: rideguard $version installs and runs in trixie arm64 ($(( $(date +%s) - started )) s)"
