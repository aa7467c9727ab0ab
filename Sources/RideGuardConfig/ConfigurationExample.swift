// SPDX-License-Identifier: Apache-2.0
extension ConfigurationFile {
    /// A complete, commented configuration with every default: `rideguard config example`.
    package static let example = """
        # RideGuard configuration (YAML). Every key is optional; these are the defaults.
        # Check it with: rideguard config check --config /etc/rideguard/config.yaml

        imu:
          simulated: false          # true: play `trace` instead of reading the sensor
          uri: "local:"             # local: on the Pi; ip:HOST[:PORT] for a remote iiod
          # device: mpu6050         # default: the first known IMU found (see boards/imus.md)
          rate_hz: 200
          # trace: /usr/share/rideguard/example-lowside.csv   # simulated only
          speed: 1.0                # simulated only: play the trace this many times faster

        gpio:
          simulated: false          # true: log the buzzer, take presses from `rideguard ctl press`
          buzzer: GPIO18            # a line name, or chip:offset such as pinctrl-rp1:18
          button: GPIO17            # to ground, with the line's pull-up
          button_active_low: true
          # ignition: GPIO27        # the switched supply through an optocoupler (boards/wiring.md):
          #                         # off → parked at once (a fall is the rider's SMS, never a countdown)
          ignition_active_low: true # the optocoupler pulls the line down while the ignition is on

        power:                      # for a Pi kept alive by a UPS HAT or a supercapacitor
          # shutdown_after_ignition_off_s: 300   # clean poweroff then, never during an emergency
          shutdown_command: /usr/bin/systemctl poweroff

        gps:
          simulated: false
          gpsd: "127.0.0.1:2947"
          # fixed_position: [48.85837, 2.29448]   # simulated only

        modem:
          simulated: false          # true: print the SMS instead of sending them
          device: /dev/rideguard-modem-at         # the stable name the udev rules give the AT port
          baud: 115200
          # pin: "1234"             # entered once if the SIM asks; never retried

        workflow:
          countdown_s: 60           # crash → alert, 10...300
          cancel_hold_s: 1          # hold this long during the countdown: "I'm fine"
          long_hold_s: 3            # manual SOS while protecting; cancel after the alert went out
          manual_countdown_s: 10
          update_interval_s: 300    # location updates while tracking
          tracking_s: 1800
          network_failure_s: 900    # no alert out for this long: network unusable (retries go on)

        calls:                      # after the alert SMS: ring the contacts until one answers or replies OK
          # enabled: true           # default: when the modem can make voice calls (AT+CLCC=?)
          ring_s: 30                # each call rings this long, 10...120 (keep it below voicemail's delay)
          rounds: 3                 # rounds through every contact, 1...10
          interval_s: 300           # a round every 5 minutes, 60...3600

        messages:
          language: en              # en, fr, de, es, it
          map_link: google          # google, openstreetmap, geo
          self_test_days: 30        # a test SMS to the rider's phone this often, 1...365; 0: never

        # mqtt:                     # a fleet's broker (docs/fleet.md); absent: none
        #   url: mqtts://broker.example.org:8883   # mqtt://HOST[:1883] without TLS
        #   username: bike1
        #   password_file: /etc/rideguard/mqtt-password   # never the password itself here
        #   ca_file: /etc/rideguard/fleet-ca.crt   # default: the system's CAs
        #   topic_prefix: rideguard
        #   device: bike1           # default: the hostname
        #   keepalive_s: 30
        #   state_interval_s: 30    # the state at most this often while only the position moves
        #   owntracks_user: alex    # also owntracks/alex/<device>, for OwnTracks' apps and recorder

        # traccar:                  # a Traccar server, OsmAnd protocol (docs/fleet.md); absent: none
        #   url: https://traccar.example.org:5055
        #   device: bike1           # the device's identifier in Traccar; default: the hostname
        #   interval_s: 30          # a position this often while riding
        #   parked_interval_s: 900  # and this often when stopped or parked

        # group:                    # a riding group over the mqtt: broker: the members hear each other's alerts
        #   name: sunday-ride
        #   dismiss_s: 1800         # a member's alert is heard this long at most

        web:                        # the page for the rider's phone: rideguard-web.service (docs/rider.md, From your phone)
          listen: 0.0.0.0:8080      # every network the Pi is on; 127.0.0.1:8080 for this Pi only
          # address: 192.168.4.1    # the address pairing links name; default: the Pi's own
          session_days: 180         # a phone unused this long must pair again

        detector:                   # any detector setting by name (docs/field-testing.md)
          lying_angle_degrees: 60

        database: /var/lib/rideguard/rideguard.sqlite
        control_socket: /run/rideguard/control.sock

        """
}
