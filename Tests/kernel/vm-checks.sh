#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The VM's /init (busybox sh): RideGuard against a real kernel's GPIO and IIO. scripts/vm-test.sh
# boots Debian's kernel with this, the rideguard binary, our test-only modules and a trace.
#   - gpio-sim lines named GPIO17 (the button), GPIO18 (the buzzer) and GPIO22 (the ignition, through
#     an optocoupler), read and driven through sysfs as an outside circuit would: a press is the
#     line's pull going down, and so is the ignition switched on;
#   - rideguard-imu-sim, an MPU6050-like IIO device fed with the trace, read through libiio's local:
# Every check prints "vm-test: ok - …" or "vm-test: not ok - …"; the last line counts them.
# RIDEGUARD_VM_BREAK=buzzer|button|axes|noint on the kernel command line breaks the wiring on
# purpose, to show that the checks fail when the buzzer does not toggle, a press is not seen, an
# IMU's axes are swapped or its INT wire carries nothing.

export PATH=/bin:/sbin:/usr/bin:/usr/sbin
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /tmp /run /var/lib/rideguard
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "vm-test: ok - $*"; }
bad() { fail=$((fail + 1)); echo "vm-test: not ok - $*"; }
finish() {
    echo "vm-test: $pass passed, $fail failed"
    sync
    poweroff -f
}
# waits up to $2 seconds for the agent's log to contain $1 ($3 times, default once)
wait_log() {
    i=0
    while [ $i -lt $(($2 * 10)) ]; do
        [ "$(grep -c "$1" /tmp/agent.log 2>/dev/null)" -ge "${3:-1}" ] && return 0
        usleep 100000
        i=$((i + 1))
    done
    return 1
}

break=$(sed -n 's/.*RIDEGUARD_VM_BREAK=\([a-z]*\).*/\1/p' /proc/cmdline)
echo "vm-test: kernel $(uname -r), $(nproc) CPU, break=${break:-nothing}"

for module in configfs industrialio kfifo_buf gpio-sim-rg rideguard-imu-sim; do
    insmod /modules/$module.ko || { bad "insmod $module"; finish; }
done
mount -t configfs configfs /sys/kernel/config

# A gpio-sim chip with the Pi's line names, as the Pi's pinctrl names them.
sim=/sys/kernel/config/gpio-sim/rideguard
mkdir $sim $sim/bank0
echo rideguard-vm > $sim/bank0/label
echo 28 > $sim/bank0/num_lines
for n in 17 18 22 27; do
    mkdir $sim/bank0/line$n
    echo GPIO$n > $sim/bank0/line$n/name
done
echo 1 > $sim/live
lines=/sys/devices/platform/$(cat $sim/dev_name)/$(cat $sim/bank0/chip_name)
[ -e $lines/sim_gpio17/pull ] && ok "gpio-sim chip $(cat $sim/bank0/chip_name) with GPIO17/GPIO18" || { bad "gpio-sim lines at $lines"; finish; }
echo pull-up > $lines/sim_gpio17/pull   # the button's pull-up, released

# The button as the rider would: the line pulled to ground while held.
button_line=17
[ "$break" = button ] && button_line=27
press() { echo pull-down > $lines/sim_gpio$button_line/pull; }
release() { echo pull-up > $lines/sim_gpio$button_line/pull; }

buzzer=GPIO18
[ "$break" = buzzer ] && buzzer=GPIO27
mkdir -p /etc/rideguard
cat > /etc/rideguard/config.yaml <<YAML
imu:
  device: rideguard-imu-sim
  rate_hz: $(cat /feed/rate)
gpio:
  buzzer: $buzzer
  button: GPIO17
  ignition: GPIO22
power:
  shutdown_after_ignition_off_s: 10
  shutdown_command: /bin/touch /tmp/poweroff-requested
gps:
  simulated: true
  fixed_position: [48.85837, 2.29448]
modem:
  simulated: true
