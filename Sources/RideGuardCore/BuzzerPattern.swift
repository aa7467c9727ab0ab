// SPDX-License-Identifier: Apache-2.0
/// What the buzzer plays, as data: on/off steps, repeated or once. The agent's scheduler plays them.
package enum BuzzerPattern: String, Codable, CaseIterable, Sendable {
    case off
    /// One short chirp: protection is on.
    case armed
    /// The countdown, getting faster as it runs out.
    case countdownSlow = "countdown_slow"
    case countdownFast = "countdown_fast"
    case countdownUrgent = "countdown_urgent"
    /// Three quick beeps: "I'm fine" accepted, nothing will be sent.
    case acknowledge
    /// Long loud beeps until the rider acts: help is being called.
    case alarm
    /// Two long beeps every 30 s: RideGuard is not protecting (see `rideguard status`).
    case fault
    /// Two rising chirps: protection resumed after an emergency.
    case resumed
    /// Four slow beeps, once: the parked bike fell over (nobody was riding it; the rider is texted).
    case parkedFall = "parked_fall"
    /// One long beep every 30 s: protecting, degraded (the SD card cannot be written, an axis or the
    /// button failed): an alert still goes out; `rideguard status` says what is wrong.
    case degraded
    /// Three beeps every 5 s: someone in the rider's group needs help (`status` says who, where).
    case groupAlert = "group_alert"

    /// Steps of (on seconds, off seconds).
    package var steps: [(on: Double, off: Double)] {
        switch self {
        case .off: []
        case .armed: [(0.1, 0)]
        case .countdownSlow: [(0.2, 1.8)]
        case .countdownFast: [(0.2, 0.8)]
        case .countdownUrgent: [(0.15, 0.15)]
        case .acknowledge: [(0.08, 0.08), (0.08, 0.08), (0.08, 0)]
        case .alarm: [(1.0, 0.5)]
        case .fault: [(0.6, 0.4), (0.6, 28.4)]
        case .resumed: [(0.1, 0.05), (0.2, 0)]
        case .parkedFall: [(0.5, 0.5), (0.5, 0.5), (0.5, 0.5), (0.5, 0)]
        case .degraded: [(1.5, 28.5)]
        case .groupAlert: [(0.3, 0.2), (0.3, 0.2), (0.3, 3.7)]
        }
    }

    /// Whether the steps repeat until another pattern replaces them.
    package var repeats: Bool {
        switch self {
        case .countdownSlow, .countdownFast, .countdownUrgent, .alarm, .fault, .degraded, .groupAlert: true
        case .off, .armed, .acknowledge, .resumed, .parkedFall: false
        }
    }

    /// For docs/rider.md and `rideguard status`.
    package var meaning: String {
        switch self {
        case .off: "silent"
        case .armed: "one short chirp: protection is on"
        case .countdownSlow: "a beep every 2 s: the countdown runs (after a crash, or an SOS you raised)"
        case .countdownFast: "a beep every second: less than half the countdown left"
        case .countdownUrgent: "rapid beeping: the last 10 seconds"
        case .acknowledge: "three quick beeps: \"I'm fine\" accepted, nothing is sent"
        case .alarm: "long beeps until you act: your contacts are being alerted"
        case .fault: "two long beeps every 30 s: RideGuard is NOT protecting you"
        case .resumed: "two rising chirps: protection resumed"
        case .degraded: "one long beep every 30 s: protecting, degraded: an alert still goes out, but a part has failed (rideguard status says which: the SD card cannot be written, an IMU axis, the button)"
        case .parkedFall: "four slow beeps, once: the parked bike fell over (nobody was riding it); the rider's own phone is texted, never the contacts"
        case .groupAlert: "three beeps every 5 s: someone in your riding group needs help (rideguard status says who, how far, which way)"
        }
    }
}
