#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A fleet at scale, measured: DEVICES simulated bikes (a load generator publishing as agents do:
# status with a will, the retained state every 30 s, an event a minute with its seq) and the real
# agent (the release `rideguard run`, a crash on the simulated IMU) on Debian's Mosquitto, with
# `rideguard fleet watch --json` as the dispatcher. The real agent reaches the central broker
# through a regional one bridged to it, as a fleet spread over regions would. Prints how many
# events the watch saw of those published, and how late (publish → printed by the watch).
#   scripts/fleet-scale.sh [DEVICES] [SECONDS]      (after swift build -c release --product rideguard)
set -euo pipefail
cd "$(dirname "$0")/.."
devices=${1:-500}
seconds=${2:-120}
binary=$(pwd)/.build/release/rideguard
[ -x "$binary" ] || { echo "fleet-scale: build it first: swift build -c release --product rideguard" >&2; exit 1; }
bash scripts/install-deps.sh mosquitto python3-paho-mqtt >/dev/null
ulimit -n 8192
work=$(mktemp -d /tmp/rideguard-fleet-scale.XXXXXX)
mkdir -p "$work/agent"
chmod 0755 "$work"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
central=$(( 24000 + RANDOM % 1000 )); regional=$(( central + 1000 ))

cat > "$work/central.conf" <<EOF
listener $central 127.0.0.1
allow_anonymous true
max_queued_messages 10000
EOF
cat > "$work/regional.conf" <<EOF
listener $regional 127.0.0.1
allow_anonymous true
connection central
address 127.0.0.1:$central
topic rideguard/# out 1
cleansession false
EOF
mosquitto -c "$work/central.conf" 2>"$work/central.log" & pids+=($!)
mosquitto -c "$work/regional.conf" 2>"$work/regional.log" & pids+=($!)
sleep 1

# The dispatcher: each line the watch prints, stamped with the time it came.
"$binary" fleet watch --broker "mqtt://127.0.0.1:$central" --json 2>"$work/watch.err" \
    | /usr/bin/python3 -u -c 'import sys, time
for line in sys.stdin: print("%.3f\t%s" % (time.time(), line.rstrip()), flush=True)' > "$work/watch.tsv" & pids+=($!)
sleep 1

# The simulated bikes, 200 a process (paho's loop uses select(), which stops at 1024 descriptors,
# three a client): what each published is listed in published-*.tsv (device, seq, t).
cat > "$work/bikes.py" <<'PY'
import json, random, sys, threading, time
import paho.mqtt.client as mqtt
port, first, devices, seconds, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
lock = threading.Lock()
published = open(out, "w")
clients = []
for i in range(first, first + devices):
    name = "sim%03d" % i
    c = mqtt.Client(client_id="rideguard-" + name, clean_session=False)
    c.will_set("rideguard/%s/status" % name, "offline", qos=1, retain=True)
    c.connect("127.0.0.1", port, keepalive=30)
    c.loop_start()
    c.publish("rideguard/%s/status" % name, "online", qos=1, retain=True)
    clients.append((name, c))
start = time.time()
seq = {name: 0 for name, _ in clients}
next_state = {name: start + random.uniform(0, 30) for name, _ in clients}
next_event = {name: start + random.uniform(0, 60) for name, _ in clients}
lat0, lon0 = 45.76, 4.83
while time.time() - start < seconds:
    now = time.time()
    for name, c in clients:
        if now >= next_state[name]:
            state = {"state": "armed", "context": "riding", "sensor": "ok", "lat": lat0 + random.uniform(-0.2, 0.2),
                     "lon": lon0 + random.uniform(-0.2, 0.2), "speed": 40, "fix_age_s": 1, "t": int(now)}
            c.publish("rideguard/%s/state" % name, json.dumps(state), qos=1, retain=True)
            next_state[name] = now + 30
        if now >= next_event[name]:
            seq[name] += 1
            event = {"seq": seq[name], "event": "modem_ready", "t": round(now, 3), "summary": "ready, network home"}
            c.publish("rideguard/%s/event" % name, json.dumps(event), qos=1)
            with lock:
                published.write("%s\t%d\t%.3f\n" % (name, seq[name], now))
            next_event[name] = now + 60
    time.sleep(0.05)
time.sleep(3)
published.close()
for _, c in clients:
    c.disconnect()
PY
generators=()
for (( first = 0; first < devices; first += 200 )); do
    count=$(( devices - first < 200 ? devices - first : 200 ))
    /usr/bin/python3 "$work/bikes.py" "$central" "$first" "$count" "$seconds" "$work/published-$first.tsv" & generators+=($!)
done
pids+=("${generators[@]}")

# The real agent, on the regional broker: a crash, its countdown and alert, all simulated.
"$binary" contacts add Sam "+33612345678" --database "$work/agent/rideguard.sqlite" >/dev/null
cat > "$work/agent/config.yaml" <<EOF
imu: {simulated: true, trace: $(pwd)/Tests/Fixtures/example-lowside.csv}
gpio: {simulated: true}
gps: {simulated: true, fixed_position: [45.1, 5.7]}
modem: {simulated: true}
workflow: {countdown_s: 10}
mqtt: {url: "mqtt://127.0.0.1:$regional", device: real-bike}
database: $work/agent/rideguard.sqlite
control_socket: $work/agent/control.sock
EOF
"$binary" run --config "$work/agent/config.yaml" >"$work/agent.log" 2>&1 & pids+=($!)
echo "fleet-scale: $devices simulated bikes and the real agent (through a bridged regional broker) for $seconds s…"
wait "${generators[@]}"
sleep 2
cat "$work"/published-*.tsv > "$work/published.tsv"

/usr/bin/python3 - "$work/published.tsv" "$work/watch.tsv" "$work/agent/rideguard.sqlite" <<'PY'
import json, sqlite3, sys
published = {}
for line in open(sys.argv[1]):
    name, seq, t = line.split("\t")
    published[(name, int(seq))] = float(t)
seen, late, real = {}, [], []
for line in open(sys.argv[2]):
    arrival, text = line.rstrip("\n").split("\t", 1)
    event = json.loads(text)
    key = (event["device"], event.get("seq"))
    if event["device"] == "real-bike":
        real.append((event["event"], float(arrival) - event["t"]))
    elif key in published and key not in seen:
        seen[key] = float(arrival) - published[key]
lat = sorted(seen.values())
p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] if lat else float("nan")
print("fleet-scale: the watch printed %d of the %d events the simulated bikes published; latency median %.3f s, p99 %.3f s, max %.3f s"
      % (len(seen), len(published), p(0.5), p(0.99), lat[-1] if lat else float("nan")))
stored = [row[0] for row in sqlite3.connect(sys.argv[3]).execute("SELECT json FROM events ORDER BY seq")]
names = [json.loads(j)["event"] for j in stored]
print("fleet-scale: the real agent's %d events through the bridge: %s" % (len(real), ", ".join("%s %.2f s" % r for r in real)))
print("fleet-scale: the real agent recorded %d: %s" % (len(names), ", ".join(names)))
PY
