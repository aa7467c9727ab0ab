#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# RideGuard under the real systemd, inside the VM of scripts/vm-systemd-test.sh: a unit of its own
# (rideguard-vm-checks.service, output on a console of its own: rideguard.tty=), started once basic.target is
# reached, without waiting for the boot to complete (that is one of the checks). The kernel's
# command line says which boot this is (rideguard.phase=install|firstboot|upgraded); each boot ends
# with its count, then powers off (or reboots, during a countdown).
#   checks.sh gpio    at every boot, before the agent (rideguard-vm-gpio.service): a gpio-sim chip
#                     whose lines are named as the Pi's: GPIO17 the button, GPIO18 the buzzer
# Every check prints "vm-systemd: ok - …" or "vm-systemd: not ok - …".
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
lib=/usr/local/lib/rideguard-vm
sim=/sys/kernel/config/gpio-sim/rideguard
state=/var/lib/rideguard-vm          # what one boot leaves for the next
# version, previous_version, deb, previous_deb: what vm-systemd-test.sh put here to install.
. $lib/packages

if [ "${1:-}" = gpio ]; then
    modprobe configfs
    mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
    modprobe gpio-sim-rg
    mkdir -p $sim/bank0
    echo rideguard-vm > $sim/bank0/label
    echo 28 > $sim/bank0/num_lines
    for n in 17 18 22; do
        mkdir -p $sim/bank0/line$n
        echo GPIO$n > $sim/bank0/line$n/name
    done
    echo 1 > $sim/live
    lines=/sys/devices/platform/$(cat $sim/dev_name)/$(cat $sim/bank0/chip_name)
    echo pull-up > $lines/sim_gpio17/pull   # the button's pull-up, released
    exit 0
fi

phase=$(sed -n 's/.*rideguard\.phase=\([a-z]*\).*/\1/p' /proc/cmdline)
tty=$(sed -n 's/.*rideguard\.tty=\([a-zA-Z0-9]*\).*/\1/p' /proc/cmdline)
break=$(sed -n 's/.*rideguard\.break=\([a-z]*\).*/\1/p' /proc/cmdline)
pass=0
fail=0
say() { echo "vm-systemd: $*"; }
ok() { pass=$((pass + 1)); say "ok - $*"; }
bad() { fail=$((fail + 1)); say "not ok - $*"; }
# finish [poweroff|reboot]
finish() {
    say "$pass passed, $fail failed"
    sync
    systemctl "${1:-poweroff}"
    exit 0
}
uptime_s() { cut -d' ' -f1 /proc/uptime; }
since() { awk -v a="$1" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }'; }
# wait_for SECONDS COMMAND…: true once COMMAND succeeds, polled every 0.2 s
wait_for() {
    local limit=$1 end
    shift
    end=$(awk -v u="$(uptime_s)" -v l="$limit" 'BEGIN { print u + l }')
    until "$@" > /dev/null 2>&1; do
        awk -v u="$(uptime_s)" -v e="$end" 'BEGIN { exit !(u >= e) }' && return 1
        sleep 0.2
    done
}
prop() { systemctl show -p "$2" --value "$1"; }
journal_has() { journalctl -b -u rideguard --no-pager -o cat | grep -q "$1"; }
status_has() { rideguard status 2>&1 | grep -q "$1"; }
active() { [ "$(systemctl is-active rideguard)" = active ]; }
lines() { echo "/sys/devices/platform/$(cat $sim/dev_name)/$(cat $sim/bank0/chip_name)"; }
press() { echo pull-down > "$(lines)/sim_gpio17/pull"; }
release() { echo pull-up > "$(lines)/sim_gpio17/pull"; }
# changes SECONDS: how often the buzzer's line changed level, read every 10 ms or so (a read and
# the clock are bash's own: a fork costs tens of ms under emulation)
changes() {
    local n=0 previous="" value file end
    file="$(lines)/sim_gpio18/value"
    end=$(( ${EPOCHREALTIME/./} + $1 * 1000000 ))
    while [ "${EPOCHREALTIME/./}" -lt "$end" ]; do
        read -r value < "$file"
        [ -n "$previous" ] && [ "$value" != "$previous" ] && n=$((n + 1))
        previous=$value
        sleep 0.01
    done
    echo $n
}
feed() { dd if="$lib/$1" of=/dev/rideguard-imu-sim bs=2400 2> /dev/null; }
# The hardware the agent is given from the first boot on: the gpio-sim lines, our IIO IMU, the modem
# on the USB serial adapter qemu makes of the host's fake modem (/dev/ttyUSB0: its SMS are checked
# there, by vm-systemd-test.sh); gpsd simulated (no GPS in this VM).
real_hardware() {
    cat > /etc/rideguard/config.yaml <<YAML
imu:
  device: rideguard-imu-sim
  rate_hz: $(cat $lib/rate)
gpio:
  buzzer: GPIO18
  button: GPIO17
gps:
  simulated: true
  fixed_position: [48.85837, 2.29448]
modem:
  device: /dev/ttyUSB0
workflow:
  countdown_s: 150
  manual_countdown_s: 60
web:
  address: 127.0.0.1   # the VM has no network but loopback: the address pairing links name
YAML
}