workflow:
  countdown_s: 20
database: /var/lib/rideguard/rideguard.sqlite
control_socket: /run/rideguard/control.sock
YAML
rideguard config check || bad "config check"
rideguard contacts add Anna "+33 6 12 34 56 78" > /dev/null || bad "contacts add"
# Anna was asked by SMS (the simulated modem prints it); the rider called her.
rideguard contacts confirm Anna > /dev/null || bad "contacts confirm"
rideguard message set "I may have crashed. Please call me." > /dev/null || bad "message set"
# The device takes whole records per write: dd writes blocks of 100 records.
feed() { dd if="$1" of=/dev/rideguard-imu-sim bs=2400 2>/dev/null; }

# --- The IMU through libiio's local backend: the rate and 1 g at rest.
feed /feed/rest.bin
rideguard record --device rideguard-imu-sim --rate "$(cat /feed/rate)" --duration 4 --out /tmp/rest.csv
awk -F, -v rate="$(cat /feed/rate)" '
    /^#/ || /^time_s/ { next }
    { if (n == 0) first = $1; last = $1; n++; g2 += ($2 * $2 + $3 * $3 + $4 * $4) / (9.80665 * 9.80665) }
    END {
        measured = (n - 1) / (last - first); mean = g2 / n   # busybox awk has no sqrt: |a|² in g²
        printf "vm-test: recorded %d samples, %.1f Hz (nominal %d), mean |a|² %.3f g²\n", n, measured, rate, mean
        exit !(n > 2 * rate && measured > 0.9 * rate && measured < 1.1 * rate && mean > 0.94 && mean < 1.06)
    }' /tmp/rest.csv && ok "record: the IIO device's rate and 1 g at rest" || bad "record: rate or 1 g at rest"

# --- The same device through Debian's iiod and libiio's network backend: a stop leaves no error.
ifconfig lo 127.0.0.1 up
iiod > /tmp/iiod.log 2>&1 &
iiod_pid=$!
i=0   # until it listens on 30431 (0x76DF)
while [ $i -lt 150 ] && ! grep -q ':76DF 0\{8\}:0000 0A\|:76DF 0\{32\}:0000 0A' /proc/net/tcp /proc/net/tcp6 2>/dev/null; do
    usleep 100000
    i=$((i + 1))
done
if ! kill -0 $iiod_pid 2>/dev/null; then wait $iiod_pid; echo "vm-test: iiod exited with $?: $(cat /tmp/iiod.log)"; fi
rideguard record --uri ip:127.0.0.1 --device rideguard-imu-sim --rate "$(cat /feed/rate)" --duration 3 --out /tmp/net.csv \
    > /tmp/net.out 2> /tmp/net.err
status=$?
cat /tmp/net.err
samples=$(grep -c '^[0-9]' /tmp/net.csv 2>/dev/null)
[ $status -eq 0 ] && [ "${samples:-0}" -gt "$(( $(cat /feed/rate) * 2 ))" ] && ok "record through iiod over the network backend ($samples samples)" \
    || { bad "record through iiod (exit $status, ${samples:-0} samples)"; cat /tmp/iiod.log; }
! grep -q "ERROR" /tmp/net.err && ok "stopping the network recording leaves libiio nothing to complain about" || bad "libiio printed an error on stop"
kill $iiod_pid 2>/dev/null

# --- doctor on healthy lines, then on a line that is taken and on one that does not exist.
rideguard doctor > /tmp/doctor.out 2>&1
status=$?
cat /tmp/doctor.out
[ $status -eq 0 ] && ! grep -q "✗" /tmp/doctor.out && ok "doctor passes on healthy lines and IMU" || bad "doctor on healthy hardware (exit $status)"

base=
for chip in /sys/class/gpio/gpiochip*; do
    [ "$(cat $chip/label)" = rideguard-vm ] && base=$(cat $chip/base)
