// SPDX-License-Identifier: Apache-2.0
/// A riding spell: it lasts while the engine or the road shakes the frame, the force moves or GPS
/// says moving, with breaks of at most 2 s, and adds up the force's direction. It is judged in
/// windows of moving time (GPS speed, or within 2 s of the smoothed force changing, as riding keeps
/// doing and idling never does); the detector decides what a closed window says of the upright.
struct RidingSpell: Sendable {
    /// A closed window of riding.
    struct Window: Sendable {
        /// The mean direction of the force.
        var direction: Vector3
        /// The directions bunched (the mean of unit vectors at least 0.95 long), and the window's two
        /// halves within 15° of each other (a lift followed by a stand is neither).
        var consistent: Bool
        /// The mean force: braking and accelerating cancel in it, turns add along the bike's up; its
        /// magnitude is how much of gravity the sensor shows in the riding posture.
        var force: Vector3
        var magnitude: Double
        /// The posture's cosine (the largest the readings allow) over each half of the window.
        var halfCosines: (Double, Double)
    }

    private var lastShaken = -Double.infinity
    private var direction = Vector3.zero
    private var force = Vector3.zero
    private var cosine = 0.0
    private var seconds = 0.0
    /// Moving seconds in the window so far (the context reads them: riding while they add up).
    private(set) var movingSeconds = 0.0
    /// The sums when the window was half way (in moving seconds): both halves must agree.
    private var half: (direction: Vector3, cosine: Double, seconds: Double)?

    /// Whether a spell is under way.
    var started: Bool { seconds > 0 }

    /// `active`: shaking, GPS moving or the force moving. Returns false when the spell broke off.
    @inline(__always) mutating func goesOn(active: Bool, t: Double) -> Bool {
        if active {
            lastShaken = t
        } else if t - lastShaken > DetectorConfiguration.spellBreakSeconds {
            if seconds > 0 { reset() }
            return false
        }
        return true
    }

    /// Adds an active sample (`direction`: the smoothed force over its magnitude). Returns the
    /// window once it holds `needed` seconds of moving.
    @inline(__always) mutating func add(direction unit: Vector3, force smoothed: Vector3, cosine postureCosine: Double, moving: Bool,
                                        needed: Double, dt: Double) -> Window? {
        seconds += dt
        direction += unit * dt
        force += smoothed * dt
        cosine += postureCosine * dt
        if moving { movingSeconds += dt }
        if half == nil && movingSeconds >= needed / 2 { half = (direction, cosine, seconds) }
        // A window closes after `needed` seconds of moving; one that mostly idled starts afresh.
        guard movingSeconds >= needed, let meanDirection = direction.normalized else {
            if seconds >= DetectorConfiguration.spellLongestSeconds { reset() }
            return nil
        }
        let halves = half.flatMap { half in
            half.direction.normalized.flatMap { a in (direction - half.direction).normalized.map { a.dot($0) } }
        } ?? 0
        let consistent = direction.magnitude / seconds >= DetectorConfiguration.spellBunching
            && halves >= DetectorConfiguration.spellHalvesCosine
        let meanForce = force / seconds
        let halfCosines = half.map { half in
            (half.cosine / half.seconds, (cosine - half.cosine) / max(seconds - half.seconds, 1e-9))
        } ?? (0, 0)
        reset()
        return Window(direction: meanDirection, consistent: consistent, force: meanForce, magnitude: meanForce.magnitude,
                      halfCosines: halfCosines)
    }

    mutating func reset() {
        seconds = 0
        movingSeconds = 0
        direction = .zero
        force = .zero
        cosine = 0
        half = nil
    }
}
