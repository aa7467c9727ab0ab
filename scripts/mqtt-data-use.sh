#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The data the agent's MQTT link uses while riding, measured on the wire: Debian's Mosquitto on
# loopback with TLS and a password (as a fleet's broker), gpsd fed by gpsfake with a rider moving at
# 50 km/h (a fix a second), the release `rideguard run` (after `swift build -c release`) with a
# synthetic normal ride on the simulated IMU and the defaults keepalive_s 30, state_interval_s 30.
# After MINUTES (default 10) it reads the agent's TCP connection to the broker (`ss -ti`: the bytes
# and segments both ways, TLS included) and adds 52 bytes of IPv4 + TCP headers a segment.
#   scripts/mqtt-data-use.sh [MINUTES]
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-10}
binary=.build/release/rideguard
[ -x "$binary" ] || { echo "mqtt-data-use: build it first: swift build -c release --product rideguard" >&2; exit 1; }
work=$(mktemp -d /tmp/rideguard-data-use.XXXXXX)
chmod 0777 "$work"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$work"' EXIT
port=$(( 26000 + RANDOM % 2000 )); gps_port=$(( port + 2000 ))

openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=ca -keyout "$work/ca.key" -out "$work/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout "$work/server.key" -out "$work/server.csr" 2>/dev/null
printf 'subjectAltName=DNS:localhost\n' > "$work/san.ext"
openssl x509 -req -in "$work/server.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" -CAcreateserial -days 2 \
    -extfile "$work/san.ext" -out "$work/server.crt" 2>/dev/null
chmod 0644 "$work/server.key"
mosquitto_passwd -b -c "$work/passwd" bike1 secret
chmod 0644 "$work/passwd"
printf 'secret\n' > "$work/password"
cat > "$work/mosquitto.conf" <<EOF
allow_anonymous false
password_file $work/passwd
listener $port 127.0.0.1
cafile $work/ca.crt
certfile $work/server.crt
keyfile $work/server.key
EOF
mosquitto -c "$work/mosquitto.conf" 2>"$work/mosquitto.log" & pids+=($!)

# A rider going north at 50 km/h, one RMC + GGA a second.
python3 - "$work/ride.nmea" $(( minutes * 60 + 120 )) <<'PY'
import sys, functools, operator
out, seconds = sys.argv[1], int(sys.argv[2])
def sentence(body):
    return "$%s*%02X\r\n" % (body, functools.reduce(operator.xor, body.encode(), 0))
with open(out, "w") as f:
    lat = 45.1
    for i in range(seconds):
        lat += 13.9 / 111_320
        d = int(lat); m = (lat - d) * 60
        hh, mm, ss = 10 + i // 3600, (i // 60) % 60, i % 60
        t = "%02d%02d%02d.00" % (hh, mm, ss)
        la = "%02d%07.4f" % (d, m)
        f.write(sentence("GPRMC,%s,A,%s,N,00542.0000,E,27.0,0.0,261126,,,A" % (t, la)))
        f.write(sentence("GPGGA,%s,%s,N,00542.0000,E,1,09,0.9,200.0,M,47.0,M,," % (t, la)))
PY
gpsfake -q -c 0.5 -P "$gps_port" "$work/ride.nmea" >"$work/gpsfake.log" 2>&1 & pids+=($!)

"$binary" synth --out "$work/traces" --scenario normal_ride --count 1 --seed 7 >/dev/null
trace=$(ls "$work"/traces/*.csv | head -1)
"$binary" contacts add Sam "+33612345678" --database "$work/rideguard.sqlite" >/dev/null
cat > "$work/config.yaml" <<EOF
imu:
  simulated: true
  trace: $trace
gpio:
  simulated: true
gps:
  gpsd: "127.0.0.1:$gps_port"
modem:
  simulated: true
mqtt:
  url: mqtts://localhost:$port
  username: bike1
  password_file: $work/password
  ca_file: $work/ca.crt
  device: bike1
database: $work/rideguard.sqlite
control_socket: $work/control.sock
EOF
sleep 2
"$binary" run --config "$work/config.yaml" >"$work/agent.log" 2>&1 & agent=$!; pids+=($agent)
echo "mqtt-data-use: riding for $minutes min…"
sleep $(( minutes * 60 ))
info=$(ss -tinpH "dport = :$port" | tr '\n' ' ')
kill "$agent"
value() { grep -o "$1:[0-9]*" <<<"$info" | head -1 | cut -d: -f2; }
sent=$(value bytes_sent); received=$(value bytes_received); segs_out=$(value segs_out); segs_in=$(value segs_in)
[ -n "$sent" ] || { echo "mqtt-data-use: no connection to the broker found; the agent said:" >&2; tail "$work/agent.log" >&2; exit 1; }
total=$(( sent + received + (segs_out + segs_in) * 52 ))
echo "mqtt-data-use: $minutes min: sent $sent B, received $received B (TLS payload), $segs_out + $segs_in segments;" \
     "with headers $total B: $(( total * 60 / minutes / 1024 )) KiB an hour"
