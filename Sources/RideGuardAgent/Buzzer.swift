// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import GPIOLines
import RideGuardCore
import Synchronization

/// The buzzer on a GPIO line. A failed write is reported, not fatal: the agent keeps detecting, and
/// the line is requested again (at most once a second, when the buzzer is next switched) until it
/// works: a chip that went away and came back, a connector pushed back in.
package final class GPIOBuzzer: BuzzerOutput {
    package enum Event: Sendable {
        case lost(GPIOError)
        case back
    }

    private let open: @Sendable () throws(GPIOError) -> GPIOLine
    private let clock: any ServiceClock
    private let onEvent: @Sendable (Event) -> Void
    private let line: Mutex<(current: GPIOLine?, nextTry: Double)>

    /// `line` is the one already requested, or nil when that failed (the first `set` tries again).
    package init(line: GPIOLine?, open: @escaping @Sendable () throws(GPIOError) -> GPIOLine, clock: any ServiceClock,
                onEvent: @escaping @Sendable (Event) -> Void) {
        self.open = open
        self.clock = clock
        self.onEvent = onEvent
        self.line = Mutex((line, 0))
    }

    package func set(_ on: Bool) {
        line.withLock { state in
            let now = clock.now()
            if state.current == nil {
                guard now >= state.nextTry else { return }
                state.nextTry = now + 1
                guard let reopened = try? open() else { return }
                state.current = reopened
                onEvent(.back)
            }
            do throws(GPIOError) {
                try state.current?.set(on)
            } catch {
                state.current = nil
                state.nextTry = now + 1
                onEvent(.lost(error))
            }
        }
    }
}

/// The simulated buzzer: remembers every change so tests and the demo can see what a rider would hear.
package final class SimulatedBuzzer: BuzzerOutput {
    private let changes = Mutex<[Bool]>([])

    package init() {}

    package func set(_ on: Bool) {
        changes.withLock { $0.append(on) }
    }

    /// How many times it was switched on.
    package var beeps: Int { changes.withLock { $0.filter { $0 }.count } }
    package var isOn: Bool { changes.withLock { $0.last ?? false } }
}

/// Plays `BuzzerPattern`s on an output, one at a time; a new pattern replaces the current one.
package actor BuzzerPlayer {
    private let output: any BuzzerOutput
    private let clock: any ServiceClock
    private var playing: Task<Void, Never>?
    package private(set) var pattern = BuzzerPattern.off
    /// Every pattern played, in order, for status and tests.
    package private(set) var history: [BuzzerPattern] = []

    private let announce: @Sendable (BuzzerPattern) -> Void

    /// `announce` hears each new pattern (the simulated buzzer's log).
    package init(output: any BuzzerOutput, clock: any ServiceClock, announce: @escaping @Sendable (BuzzerPattern) -> Void = { _ in }) {
        self.output = output
        self.clock = clock
        self.announce = announce
    }

    package func play(_ pattern: BuzzerPattern) {
        if pattern != self.pattern || (!pattern.repeats && pattern != .off) { announce(pattern) }
        self.pattern = pattern
        history.append(pattern)
        sound(pattern.steps, repeats: pattern.repeats)
    }

    /// A check (the phone's "sound the buzzer"): `check` once, then the pattern that was playing
    /// goes on if it repeats (a fault's warning is never silenced by a check). The pattern stays
    /// the state's; a new one played meanwhile wins.
    package func check(_ check: BuzzerPattern) {
        announce(check)
        history.append(check)
        let current = pattern
        sound(check.steps, repeats: false) { player in
            if current.repeats { await player.sound(current.steps, repeats: true) }
        }
    }

    /// Plays `steps` (again and again if `repeats`) in place of what was playing, then `next`.
    private func sound(_ steps: [(on: Double, off: Double)], repeats: Bool, then next: (@Sendable (BuzzerPlayer) async -> Void)? = nil) {
        playing?.cancel()
        output.set(false)
        guard !steps.isEmpty else { return }
        let output = self.output, clock = self.clock
        playing = Task {
            repeat {
                for step in steps {
                    guard !Task.isCancelled else { return }
                    output.set(true)
                    try? await clock.sleep(until: clock.now() + step.on)
                    output.set(false)
                    guard !Task.isCancelled else { return }
                    if step.off > 0 { try? await clock.sleep(until: clock.now() + step.off) }
                }
            } while repeats && !Task.isCancelled
            if let next, !Task.isCancelled { await next(self) }
        }
    }
}
