#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The agent's CPU time and memory: `rideguard run` on simulated hardware with the IMU at 1 kHz,
# started cold (the binary's pages dropped from the page cache, as at boot), sampled every 10 s.
#   scripts/agent-footprint.sh [SECONDS] [BINARY]    (defaults: 600, the `make` build)
# Targets: under 0.5 % of one core, peak RSS at most 21 MB, not growing; wake-ups per second shown.
set -euo pipefail
seconds=${1:-600}
binary=$(realpath "${2:-.build/release/rideguard}")
[ -x "$binary" ] || { echo "no binary at $binary: run make first" >&2; exit 1; }
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT

# An hour of normal riding at 1 kHz, so that the trace never runs out.
"$binary" synth --out "$work/trace" --seed 5 --count 1 --scenario normal_ride --rate 1000 --riding-scale 4 >/dev/null
cat > "$work/config.yaml" <<YAML
imu:
  simulated: true
  trace: $(ls "$work"/trace/*.csv)
  rate_hz: 1000
gpio:
  simulated: true
gps:
  simulated: true
  fixed_position: [45.1, 5.7]
modem:
  simulated: true
database: $work/rideguard.sqlite
control_socket: $work/control.sock
YAML
"$binary" contacts add Sam +33612345678 --database "$work/rideguard.sqlite" >/dev/null
"$binary" message set "Crash: call me" --database "$work/rideguard.sqlite" >/dev/null

# Cold start: drop the binary's cached pages (dd's nocache flag asks for POSIX_FADV_DONTNEED).
dd if="$binary" iflag=nocache count=0 status=none
"$binary" run --config "$work/config.yaml" > "$work/agent.log" 2>&1 &
pid=$!
ticks=$(getconf CLK_TCK)
status() { awk -v key="$1" '$1 == key ":" { print $2 }' /proc/$pid/status; }
# Wake-ups: the context switches of every thread, voluntary and not, since the start.
switches() { cat /proc/$pid/task/*/status 2>/dev/null | awk '/ctxt_switches/ { n += $2 } END { print n }'; }
printf '%6s %10s %10s %10s %10s %8s %10s\n' "time" "RSS kB" "anon kB" "file kB" "peak kB" "CPU %" "wakeups/s"
for ((t = 10; t <= seconds; t += 10)); do
    sleep 10
    kill -0 $pid 2>/dev/null || { echo "the agent stopped:" >&2; cat "$work/agent.log" >&2; exit 1; }
    cpu=$(awk '{ print $14 + $15 }' /proc/$pid/stat)
    printf '%5ss %10s %10s %10s %10s %8s %10s\n' $t "$(status VmRSS)" "$(status RssAnon)" "$(status RssFile)" "$(status VmHWM)" \
        "$(echo "scale=2; $cpu * 100 / $ticks / $t" | bc)" "$(( $(switches) / t ))"
done