done
echo $((base + 17)) > /sys/class/gpio/export   # sysfs takes the button's line, as another program would
rideguard doctor > /tmp/doctor.out 2>&1
status=$?
cat /tmp/doctor.out
[ $status -ne 0 ] && grep "✗" /tmp/doctor.out | grep -q "GPIO17" && ok "doctor fails on a taken button line, naming it" || bad "doctor on a taken line (exit $status)"
echo $((base + 17)) > /sys/class/gpio/unexport

sed 's/button: GPIO17/button: GPIO5/' /etc/rideguard/config.yaml > /tmp/missing.yaml
rideguard doctor --config /tmp/missing.yaml > /tmp/doctor.out 2>&1
status=$?
cat /tmp/doctor.out
[ $status -ne 0 ] && grep "✗" /tmp/doctor.out | grep -q "GPIO5" && ok "doctor fails on a missing line, naming it" || bad "doctor on a missing line (exit $status)"

# --- The agent: a replayed fall on the kernel's IIO, the buzzer on the real line, a press on it.
rideguard run > /tmp/agent.log 2>&1 &
agent=$!
wait_log "armed: protecting" 60 && ok "agent armed on the real lines and IMU" || bad "agent did not arm"
# The agent requests the ignition's line with its pull-up (gpio-sim takes a consumer's bias as its
# pull): key off, as at start. Then the key is turned: the optocoupler pulls the line down.
wait_log "ignition off: the bike is parked" 5 && ok "the ignition's level is read at start (off)" || bad "the ignition's level at start was not read"
echo pull-down > $lines/sim_gpio22/pull
wait_log "ignition on: a ride may begin" 5 && ok "the key turned on GPIO22: ignition on" || bad "ignition on was not seen"
feed /feed/ride.bin &
feeder=$!
if wait_log "countdown of 20 s started" 150; then
    ok "crash detected from the fall played through the IIO device"
    # The buzzer's line as the circuit sees it, every 10 ms for 3 s.
    i=0 changes=0 high=0 previous=
    while [ $i -lt 300 ]; do
        value=$(cat $lines/sim_gpio18/value)
        [ "$value" = 1 ] && high=$((high + 1))
        [ -n "$previous" ] && [ "$value" != "$previous" ] && changes=$((changes + 1))
        previous=$value
        usleep 10000
        i=$((i + 1))
    done
    echo "vm-test: buzzer line GPIO18: $changes changes, high in $high of 300 reads"
    [ $changes -ge 4 ] && [ $high -ge 15 ] && [ $high -le 285 ] && ok "the buzzer line toggles during the countdown" \
        || bad "the buzzer line does not follow the countdown pattern"
    press
    sleep 2
    release
    wait_log "rider is fine" 10 && ok "a 2 s press on GPIO17 is the rider's 'I'm fine'" || bad "the press on GPIO17 was not seen"
    sleep 2
    i=0 high=0
    while [ $i -lt 50 ]; do
        [ "$(cat $lines/sim_gpio18/value)" = 1 ] && high=$((high + 1))
        usleep 20000
        i=$((i + 1))
    done
    [ $high -eq 0 ] && ok "the buzzer is silent after 'I'm fine'" || bad "the buzzer still sounds after 'I'm fine' ($high of 50 reads high)"
    sleep 20   # past the end of the countdown: nothing may go out
    # The alert starts with the rider's message (Anna's question went out at the start).
    ! grep -q "I may have crashed" /tmp/agent.log && ok "nothing sent after 'I'm fine'" || bad "an SMS went out after 'I'm fine'"
else
    bad "no countdown after the fall"
fi
kill $feeder 2>/dev/null

# --- The ignition: off parks the bike at once, on ends it (the detector's context, in status).
echo pull-up > $lines/sim_gpio22/pull
i=0
while [ $i -lt 50 ] && ! rideguard status 2>/dev/null | grep -q "bike: parked, ignition off"; do usleep 200000; i=$((i + 1)); done
rideguard status > /tmp/status.out
grep -q "bike: parked, ignition off" /tmp/status.out && wait_log "ignition off: the bike is parked" 1 2 \
    && ok "ignition off on GPIO22: journaled, and the bike is parked" || { bad "ignition off was not seen"; cat /tmp/status.out; }
