#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Updates a rider can trust, proved in Debian trixie and bookworm arm64 roots under qemu-user (the
# two Raspberry Pi OS releases), against the signed repository served over loopback HTTP:
#  - apt refuses the repository unsigned, signed by another key, or with a Packages file altered;
#  - version N−1 (this source, its version set to VERSION~previous) installs from the repository;
#    it is given contacts, a message, a paired phone, a journal, a message waiting in the outbox and
#    an edited /etc/rideguard/config.yaml (simulated hardware: a recorded crash plays), and runs;
#  - the crash's countdown starts, and `apt-get update && apt-get -y upgrade` to N runs during it:
#    the agent restarted on N resumes the countdown and the alert SMS goes out at the deadline;
#  - going back to N−1 over N's database: the agent runs, nothing lost;
#  - upgrading to N again: restarted and armed, `doctor` green; every record and the edited
#    configuration still there, no question asked.
# systemd cannot run as PID 1 in a qemu-user chroot: a stand-in `systemctl` (below) starts a unit's
# ExecStart as its User, as systemd would, so the maintainer scripts' calls do what they do on a Pi.
# The packages for N are build/rideguard_<version>+deb1{3,2}_arm64.deb, N−1's
# build/rideguard_<version>~previous+deb1{3,2}_arm64.deb (each made here when missing). Run as root.
#   scripts/check-repo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${RIDEGUARD_CACHE:-/var/cache/rideguard}
mirror=${RIDEGUARD_DEBIAN_MIRROR:-http://deb.debian.org/debian}
fail() { echo "check-repo: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "run as root (chroot)"
started=$(date +%s)
bash scripts/install-deps.sh --cross reprepro gnupg sqlite3 python3

# arm64 programs run through qemu-user: register it with the kernel where nothing did yet
# (F: the interpreter is opened now, so it also works inside the chroot).
if [ "$(dpkg --print-architecture)" != arm64 ] && [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
    [ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
    sed -n '/^:/p' /usr/lib/binfmt.d/qemu-aarch64.conf > /proc/sys/fs/binfmt_misc/register
fi

version=$(sed -n 's/.*static let version = "\(.*\)"/\1/p' Sources/RideGuardCommands/RideGuard.swift)
previous="$version~previous"
. scripts/targets.sh
work=$(mktemp -d /tmp/rideguard-repo-check.XXXXXX)
server=""
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

# N (from make repo) and N−1 (CI builds it before; one module compiled again), built where missing:
# remove build/*.deb to have them built from the source as it is now.
build_started=$(date +%s)
for release in trixie bookworm; do
    [ -e "build/rideguard_$version$(release_suffix $release)_arm64.deb" ] || bash scripts/build-package.sh "$release" arm64
    [ -e "build/rideguard_$previous$(release_suffix $release)_arm64.deb" ] || bash scripts/build-package.sh "$release" arm64 "$previous"
done
echo "check-repo: N−1 built in $(( $(date +%s) - build_started )) s"

# A throw-away archive key, and another one apt was never given.
export GNUPGHOME="$work/gnupg"
mkdir -m 0700 "$GNUPGHOME"
gpg --batch --passphrase '' --quick-gen-key "RideGuard test archive <archive@rideguard.invalid>" ed25519 sign never 2> /dev/null
gpg --batch --passphrase '' --quick-gen-key "Somebody else <else@example.invalid>" ed25519 sign never 2> /dev/null
key=$(gpg --batch --with-colons --list-secret-keys archive@rideguard.invalid | awk -F: '/^fpr/ { print $10; exit }')
other=$(gpg --batch --with-colons --list-secret-keys else@example.invalid | awk -F: '/^fpr/ { print $10; exit }')

# Two publications: N−1, then N over it (as a maintainer publishes a release).
repo_started=$(date +%s)
bash scripts/make-repo.sh --key "$key" --out "$work/repo" "build/rideguard_$previous+deb13_arm64.deb" "build/rideguard_$previous+deb12_arm64.deb" > /dev/null
cp -a "$work/repo/public" "$work/previous"
# A later second for N's files: python's http.server answers apt's If-Modified-Since with 304 Not
# Modified when a file's time is the same second, and apt would keep N−1's lists.
sleep 1
bash scripts/make-repo.sh --key "$key" --out "$work/repo" build/rideguard_"$version"+deb1[23]_*.deb | tail -9
echo "check-repo: the repository built in $(( $(date +%s) - repo_started )) s (N−1 then N)"
served="$work/served"
mkdir -p "$served"
# Three that apt must refuse, copies of N−1's: no signature; signed by another key; a Packages file
# changed after signing (same length: only the hash tells).
cp -a "$work/previous" "$served/unsigned"
rm -f "$served"/unsigned/dists/*/InRelease "$served"/unsigned/dists/*/Release.gpg
cp -a "$work/previous" "$served/otherkey"
for dist in "$served"/otherkey/dists/*/; do
    gpg --batch --yes --local-user "$other" --clearsign --output "$dist/InRelease" "$dist/Release"
    gpg --batch --yes --local-user "$other" --armor --detach-sign --output "$dist/Release.gpg" "$dist/Release"
done
cp -a "$work/previous" "$served/altered"
for packages in "$served"/altered/dists/*/main/binary-arm64/Packages; do
    sed -i 's/^Maintainer: RideGuard developers/Maintainer: RideGuard develoqers/' "$packages"
    gzip -9n < "$packages" > "$packages.gz"
    [ ! -e "$packages.xz" ] || xz -c < "$packages" > "$packages.xz"
done
# Each release's root reads its own path: N−1's publication until its upgrade, then N's.
for release in trixie bookworm; do ln -sfn "$work/previous" "$served/$release"; done
port=$(( 20000 + RANDOM % 20000 ))
python3 -m http.server --bind 127.0.0.1 --directory "$served" "$port" > "$work/http.log" 2>&1 &
server=$!
for _ in $(seq 1 50); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null && break; sleep 0.1; done

# What systemd would do with a unit, for the maintainer scripts (debhelper's: through
# deb-systemd-invoke) and the test: start runs its ExecStart as its User (with its
# RuntimeDirectory), stop sends SIGTERM and waits, restart is both, try-restart restarts a running one.
# The times of each stop and start are written to /run/rideguard-test/UNIT.times.
stand_in_systemctl() {
    cat <<'SYSTEMCTL'
#!/bin/bash
# A test stand-in for systemctl (scripts/check-repo.sh): systemd cannot run in this chroot.
state=/run/rideguard-test
mkdir -p "$state"
pid_of() { cat "$state/$1.pid" 2>/dev/null; }
active() { local pid; pid=$(pid_of "$1"); [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; }
start() {
    active "$1" && return 0
    local unit=/usr/lib/systemd/system/$1 exec user
    [ -e "$unit" ] || { echo "systemctl: no unit $1" >&2; return 5; }
    exec=$(sed -n 's/^ExecStart=//p' "$unit")
    user=$(sed -n 's/^User=//p' "$unit")
    install -d -o "$user" -g "$(id -gn "$user")" -m 0750 /run/rideguard
    # setpriv execs (runuser would fork, and under qemu-user does not pass SIGTERM on): the pid is the agent's.
    setsid setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups -- $exec >> "$state/$1.log" 2>&1 < /dev/null &
    echo $! > "$state/$1.pid"
    echo "started $(date +%s.%N) $!" >> "$state/$1.times"
}
stop() {
    local pid; pid=$(pid_of "$1")
    active "$1" || return 0
    kill -TERM "$pid"
    for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    echo "stopped $(date +%s.%N) $pid" >> "$state/$1.times"
}
# Options (--system, --quiet, --now …) are taken wherever they stand, as systemctl takes them.
words=()
for word in "$@"; do [ "$word" = "${word#-}" ] && words+=("$word"); done
command=${words[0]:-}
units=("${words[@]:1}")
case "$command" in
    daemon-reload|enable|disable) exit 0 ;;
    is-active) active "${units[0]}" ;;
    # What deb-systemd-invoke asks before a start or a restart: the links deb-systemd-helper made.
    is-enabled) ls /etc/systemd/system/*.wants/"${units[0]}" > /dev/null 2>&1 && echo enabled || { echo disabled; exit 1; } ;;
    start) for unit in "${units[@]}"; do start "$unit"; done ;;
    stop) for unit in "${units[@]}"; do stop "$unit"; done ;;
    restart) for unit in "${units[@]}"; do stop "$unit"; start "$unit"; done ;;
    # Restarts the units that run, and leaves the others stopped (what an upgrade's postinst asks).
    try-restart) for unit in "${units[@]}"; do if active "$unit"; then stop "$unit"; start "$unit"; fi; done ;;
    *) echo "systemctl (stand-in): $command is not handled" >&2; exit 1 ;;
esac
SYSTEMCTL
}

# Everything below, in RELEASE's arm64 root.
check_release() {
    local release=$1
    local suffix; suffix=$(release_suffix "$release")
    local say_started; say_started=$(date +%s)
    say() { echo "check-repo $release [$(( $(date +%s) - say_started )) s]: $*"; }
    rfail() { echo "check-repo $release: $*" >&2; exit 1; }
    local base="$cache/$release-arm64"
    if [ ! -e "$base/ready" ]; then
        say "making a Debian $release arm64 root in $base"
        rm -rf "$base"
        debootstrap --arch=arm64 --variant=minbase "$release" "$base" "$mirror" > "$cache/$release-arm64.log" 2>&1 \
            || { tail -20 "$cache/$release-arm64.log" >&2; rfail "debootstrap failed"; }
        echo 'Acquire::Check-Valid-Until "false";' > "$base/etc/apt/apt.conf.d/99rideguard"
        touch "$base/ready"
    fi
    # Not local: the exit trap (after the function returned) still needs them. Each release runs
    # in a subshell of its own.
    root=$(mktemp -d "$cache/$release-arm64-check.XXXXXX")
    mounts=()
    # Stops whatever runs in the root (runuser under qemu does not pass a signal on).
    kill_in_root() {
        for process in /proc/[0-9]*; do
            if [ "$(readlink "$process/root" 2>/dev/null)" = "$root" ]; then kill -9 "${process#/proc/}" 2>/dev/null || true; fi
        done
    }
    # shellcheck disable=SC2064
    trap "kill_in_root; for m in \${mounts[@]}; do umount \$m 2>/dev/null || umount -l \$m; done; rm -rf '$root'" EXIT
    cp -a "$base/." "$root/"
    mount -t proc proc "$root/proc"; mounts=("$root/proc" "${mounts[@]}")
    mount --bind /dev "$root/dev"; mounts=("$root/dev" "${mounts[@]}")
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }
    apt_get() { in_root env DEBIAN_FRONTEND=noninteractive apt-get -q -o Dpkg::Use-Pty=0 "$@"; }
    database="$root/var/lib/rideguard/rideguard.sqlite"
    sql() { sqlite3 -cmd ".timeout 5000" "$database" "$@"; }
    status_json() { in_root rideguard status --json 2>/dev/null; }
    answers() { status_json > /dev/null; }
    state() { status_json | sed -n 's/.*"state":"\([A-Za-z]*\)".*/\1/p'; }
    agent_pid() { cat "$root/run/rideguard-test/rideguard.service.pid" 2>/dev/null; }
    wait_for() {   # SECONDS DESCRIPTION COMMAND...
        local limit=$1 what=$2; shift 2
        for _ in $(seq 1 $(( limit * 2 ))); do "$@" && return 0; sleep 0.5; done
        rfail "no $what after $limit s: $(tail -15 "$root/run/rideguard-test/rideguard.service.log" 2>/dev/null)"
    }
    protecting() { in_root rideguard status 2>/dev/null | head -1 | grep -q '^Protecting'; }
    in_state() { [ "$(state)" = "$1" ]; }
    outbox_count() { sql "SELECT count(*) FROM outbox WHERE kind = '$1' AND status = 'sent'"; }
    sent() { [ "$(outbox_count "$1")" = "$2" ]; }

    # Trust: the archive's key where apt's documentation puts it, a deb822 source naming it.
    mkdir -p "$root/etc/apt/keyrings"
    cp "$work/repo/public/rideguard-archive-keyring.gpg" "$root/etc/apt/keyrings/"
    source_file() {
        printf 'Types: deb\nURIs: http://127.0.0.1:%s/%s\nSuites: %s\nComponents: main\nSigned-By: /etc/apt/keyrings/rideguard-archive-keyring.gpg\n' \
            "$port" "$1" "$release" > "$root/etc/apt/sources.list.d/rideguard.sources"
        rm -rf "$root"/var/lib/apt/lists/127.0.0.1*
    }
    local variant expected output
    for variant in unsigned otherkey altered; do
        case "$variant" in
            unsigned) expected="is not signed" ;;
            otherkey) expected="NO_PUBKEY ${other: -16}|Missing key $other|key ${other: -16} not found|signature.*${other: -16}" ;;
            altered) expected="Hash Sum mismatch|unexpected size" ;;
        esac
        source_file "$variant"
        if output=$(apt_get update 2>&1); then
            grep -qE "$expected" <<< "$output" || { echo "$output"; rfail "apt accepted the repository $variant"; }
        fi
        grep -qE "$expected" <<< "$output" || { echo "$output"; rfail "apt's refusal of $variant does not say /$expected/"; }
        ! in_root apt-cache policy rideguard 2>/dev/null | grep -q 'Candidate: [0-9]' || rfail "rideguard is installable from the repository $variant"
        say "apt refuses the repository $variant: $(grep -E "$expected" <<< "$output" | head -1 | cut -c1-160)"
    done

    # N−1 from the repository, with the stand-in systemd.
    mkdir -p "$root/run/systemd/system"
    stand_in_systemctl > "$root/usr/bin/systemctl"
    chmod 0755 "$root/usr/bin/systemctl"
    source_file "$release"
    apt_get update > "$root/tmp/apt.out" 2>&1 || { cat "$root/tmp/apt.out"; rfail "apt-get update failed"; }
    local install_started; install_started=$(date +%s)
    apt_get install -y --no-install-recommends rideguard > "$root/tmp/apt.out" 2>&1 || { tail -30 "$root/tmp/apt.out"; rfail "apt-get install rideguard failed"; }
    [ "$(in_root dpkg-query -W -f='${Version}' rideguard)" = "$previous$suffix" ] || rfail "installed $(in_root dpkg-query -W -f='${Version}' rideguard), not $previous$suffix"
    [ "$(in_root rideguard --version)" = "$previous" ] || rfail "rideguard --version says $(in_root rideguard --version)"
    say "installed $previous$suffix from the repository in $(( $(date +%s) - install_started )) s: $(in_root dpkg-query -W -f='Depends: ${Depends}' rideguard)"

    # The package's own checks: the default configuration, the example trace, the rescue card (libqrencode).
    in_root rideguard config check --config /etc/rideguard/config.yaml > /dev/null || rfail "the default configuration does not check"
    in_root rideguard replay /usr/share/rideguard/example-lowside.csv | grep -q "CRASH DETECTED" || rfail "replay of the example trace detected no crash"
    # The rider's records, the way a rider makes them.
    in_root rideguard setup --no-input --name Alex --contact "Sam=+33 6 12 34 56 78" --message "I may have crashed. Call me." > /dev/null
    in_root rideguard card --terminal > "$root/tmp/card.out" && grep -q "▀" "$root/tmp/card.out" || rfail "rideguard card drew no QR code"
    # The installer's edits: simulated hardware playing the recorded crash at half speed (the crash
    # about 50 s after the agent starts), the countdown at 150 s (an upgrade under qemu-user on a
    # loaded machine took 89 s: a 60 s countdown ended during it), the page on a port of its own.
    local web_port
    case "$release" in trixie) web_port=$(( port + 1 )) ;; bookworm) web_port=$(( port + 2 )) ;; esac
    cat > "$root/etc/rideguard/config.yaml" <<CONFIG
