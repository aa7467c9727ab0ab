// SPDX-License-Identifier: Apache-2.0
/// Turns the button's raw edges into gestures: debounced, with holds reported while the button is
/// still held (so "I'm fine" is acknowledged at once), and robust to bounce. Edges arrive in order
/// (the emergency service's one input stream guarantees it). Pure: time arrives with the edges and ticks.
package struct GestureDecoder: Sendable {
    package enum Gesture: Equatable, Sendable {
        /// The button went down (debounced).
        case down(at: Double)
        /// Held for `seconds` (one of the configured thresholds), still down.
        case held(seconds: Double, at: Double)
        /// Released after `duration` seconds down.
        case released(duration: Double, at: Double)
    }

    /// A level must stay this long to count, seconds (mechanical bounce lasts a few ms).
    package let debounce: Double
    /// Hold durations to report, ascending (e.g. 1 s "I'm fine", 3 s long hold).
    package let holdThresholds: [Double]

    private var rawPressed = false
    private var rawSince = -Double.infinity
    private var pressed = false
    private var pressedAt = 0.0
    private var reportedHolds = 0

    package init(debounce: Double = 0.03, holdThresholds: [Double] = [1, 3]) {
        self.debounce = debounce
        self.holdThresholds = holdThresholds.sorted()
    }

    /// Whether the button counts as down now.
    package var isDown: Bool { pressed }

    /// An edge from the line: the new level (`pressed`) and its timestamp.
    package mutating func edge(pressed level: Bool, at t: Double) -> [Gesture] {
        var gestures = settle(until: t)
        if level != rawPressed {
            rawPressed = level
            rawSince = t
        }
        gestures += settle(until: t)
        return gestures
    }

    /// Time passes without edges: confirms a stable level and reports holds that were reached.
    package mutating func tick(at t: Double) -> [Gesture] {
        settle(until: t)
    }

    /// When the owner should call `tick` next (a level to confirm or a hold to report), if ever.
    package var nextDeadline: Double? {
        if rawPressed != pressed { return rawSince + debounce }
        if pressed && reportedHolds < holdThresholds.count { return pressedAt + holdThresholds[reportedHolds] }
        return nil
    }

    private mutating func settle(until t: Double) -> [Gesture] {
        var gestures: [Gesture] = []
        // Deadlines are handed out as sums; a tick exactly at one must count despite rounding.
        let slack = 4 * t.ulp
        if rawPressed != pressed && t - rawSince >= debounce - slack {
            pressed = rawPressed
            if pressed {
                pressedAt = rawSince
                reportedHolds = 0
                gestures.append(.down(at: rawSince))
            } else {
                gestures.append(.released(duration: rawSince - pressedAt, at: rawSince))
            }
        }
        while pressed && reportedHolds < holdThresholds.count && t - pressedAt >= holdThresholds[reportedHolds] - slack {
            gestures.append(.held(seconds: holdThresholds[reportedHolds], at: pressedAt + holdThresholds[reportedHolds]))
            reportedHolds += 1
        }
        return gestures
    }
}
