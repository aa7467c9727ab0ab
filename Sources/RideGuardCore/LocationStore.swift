// SPDX-License-Identifier: Apache-2.0
/// The last good fix, its age, and a short track of recent fixes (direction of travel and speed
/// before a crash).
package struct LocationStore: Sendable {
    package private(set) var lastFix: Fix?
    package private(set) var track: [Fix] = []
    /// Fixes kept, seconds back from the newest.
    package let trackSeconds: Double

    package init(trackSeconds: Double = 120) {
        self.trackSeconds = trackSeconds
    }

    /// Keeps `fix`, timed by its arrival: the agent stamps fixes with its own clock, so a receiver
    /// whose date is far off (a GPS week-number rollover reports 1999 or 2999) or a clock set back
    /// never makes the next fix look older than the last and be dropped.
    package mutating func update(_ fix: Fix) {
        guard fix.latitude.isFinite, fix.longitude.isFinite,
              abs(fix.latitude) <= 90, abs(fix.longitude) <= 180 else { return }
        lastFix = fix
        track.append(fix)
        track.removeAll { fix.time - $0.time > trackSeconds || $0.time > fix.time }
    }

    /// Seconds since the last fix at wall-clock time `now`.
    package func age(at now: Double) -> Double? {
        lastFix.map { max(0, now - $0.time) }
    }

    /// The fastest speed and its heading in the `seconds` before `time` (the moments before a crash).
    package func motion(before time: Double, within seconds: Double = 30) -> (speed: Double, heading: Double?)? {
        let recent = track.filter { $0.time <= time && time - $0.time <= seconds && ($0.speed ?? -1) >= 0 }
        guard let fastest = recent.max(by: { ($0.speed ?? 0) < ($1.speed ?? 0) }), let speed = fastest.speed else { return nil }
        return (speed, fastest.track ?? heading(of: recent))
    }

    /// Heading from the first to the last of a few fixes, when the receiver gave no course.
    private func heading(of fixes: [Fix]) -> Double? {
        guard let first = fixes.first, let last = fixes.last, first.time < last.time else { return nil }
        let dLat = last.latitude - first.latitude
        let dLon = (last.longitude - first.longitude) * cosine(first.latitude * .pi / 180)
        guard abs(dLat) + abs(dLon) > 1e-6 else { return nil }
        var degrees = atan2Degrees(dLon, dLat)
        if degrees < 0 { degrees += 360 }
        return degrees
    }
}

/// cos and atan2 without Foundation, good to a small fraction of a degree for headings.
func cosine(_ x: Double) -> Double {
    var r = x.truncatingRemainder(dividingBy: 2 * .pi)
    if r > .pi { r -= 2 * .pi }
    if r < -.pi { r += 2 * .pi }
    let r2 = r * r
    return 1 - r2 / 2 + r2 * r2 / 24 - r2 * r2 * r2 / 720 + r2 * r2 * r2 * r2 / 40320 - r2 * r2 * r2 * r2 * r2 / 3_628_800
}

func atan2Degrees(_ y: Double, _ x: Double) -> Double {
    let ax = abs(x), ay = abs(y)
    guard ax > 0 || ay > 0 else { return 0 }
    let a = min(ax, ay) / max(ax, ay)
    let s = a * a
    var r = ((-0.0464964749 * s + 0.15931422) * s - 0.327622764) * s * a + a
    if ay > ax { r = .pi / 2 - r }
    if x < 0 { r = .pi - r }
    if y < 0 { r = -r }
    return r * 180 / .pi
}