# Edited by the installer (check-repo): a bench Pi with simulated hardware.
imu:
  simulated: true
  trace: /usr/share/rideguard/example-lowside.csv
  speed: 0.5
gpio:
  simulated: true
gps:
  simulated: true
  fixed_position: [45.76420, 4.83566]
modem:
  simulated: true
workflow:
  countdown_s: 150
web:
  listen: 127.0.0.1:$web_port
CONFIG
    local config_sum; config_sum=$(md5sum < "$root/etc/rideguard/config.yaml")
    # A paired phone: the page, as its own user, spends a pairing code.
    local code; code=$(in_root rideguard web pair 2>/dev/null | grep -o 'code=[a-z0-9]*' | cut -d= -f2)
    in_root runuser -u rideguard-web -- rideguard web serve --config /etc/rideguard/config.yaml > "$root/tmp/web.out" 2>&1 &
    get() { bash -c 'exec 3<>/dev/tcp/127.0.0.1/$1 && printf "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n" "$2" >&3 && head -1 <&3' _ "$web_port" "$1" 2>/dev/null; }
    for _ in $(seq 1 120); do case "$(get /style.css)" in *200*) break ;; esac; sleep 0.5; done
    local answer; answer=$(get "/pair?code=$code")
    kill_in_root
    case "$answer" in *303*) ;; *) rfail "rideguard-web did not pair (answered '$answer'): $(tail -5 "$root/tmp/web.out")" ;; esac
    # A message waiting for its retry: no modem at this path.
    in_root rideguard sms send --to "+44 7700 900123" --text "RideGuard: a test before the upgrade" --device /dev/rideguard-no-modem --timeout 2 > /dev/null 2>&1 || true
    [ "$(sql "SELECT count(*) FROM outbox WHERE status = 'pending' AND kind = 'manual'")" = 1 ] || rfail "no message waiting in the outbox"
    # Every record as it is now, to compare after each package change: one line each (texts in hex,
    # since a message may hold line breaks). The outbox and the journal only grow: those made
    # before must all be there after.
    records() {
        sql "SELECT 'contact', id, hex(name), number FROM contacts ORDER BY id;
             SELECT 'setting', key, hex(value) FROM settings WHERE key IN ('message', 'rider_name') ORDER BY key;
             SELECT 'session', id, hex(label), created FROM web_sessions ORDER BY id;"
    }
    messages() { sql "SELECT id, recipient, hex(body) FROM outbox ORDER BY id"; }
    journal_ids() { sql "SELECT id FROM journal ORDER BY id"; }
    snapshot() { records > "$root/tmp/records.before"; messages > "$root/tmp/messages.before"; journal_ids > "$root/tmp/journal.before"; }
    snapshot
    grep -q '^session|' "$root/tmp/records.before" || rfail "no paired phone in the database"
    say "records: $(cut -d'|' -f1 "$root/tmp/records.before" | sort | uniq -c | tr -s ' ' | paste -sd,), $(wc -l < "$root/tmp/messages.before") outbox message(s), $(wc -l < "$root/tmp/journal.before") journal lines"
    still_there() {   # every record made before, every outbox message and journal line, as they were
        diff "$root/tmp/records.before" <(records) || rfail "records changed $1"
        comm -23 <(sort "$root/tmp/messages.before") <(messages | sort) | grep -q . && rfail "outbox messages lost or changed $1"
        comm -23 <(sort "$root/tmp/journal.before") <(journal_ids | sort) | grep -q . && rfail "journal lines lost $1"
        [ "$(md5sum < "$root/etc/rideguard/config.yaml")" = "$config_sum" ] || rfail "the edited configuration changed $1"
        say "every record, journal line and the edited configuration still there $1"
    }

    # The agent, as its unit runs it.
    in_root systemctl start rideguard.service
    wait_for 90 "protection from $previous" protecting
    local old_pid; old_pid=$(agent_pid)
    say "$previous runs (pid $old_pid) and protects"

    # Point 4: the crash's countdown, then the upgrade during it.
    wait_for 120 "countdown after the recorded crash" in_state alertCountdown
    local left; left=$(in_root rideguard status | sed -n 's/^state: alertCountdown (\([0-9]*\) s left)$/\1/p')
    [ -n "$left" ] || rfail "rideguard status gives no countdown: $(in_root rideguard status)"
    local deadline; deadline=$(python3 -c "import time; print(time.time() + $left)")
    say "countdown: $left s left; upgrading"
    ln -sfn "$work/repo/public" "$served/$release"
    local upgrade_started; upgrade_started=$(date +%s.%N)
    { apt_get update && apt_get -y upgrade; } > "$root/tmp/upgrade.out" 2>&1 < /dev/null || { tail -30 "$root/tmp/upgrade.out"; rfail "the upgrade failed"; }
    local upgraded; upgraded=$(date +%s.%N)
    grep -qi "configuration file" "$root/tmp/upgrade.out" && rfail "the upgrade asked about a configuration file"
    [ "$(in_root dpkg-query -W -f='${Version}' rideguard)" = "$version$suffix" ] || rfail "the upgrade left $(in_root dpkg-query -W -f='${Version}' rideguard)"
    local new_pid; new_pid=$(agent_pid)
    [ "$new_pid" != "$old_pid" ] && kill -0 "$new_pid" || rfail "the upgrade did not restart the agent"
    wait_for 60 "answer from the restarted agent" answers
    local answered; answered=$(date +%s.%N)
    local stopped; stopped=$(sed -n 's/^stopped \([0-9.]*\) .*/\1/p' "$root/run/rideguard-test/rideguard.service.times" | tail -1)
    say "upgraded to $version$suffix in $(python3 -c "print(f'{$upgraded - $upgrade_started:.1f}')") s; the agent was down $(python3 -c "print(f'{$answered - $stopped:.1f}')") s (stopped → the new one answering, under qemu-user), and resumed in $(state)"
    grep -q "resumed in state alertCountdown after a restart" <(in_root rideguard events) || rfail "the journal does not say the countdown resumed"
    wait_for $(python3 -c "import time; print(max(30, int($deadline - time.time()) + 40))") "alert SMS" sent alert 1
    local sent; sent=$(sql "SELECT min(created_at) FROM outbox WHERE kind = 'alert'")
    local late; late=$(python3 -c "print(f'{$sent - $deadline:.1f}')")
    python3 -c "import sys; sys.exit(0 if -2 <= $late <= 10 else 1)" || rfail "the alert was queued ${late} s after the countdown's deadline"
    [ "$(sql "SELECT count(*) FROM outbox WHERE kind = 'alert'")" = 1 ] || rfail "$(sql "SELECT count(*) FROM outbox WHERE kind = 'alert'") alerts for one contact"
    say "the alert SMS went out ${late} s from the countdown's deadline, once: $(grep -c "SMS to" "$root/run/rideguard-test/rideguard.service.log") SMS in the agent's log"
    wait_for 60 "the waiting message sent on a retry" sent manual 1
    still_there "after the upgrade during the countdown"
    # The rider: "I'm fine" (held 3 s after the alert: the all-clear), then protection again.
    in_root rideguard ctl press --hold 3.5 > /dev/null
    wait_for 30 "end of the emergency" in_state emergencyEnded
    snapshot

    # Point 5: back to N−1 over N's database, from apt's own cache.
    local older="" candidate
    for candidate in "$root"/var/cache/apt/archives/rideguard_"$version"*previous"$suffix"_arm64.deb; do   # ~ may be kept or escaped
        if [ -e "$candidate" ]; then older=$candidate; fi
    done
    [ -n "$older" ] || rfail "N−1 is not in apt's cache: $(ls "$root/var/cache/apt/archives")"
    apt_get install -y --allow-downgrades "/var/cache/apt/archives/$(basename "$older")" > "$root/tmp/downgrade.out" 2>&1 < /dev/null \
        || { tail -30 "$root/tmp/downgrade.out"; rfail "the downgrade failed"; }
    [ "$(in_root rideguard --version)" = "$previous" ] || rfail "the downgrade left $(in_root rideguard --version)"
    old_pid=$(agent_pid)
    wait_for 60 "answer from $previous over $version's database" answers
    in_root rideguard ctl press --hold 0.3 > /dev/null
    wait_for 40 "protection from $previous after going back" protecting
    sleep 5
    [ "$(agent_pid)" = "$old_pid" ] && kill -0 "$old_pid" || rfail "$previous did not keep running over $version's database"
    say "went back to $previous: it runs and protects"
    still_there "after going back"

    # Point 3: the upgrade once more, nothing under way: restarted, armed, doctor green.
    apt_get -y upgrade > "$root/tmp/upgrade.out" 2>&1 < /dev/null || { tail -30 "$root/tmp/upgrade.out"; rfail "the second upgrade failed"; }
    [ "$(in_root rideguard --version)" = "$version" ] || rfail "the second upgrade left $(in_root rideguard --version)"
    [ "$(agent_pid)" != "$old_pid" ] || rfail "the second upgrade did not restart the agent"
    wait_for 60 "protection after the upgrade" protecting
    in_root rideguard doctor --gps-wait 2 --modem-wait 2 > "$root/tmp/doctor.out" 2>&1 || { cat "$root/tmp/doctor.out"; rfail "doctor is not green after the upgrade"; }
    say "upgraded again: restarted, protecting, doctor green ($(grep -c '^✓' "$root/tmp/doctor.out") checks)"
    still_there "after the second upgrade"
    say "passed"
}

for release in trixie bookworm; do
    ( check_release "$release" ) > "$work/$release.log" 2>&1 &
    eval "check_$release=$!"
done
status=0
for release in trixie bookworm; do
    pid_var="check_$release"
    result=0
    wait "${!pid_var}" || result=$?
    cat "$work/$release.log"
    [ "$result" -eq 0 ] || { echo "check-repo: $release failed"; status=1; }
done
for release in trixie bookworm; do
    for arch in arm64 amd64; do
        deb="build/rideguard_$version$(release_suffix $release)_$arch.deb"
        [ -e "$deb" ] && echo "check-repo: $(basename "$deb"): $(du -k "$deb" | cut -f1) kB"
    done
done
echo "check-repo: $( [ $status -eq 0 ] && echo passed || echo FAILED ) in $(( $(date +%s) - started )) s"
exit $status