# An MPU-6050 on i2c-stub (the kernel's emulated SMBus adapter: a register file written with i2cset
# as the chip's data registers would be filled), through the kernel's own inv_mpu6050, wired both
# ways: first as most breakouts are, SDA/SCL without INT (`rideguard record` reads it polled), then
# with its INT line (our rideguard-int-wire makes the chip again with a data-ready interrupt at
# 200 Hz, as a Pi's `dtoverlay=i2c-sensor,mpu6050,int_pin=4` does: the driver's own trigger fills
# its buffer from the chip's FIFO). Each way the known acceleration and rotation come back in m/s²
# and rad/s with the right sign, scale and axis; then the agent, under its hardened unit, arms on
# it. RIDEGUARD_VM_BREAK=axes writes x and y swapped.
mpu6050_on_i2c_stub() {
    modprobe i2c-dev && modprobe i2c-stub chip_addr=0x68 || { bad "modprobe i2c-stub: $(dmesg | tail -2)"; return; }
    local bus adapter
    for adapter in /sys/bus/i2c/devices/i2c-*; do
        grep -q "SMBus stub driver" $adapter/name 2>/dev/null && bus=${adapter##*i2c-}
    done
    [ -n "$bus" ] || { bad "no i2c-stub bus"; return; }
    put8() { i2cset -f -y $bus 0x68 $(printf '0x%02x 0x%02x' $(($1)) $(($2))); }
    put16() { local v=$2; [ $v -lt 0 ] && v=$((v + 65536)); put8 $1 $((v >> 8)); put8 $(($1 + 1)) $((v & 255)); }
    put8 0x75 0x68                                  # WHO_AM_I
    echo mpu6050 0x68 > /sys/bus/i2c/devices/i2c-$bus/new_device
    mpu6050_read_both_ways "polled: INT not wired" 0x3b 0x43 || return
    systemctl stop rideguard

    echo 0x68 > /sys/bus/i2c/devices/i2c-$bus/delete_device
    modprobe rideguard-int-wire bus=$bus chips=mpu6050@0x68 rate_hz=200 || { bad "modprobe rideguard-int-wire: $(dmesg | tail -2)"; return; }
    # On each interrupt 6.1's inv_mpu6050 reads the data-ready bit (register 0x00 on an MPU-6050;
    # 0x3A's on later chips), FIFO_COUNT (0x72, big-endian) and that many bytes from FIFO_R_W
    # (0x74): i2c-stub answers a block read there with the registers from 0x74 on, so one sample
    # (acceleration, rotation: 12 bytes) is written there, and the count says 12.
    put8 0x72 0; put8 0x73 12; put8 0x00 1; put8 0x3a 1
    mpu6050_read_both_ways "buffer, trigger mpu6050-dev" 0x74 0x7a
}

# mpu6050_read_both_ways MODE ACCEL GYRO: the chip's values written at registers ACCEL and GYRO (at
# the widest ranges, as RideGuard asks them); recorded, they must be read as MODE says and come
# back as written; then the agent armed on it under its unit, reading it as MODE says.
mpu6050_read_both_ways() {
    local mode=$1 areg=$2 greg=$3 dir d
    wait_for 10 bash -c 'grep -qx mpu6050 /sys/bus/iio/devices/iio:device*/name'
    for d in /sys/bus/iio/devices/iio:device*; do [ "$(cat $d/name)" = mpu6050 ] && dir=$d; done
    [ -n "$dir" ] || { bad "inv_mpu6050 did not probe on i2c-stub: $(dmesg | grep -i mpu | tail -2)"; return 1; }
    local range
    for range in accel anglvel; do tr ' ' '\n' < $dir/in_${range}_scale_available | sort -g | tail -1 > $dir/in_${range}_scale; done
    local s=$(cat $dir/in_accel_scale) g=$(cat $dir/in_anglvel_scale)
    raw() { awk -v v="$1" -v s="$2" 'BEGIN { r = v / s; printf "%d", (r < 0 ? r - 0.5 : r + 0.5) }'; }
    local ax=4.903325 ay=-2.4516625 az=9.80665 gx=0.5 gy=-0.25 gz=1.0 x y
    x=$ax y=$ay
    [ "$break" = axes ] && x=$ay y=$ax
    put16 $areg $(raw $x $s); put16 $((areg + 2)) $(raw $y $s); put16 $((areg + 4)) $(raw $az $s)
    put16 $greg $(raw $gx $g); put16 $((greg + 2)) $(raw $gy $g); put16 $((greg + 4)) $(raw $gz $g)
    # Recorded with the agent stopped (a second reader would change the chip's rate under it).
    systemctl stop rideguard
    rideguard record --device mpu6050 --rate 200 --duration 4 --out /tmp/mpu6050.csv > /tmp/mpu6050.out 2>&1
    say "$(grep recording /tmp/mpu6050.out | tail -1)"
    grep -q "$mode" /tmp/mpu6050.out && ok "mpu6050 on i2c-stub through inv_mpu6050: read '$mode'" \
        || bad "mpu6050: not read '$mode': $(tail -3 /tmp/mpu6050.out)"
    local rate
    rate=$(awk -F, -v s=$s -v g=$g -v ax=$ax -v ay=$ay -v az=$az -v gx=$gx -v gy=$gy -v gz=$gz '
        function off(v, want, unit) { d = v - want; if (d < 0) d = -d; return d > 1.5 * unit }
        /^#/ || /^time_s/ { next }
        { n++; if (n == 1) first = $1; if (n > 1 && $1 <= last) back++; last = $1
          if (off($2, ax, s) || off($3, ay, s) || off($4, az, s) || NF < 7 || off($5, gx, g) || off($6, gy, g) || off($7, gz, g)) wrong++ }
        END { rate = n > 1 ? (n - 1) / (last - first) : 0; printf "%.1f", rate; exit !(n >= 8 && back == 0 && wrong == 0) }' /tmp/mpu6050.csv) \
        && ok "mpu6050 ($mode): values, signs, axes and scale as written, gyro too, times increasing: $rate Hz of 200" \
        || bad "mpu6050 ($mode): the recorded values are not what the registers hold ($rate Hz; first: $(grep -m1 '^[0-9]' /tmp/mpu6050.csv))"
    # The agent on it, under its unit.
    sed -i 's/device: rideguard-imu-sim/device: mpu6050/; s/rate_hz: .*/rate_hz: 200/' /etc/rideguard/config.yaml
    local started=$(uptime_s)
    systemctl start rideguard
    if wait_for 60 bash -c "rideguard status | grep -q '^IMU: mpu6050.*$mode' && rideguard status | grep -q 'state: armed'"; then
        wait_for 20 status_has "sensor: [1-9]"
        ok "the agent armed on the MPU-6050 ($mode) under its unit in $(since "$started") s: $(rideguard status | grep -m1 '^sensor:')"
    else
        bad "the agent on the MPU-6050 ($mode): $(rideguard status 2>&1 | grep -E '^(IMU|state|sensor)' | tr '\n' ' ')"
    fi
}

exec > /dev/${tty:-ttyS1} 2>&1
say "boot '$phase': kernel $(uname -r) ($(uname -m)), $(systemctl --version | head -1), at $(uptime_s) s"
mkdir -p $state

case "$phase" in
install)
    [ ! -e /sys/bus/iio ] && ok "a kernel without IIO: no /sys/bus/iio" || bad "IIO is there: module_blacklist did not hold"
    started=$(uptime_s)
    if apt-get install -y "$previous_deb" > /tmp/apt.log 2>&1; then
        ok "apt-get install ./$(basename "$previous_deb") under systemd ($(since "$started") s)"
    else
        bad "apt-get install failed: $(tail -5 /tmp/apt.log)"
    fi
    [ "$(systemctl is-enabled rideguard)" = enabled ] && ok "the agent's unit is enabled" || bad "the unit is $(systemctl is-enabled rideguard)"

    # The units as systemd reads them: nothing to say about ours, and the hardening kept.
    # Documentation='s man pages too, where man is installed.
    verify=$(systemd-analyze verify $(command -v man > /dev/null || echo --man=no) /usr/lib/systemd/system/rideguard.service /usr/lib/systemd/system/rideguard-web.service 2>&1)
    status=$?
    [ $status -eq 0 ] && ! grep -q rideguard <<<"$verify" && ok "systemd-analyze verify: both units clean" \
        || bad "systemd-analyze verify (exit $status): $verify"
    for unit in rideguard:2.0 rideguard-web:1.5; do
        name=${unit%:*} limit=${unit#*:}
        level=$(systemd-analyze security "$name.service" 2>/dev/null | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p')
        awk -v l="$level" -v m="$limit" 'BEGIN { exit !(l != "" && l <= m) }' \
            && ok "systemd-analyze security $name.service: exposure $level (at most $limit)" \
            || bad "systemd-analyze security $name.service: exposure '${level}' over $limit"
    done

    # Installed, not set up, and no IIO at all: starting returns, and the agent runs saying why.
    started=$(uptime_s)
    timeout 60 systemctl start rideguard
    status=$?
    [ $status -eq 0 ] && ok "systemctl start rideguard returns before set-up ($(since "$started") s)" \
        || bad "systemctl start rideguard: exit $status after $(since "$started") s ($(prop rideguard Result), $(prop rideguard ExecMainStatus))"
    wait_for 20 status_has "NOT protecting"
    rideguard status > /tmp/status.out 2>&1
    cat /tmp/status.out
    grep -q "NOT protecting: no emergency contact" /tmp/status.out && ok "rideguard status answers: not protecting, no contact" \
        || bad "rideguard status: $(head -3 /tmp/status.out)"
    text=$(prop rideguard StatusText)
    say "StatusText: $text"
    [[ $text == "NOT protecting: no emergency contact"* ]] && ok "systemctl status says why it does not protect" || bad "StatusText '$text'"
    sleep 12   # longer than the watchdog's 10 s
    [ "$(prop rideguard NRestarts)" = 0 ] && active && ok "no IIO, no contact: the agent runs, never restarted" \
        || bad "the agent restarted $(prop rideguard NRestarts) times ($(systemctl is-active rideguard))"
    journal_has "IMU: " && ok "the journal says the IMU cannot be found" || bad "nothing in the journal about the IMU"

    # Simulated hardware on the same machine: it runs, its IMU plays.
    cat > /etc/rideguard/config.yaml <<YAML
imu:
  simulated: true
  trace: /usr/share/rideguard/example-lowside.csv
gpio:
  simulated: true
gps:
  simulated: true
modem:
  simulated: true
YAML
    systemctl restart rideguard
    wait_for 30 status_has "sensor: [1-9]"
    sleep 12
    rideguard status > /tmp/status.out 2>&1
    grep -q "sensor: [1-9]" /tmp/status.out && [ "$(prop rideguard NRestarts)" = 0 ] && active \
        && ok "simulated hardware with no IIO in the kernel: the agent runs and samples ($(grep sensor: /tmp/status.out))" \
        || bad "simulated hardware: $(cat /tmp/status.out), $(prop rideguard NRestarts) restarts"
    real_hardware
    finish
    ;;

firstboot)
    # The first boot after the install: no contact, no IMU driver loaded. The boot must complete.
    state_now=$(timeout 150 systemctl is-system-running --wait)
    if [ "$state_now" = running ]; then
        ok "the boot completes with no contact and no IMU: running at $(uptime_s) s"
    else
        bad "the boot does not complete: '$state_now'; jobs: $(systemctl list-jobs --no-pager | head -8)"
    fi
    active && ok "the agent runs ($(prop rideguard ActiveState), $(prop rideguard SubState))" || bad "the agent is $(systemctl is-active rideguard)"
    text=$(prop rideguard StatusText)
    say "StatusText: $text"
    [[ $text == "NOT protecting: no emergency contact"* ]] && ok "systemctl status says why it does not protect" || bad "StatusText '$text'"
    rideguard status > /tmp/status.out 2>&1
    cat /tmp/status.out
    grep -q "NOT protecting" /tmp/status.out && grep -q "sensor: 0.0 Hz, last sample never" /tmp/status.out \
        && ok "rideguard status: not protecting, no sample" || bad "rideguard status did not say it"
    journal_has "not protecting: no emergency contact" && ok "the journal says why" || bad "the journal does not say why"
    buzzed=$(changes 31)   # the fault pattern: two beeps every 30 s
    [ "$buzzed" -ge 2 ] && ok "the buzzer sounds the fault pattern on GPIO18 ($buzzed changes in 31 s)" \
        || bad "the buzzer is silent while the agent does not protect ($buzzed changes)"

    # The IMU's driver late, as udev loads it at boot: found, no restart.
    [ -d /sys/bus/iio/devices ] && ok "the IIO core was loaded for the agent (modprobe@industrialio)" || bad "no /sys/bus/iio/devices"
    # RideGuard's timer trigger, made by the unit's privileged ExecStartPre (the kernel's module is
    # built here, as Raspberry Pi OS builds it), and handed by udev to the iio group, for the agent
    # to set its rate.
    timer_rate() {
        for t in /sys/bus/iio/devices/trigger*; do
            [ "$(cat $t/name 2>/dev/null)" = rideguard ] && stat -c %G:%A $t/sampling_frequency
        done
    }
    wait_for 10 eval '[[ $(timer_rate) == iio:-rw-rw* ]]'
    [[ $(timer_rate) == iio:-rw-rw* ]] && [ -d /sys/kernel/config/iio/triggers/hrtimer/rideguard ] \
        && ok "the unit made RideGuard's timer trigger in configfs; its rate is the iio group's to set ($(timer_rate))" \
        || bad "no RideGuard timer trigger for the iio group: '$(timer_rate)'; $(journalctl -b -u rideguard --no-pager | grep -i -m2 'ExecStartPre\|hrtimer')"
    restarts=$(prop rideguard NRestarts)
    started=$(uptime_s)
    modprobe rideguard-imu-sim
    (while :; do feed rest.bin; done) &
    feeder=$!
    if wait_for 60 status_has "last sample [0-9.]* s ago"; then
        ok "IMU OK (samples in status) $(since "$started") s after its driver appeared"
    else
        bad "the IMU was not found within 60 s of its driver"
    fi
    [ "$(prop rideguard NRestarts)" = "$restarts" ] && ok "no restart while the IMU was missing" || bad "the agent restarted ($(prop rideguard NRestarts))"
    wait_for 15 status_has "sensor: [1-9]"
    rate=$(rideguard status | sed -n 's/^sensor: \([0-9.]*\) Hz.*/\1/p')
    awk -v r="$rate" -v n="$(cat $lib/rate)" 'BEGIN { exit !(r > 0.9 * n && r < 1.1 * n) }' \
        && ok "the IIO device read through the hardened unit (DevicePolicy=closed): $rate Hz of $(cat $lib/rate)" \
        || bad "the IMU's rate through the unit: $rate Hz"

    # Set up: a contact and a message; the agent protects, and says so.
    rideguard contacts add Anna "+33 6 12 34 56 78" > /dev/null && rideguard message set "I may have crashed. Please call me." > /dev/null \
        || bad "contacts add"
    wait_for 20 bash -c '[[ "$(systemctl show -p StatusText --value rideguard)" == "protecting, degraded: no contact has confirmed"* ]]' \
        && ok "a contact added, asked by SMS: STATUS=protecting, degraded until she confirms" || bad "StatusText after a contact: $(prop rideguard StatusText)"
    wait_for 60 journal_has "sent [a-z_]* to +33•••••5678 (attempt" \
        && ok "the contact was asked by SMS, through the modem on /dev/ttyUSB0 (DeviceAllow=char-ttyUSB)" \
        || bad "no SMS asked the contact: $(journalctl -b -u rideguard --no-pager -o cat | grep -i -m3 'modem\|outbox\|ttyUSB')"
    rideguard contacts confirm Anna > /dev/null || bad "contacts confirm"
    wait_for 20 bash -c '[ "$(systemctl show -p StatusText --value rideguard)" = "protecting the rider" ]' \
        && ok "confirmed by the rider: STATUS=protecting the rider" || bad "StatusText after confirming: $(prop rideguard StatusText)"

    # The real GPIO lines through the unit: a 4 s hold raises a manual SOS whose countdown sounds the
    # buzzer; a 2 s hold cancels it.
    press; sleep 4; release
    wait_for 10 journal_has "manual SOS" && ok "a 4 s hold on GPIO17 raises a manual SOS" || bad "the hold on GPIO17 was not seen"
    buzzed=$(changes 3)
    [ "$buzzed" -ge 2 ] && ok "the buzzer is driven on GPIO18 during the countdown ($buzzed changes in 3 s)" || bad "the buzzer did not sound ($buzzed changes)"
    press; sleep 2; release
    wait_for 10 journal_has "rider is fine" && ok "a 2 s hold cancels it" || bad "the 2 s hold did not cancel"

    # The watchdog: a frozen agent is restarted; so is a killed one.
    pid=$(prop rideguard MainPID)
    started=$(uptime_s)
    kill -STOP "$pid"
    if wait_for 60 bash -c "[ \"\$(systemctl show -p MainPID --value rideguard)\" != $pid ] && [ \"\$(systemctl show -p MainPID --value rideguard)\" != 0 ]"; then
        ok "a frozen agent is restarted by the watchdog in $(since "$started") s"
    else
        bad "the frozen agent was not restarted"
        kill -CONT "$pid"
    fi
    journalctl -b -u rideguard --no-pager | grep -q "Watchdog timeout" && ok "systemd says it was the watchdog" || bad "no watchdog timeout in the journal"
    wait_for 30 status_has "state: armed" || bad "not armed again after the watchdog"
    pid=$(prop rideguard MainPID)
    started=$(uptime_s)
    kill -9 "$pid"
    if wait_for 30 bash -c "[ \"\$(systemctl show -p MainPID --value rideguard)\" != $pid ] && rideguard status | grep -q 'state: armed'"; then
        ok "kill -9: armed again in $(since "$started") s"
    else
        bad "kill -9: not back"
    fi

    # The page under its own unit: pairing, the status, checks that tell the truth with the agent down.
    systemctl enable --now rideguard-web > /dev/null 2>&1
    page=http://127.0.0.1:8080
    wait_for 30 curl -sf -o /dev/null $page/style.css || bad "the page does not answer"
    code=$(rideguard web pair 2>&1 | tee /tmp/pair.out | grep -o 'code=[a-z0-9]*' | cut -d= -f2)
    [ -n "$code" ] || say "rideguard web pair: $(head -3 /tmp/pair.out)"
    answer=$(curl -s -o /dev/null -w '%{http_code}' -c /tmp/jar "$page/pair?code=$code")
    [ "$answer" = 303 ] && ok "the page, under its unit, pairs a phone" || bad "pairing answered $answer: $(journalctl -b -u rideguard-web --no-pager | tail -3)"
    curl -s -b /tmp/jar $page/live/status > /tmp/page.out
    grep -qi "protecting" /tmp/page.out && ok "the page shows the agent's status" || bad "the page's status: $(head -c 300 /tmp/page.out)"
    systemctl stop rideguard
    curl -s -b /tmp/jar $page/checks/doctor > /tmp/doctor.out
    sed 's/<[^>]*>/ /g' /tmp/doctor.out | tr -s ' \n' ' ' | grep -o 'agent[^.]*' | head -3
    if grep -q "not running: nothing protects the rider" /tmp/doctor.out && [ "$(grep -o "not checked: the agent, which reads it" /tmp/doctor.out | wc -l)" -ge 3 ]; then
        ok "the page's checks, the agent down: 'nothing protects the rider', the IMU, GPIO and modem not judged"
    else
        bad "the page's checks with the agent down: $(sed 's/<[^>]*>/ /g' /tmp/doctor.out | tr -s ' \n' ' ' | head -c 600)"
    fi
    systemctl start rideguard
    wait_for 30 status_has "state: armed" || bad "not armed after a start"

    # A crash through the IMU, then a reboot during its countdown.
    kill $feeder 2>/dev/null
    wait $feeder 2>/dev/null
    feed ride.bin &
    if wait_for 150 status_has "state: alertCountdown"; then
        left=$(rideguard status | sed -n 's/^state: alertCountdown (\([0-9]*\) s left)/\1/p')
        ok "a crash through the IIO device: countdown, $left s left"
        echo "$left $(date +%s)" > $state/countdown
        sync
        finish reboot
    fi
    bad "no countdown after the fall"
    finish
    ;;

upgraded)
    state_now=$(timeout 150 systemctl is-system-running --wait)
    [ "$state_now" = running ] && ok "the boot completes during a countdown: running at $(uptime_s) s" || bad "the boot: '$state_now'"
    read -r left then < $state/countdown
    now_left=$(rideguard status 2>/dev/null | sed -n 's/^state: alertCountdown (\([0-9]*\) s left)/\1/p')
    expected=$((left - ($(date +%s) - then)))
    say "countdown: $left s left before the reboot, $now_left s now (expected about $expected)"
    [ -n "$now_left" ] && [ $((now_left - expected)) -le 3 ] && [ $((expected - now_left)) -le 3 ] \
        && ok "the countdown resumed after the reboot, on its deadline" || bad "the countdown after the reboot: '${now_left}' s left"
    journal_has "resumed in state alertCountdown" && ok "the journal says it resumed" || bad "no 'resumed' in the journal"

    pid=$(prop rideguard MainPID)
    started=$(uptime_s)
    if [ -e $lib/rideguard.sources ]; then
        # As the installer's guide adds the repository: its key in /etc/apt/keyrings, a .sources file.
        cp $lib/rideguard.sources /etc/apt/sources.list.d/rideguard.sources
        how="apt-get update && apt-get install rideguard from the signed repository"
        upgrade() { apt-get update && apt-get install -y rideguard; }
    else
        how="apt-get install ./$(basename "$deb")"
        upgrade() { apt-get install -y "$deb"; }
    fi
    if upgrade > /tmp/apt.log 2>&1; then
        ok "$how during the countdown ($(since "$started") s)"
    else
        bad "the upgrade failed ($how): $(tail -5 /tmp/apt.log)"
    fi
    [ "$(dpkg-query -W -f '${Version}' rideguard)" = "$version" ] && ok "version $version installed" || bad "version $(dpkg-query -W -f '${Version}' rideguard)"
    [ "$(prop rideguard MainPID)" != "$pid" ] && wait_for 20 status_has "state: alertCountdown" \
        && ok "the upgraded agent was restarted and goes on with the countdown ($(rideguard status | sed -n 's/^state: //p'))" \
        || bad "after the upgrade: $(rideguard status 2>&1 | head -2)"
    deadline=$((then + left))
    wait_for $((deadline - $(date +%s) + 40)) journal_has "sent alert to +33•••••5678"
    late=$(( $(date +%s) - deadline ))
    sleep 5
    sent=$(journalctl -b -u rideguard --no-pager -o cat | grep -c "sent alert to +33•••••5678")
    [ "$sent" -ge 1 ] && ok "the alert went out through the modem at the deadline (seen $late s after it)" \
        || bad "no alert after the deadline: $(journalctl -b -u rideguard --no-pager -o cat | grep -i 'modem\|outbox\|alert' | tail -4)"
    say "$(journalctl -b -u rideguard --no-pager -o cat | grep -m1 "sent alert to +33•••••5678")"
    [ "$sent" -eq 1 ] && ok "sent once" || bad "$sent alerts to the contact"

    # The rider ends the emergency (a 4 s hold), then protection resumes (a press).
    press; sleep 4.5; release
    wait_for 15 journal_has "the rider cancelled the emergency" || bad "the 4 s hold did not end the emergency"
    press; sleep 0.5; release
    wait_for 15 status_has "state: armed" && ok "the emergency ended and protection resumed on the rider's gestures" || bad "not armed again: $(rideguard status 2>&1 | grep state)"
    mpu6050_on_i2c_stub
    finish
    ;;
*)
    bad "no phase on the kernel's command line"
    finish
    ;;
esac