# (At start the key may turn before the detector's first sample: that parking is then never said.)
unparked=$(grep -c "the bike is no longer parked" /tmp/agent.log)
echo pull-down > $lines/sim_gpio22/pull
i=0
while [ $i -lt 50 ] && ! rideguard status 2>/dev/null | grep -q "ignition on"; do usleep 200000; i=$((i + 1)); done
rideguard status > /tmp/status.out
grep -q "bike: \(stopped\|riding\), ignition on" /tmp/status.out && wait_log "the bike is no longer parked" 5 $((unparked + 1)) \
    && ok "ignition on: the bike is no longer parked" || { bad "ignition on was not seen"; cat /tmp/status.out; }
[ ! -e /tmp/poweroff-requested ] && ok "no power-off after an ignition off shorter than the delay" || bad "powered off too soon"
echo pull-up > $lines/sim_gpio22/pull
# The journal line comes first, then the command runs: give it a few seconds under emulation.
powered_off() { i=0; while [ $i -lt 100 ] && [ ! -e /tmp/poweroff-requested ]; do usleep 100000; i=$((i + 1)); done; [ -e /tmp/poweroff-requested ]; }
wait_log "powering the Pi off" 20 && powered_off && ok "ignition off for 10 s: the shutdown command ran" \
    || bad "no power-off 10 s after the ignition went off"
echo pull-down > $lines/sim_gpio22/pull

# --- The chip goes away and comes back: the agent stays up, says the button is gone, reopens both
# lines.
echo 0 > $sim/live
sleep 3
kill -0 $agent 2>/dev/null && rideguard status > /tmp/status.out && ok "agent runs and answers with the GPIO chip gone" || bad "agent after the chip went away"
cat /tmp/status.out
wait_log "button fault" 5 && grep -q "button:" /tmp/status.out && ok "the lost button is journaled and shown in status" || bad "the lost button is not reported"
echo 1 > $sim/live
lines=/sys/devices/platform/$(cat $sim/dev_name)/$(cat $sim/bank0/chip_name)   # a new chip: maybe a new name
echo pull-up > $lines/sim_gpio17/pull
wait_log "the button works again" 40 && ok "the button is reopened when the chip is back" || bad "the button was not reopened"
kill -0 $agent 2>/dev/null && rideguard status > /tmp/status.out && ok "agent runs and answers after the chip came back" || bad "agent after the chip came back"
# The reopened lines work: a 4 s hold raises a manual SOS, whose countdown the buzzer sounds on
# the requested-again line; a 2 s hold then cancels it.
press
sleep 4
release
wait_log "manual SOS" 10 && ok "a 4 s hold on the reopened button raises a manual SOS" || bad "no manual SOS from the reopened button"
i=0 changes=0 previous=
while [ $i -lt 200 ]; do
    value=$(cat $lines/sim_gpio18/value)
    [ -n "$previous" ] && [ "$value" != "$previous" ] && changes=$((changes + 1))
    previous=$value
    usleep 10000
    i=$((i + 1))
done
wait_log "buzzer back" 1 && [ $changes -ge 2 ] && ok "the buzzer line is requested again and sounds ($changes changes)" \
    || bad "the buzzer did not come back ($changes changes)"
press
sleep 2
release
wait_log "rider is fine: countdown cancelled" 10 2 && ok "a 2 s hold on the reopened button cancels it" || bad "the reopened button did not cancel the manual SOS"

kill -TERM $agent
wait $agent
echo "vm-test: agent exit $?"
echo "----- agent log"
cat /tmp/agent.log
echo "-----"

# --- The IMUs riders buy, through their own drivers.
. /imu-drivers.sh
finish
