// SPDX-License-Identifier: Apache-2.0
/// Per-axis vibration, and the range each smoothed axis has covered this session. An axis that never
/// moved, with no vibration either, while the others swung by several m/s², in a session where the
/// sensor at rest read clearly less than 1 g, is dead. (Without that last proof a healthy axis along
/// the bike's side looks the same: coordinated riding never loads it.)
struct AxisWatch: Sendable {
    /// Each axis's mean deviation from the smoothed force, m/s².
    private(set) var activity = Vector3.zero
    /// The most vibration each axis has shown while the frame shook, and for how many seconds it
    /// shook (both sampled once a second).
    private var activityPeak = Vector3.zero
    private var shakenSeconds = 0
    /// An axis has shown almost none of the vibration the others carry: it is dead, reported yet or not.
    private(set) var silentAxis = false
    private var smoothedMinimum = Vector3(.infinity, .infinity, .infinity)
    private var smoothedMaximum = Vector3(-.infinity, -.infinity, -.infinity)
    /// 1 on each axis reported dead.
    private(set) var deadReported = Vector3.zero
    private var nextAxisCheck = 0.0
    /// A rest where the sensor read clearly less than its gravity: evidence that an axis is missing.
    private var sawDeficientRest = false
    private var startTime = 0.0

    mutating func start(at t: Double) { startTime = t }

    /// An axis was reported dead.
    @inline(__always) var deadAxis: Bool { deadReported != .zero }
    /// The strongest axis's vibration, m/s².
    @inline(__always) var strongest: Double { max(activity.x, activity.y, activity.z) }

    /// A rest read clearly less than gravity.
    mutating func sawDeficientRestNow() { sawDeficientRest = true }

    /// Feeds one sample. Returns true when the forward axis can no longer be trusted (an axis fell
    /// silent, or was found dead).
    @inline(__always) mutating func watch(_ a: Vector3, smoothed: Vector3, t: Double, dt: Double, emit: (DetectorEvent) -> Void) -> Bool {
        let k = dt / (DetectorConfiguration.vibrationSeconds + dt)
        let deviation = a - smoothed
        activity.x += (abs(deviation.x) - activity.x) * k
        activity.y += (abs(deviation.y) - activity.y) * k
        activity.z += (abs(deviation.z) - activity.z) * k
        for axis in 0..<3 {
            smoothedMinimum[axis] = min(smoothedMinimum[axis], smoothed[axis])
            smoothedMaximum[axis] = max(smoothedMaximum[axis], smoothed[axis])
        }
        guard t >= nextAxisCheck else { return false }
        nextAxisCheck = t + DetectorConfiguration.axisCheckSeconds
        var forwardLost = false
        let range = smoothedMaximum - smoothedMinimum
        let widest = max(range.x, range.y, range.z)
        let strongest = max(activity.x, activity.y, activity.z)
        // The engine and the road shake a frame in every direction (its rocking, the mount's give):
        // over half a minute of it, a healthy axis shows a few per cent of the strongest axis's
        // vibration at the very least (a knock on a parked bike is too short to count). One showing
        // less than 2 % is dead even where its report waits for a rest short of 1 g (a dead forward
        // axis carries no gravity, so it never gets one); the variation along it is then none, and
        // any other horizontal direction would seem to "dominate" as the forward axis.
        if strongest > DetectorConfiguration.ridingVibration {
            shakenSeconds += 1
            activityPeak = Vector3(max(activityPeak.x, activity.x), max(activityPeak.y, activity.y), max(activityPeak.z, activity.z))
            let silent = shakenSeconds >= DetectorConfiguration.silentAxisShakenSeconds
                && min(activityPeak.x, activityPeak.y, activityPeak.z)
                    < DetectorConfiguration.silentAxisShare * max(activityPeak.x, activityPeak.y, activityPeak.z)
            if silent && !silentAxis { forwardLost = true }
            silentAxis = silent
        }
        for axis in 0..<3 where deadReported[axis] == 0 && sawDeficientRest {
            if widest > DetectorConfiguration.deadAxisOthersRange && range[axis] < DetectorConfiguration.deadAxisRange
                && activity[axis] < DetectorConfiguration.deadAxisVibrationShare * strongest
                && t - startTime >= DetectorConfiguration.deadAxisWatchSeconds {
                deadReported[axis] = 1
                // A dead axis corrupts the split into forward and sideways: stop telling wheelies from falls.
                forwardLost = true
                emit(.sensorFault(t: t, fault: .deadAxis(axis: axis)))
            }
        }
        return forwardLost
    }
}
