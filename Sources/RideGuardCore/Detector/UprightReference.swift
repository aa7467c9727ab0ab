// SPDX-License-Identifier: Apache-2.0
/// The bike's upright: the smoothed force of the upright bike (m/s²), learned at start from the
/// first half second and refined while riding, and gravity as this sensor reads it. Its magnitude
/// is about 1 g for a healthy sensor and less when a dead axis carries part of gravity.
///
/// The posture is measured against it as the angle whose cosine is the smoothed force projected on
/// it, divided by the gravity learned at rest. Dividing by learned gravity, not by the measured
/// magnitude, keeps the posture right when a dead axis carries part of gravity.
struct UprightReference: Sendable {
    private(set) var force: Vector3? { didSet { changed() } }
    /// Gravity as this sensor reads it (its scale), used to express readings in g.
    private(set) var gravity = standardGravity { didSet { changed() } }
    /// Riding has confirmed it (or a calibration gave it): until then it may be a bike lying on its
    /// side (started lying, stored, carried).
    private(set) var confirmed = false
    // Kept with the reference and gravity (they change far less often than samples come): 1/g, the
    // reference in g, and the most a dead axis can hide of it, √(1−|m_ref|²).
    private var perG = 1 / standardGravity
    private var referenceInG = Vector3.zero
    private var hiddenReference = 0.0
    /// The reference's magnitude, the bike's up (its direction) and whether it shows gravity in full.
    private(set) var magnitude = 0.0
    private(set) var up = Vector3.zero
    private(set) var inFull = false
    private var learningSum = Vector3.zero
    private var learningStart = Double.nan
    private var learningCount = 0
    private var learnedSeconds = 0.0
    /// The cones `learn` refines the reference in: once taught, and the wide one before.
    private let learnedCone: Cone
    private static let wideCone = Cone(degrees: DetectorConfiguration.firstUprightConeDegrees)

    init(configuration: DetectorConfiguration) {
        learnedCone = Cone(degrees: configuration.uprightLearningConeDegrees)
        if let up = configuration.calibratedUp, up.count == 3, let unit = Vector3(up[0], up[1], up[2]).normalized {
            force = unit * standardGravity
            confirmed = true
        }
        changed()      // an initializer's assignments call no didSet
    }

    mutating func start(at t: Double) { learningStart = t }

    /// A magnitude within 10 % of 1 g: gravity in full.
    static func plausible(_ magnitude: Double) -> Bool {
        abs(magnitude / standardGravity - 1) < DetectorConfiguration.plausibleGravityTolerance
    }

    /// The first reference: the mean force over the first half second (a rider sitting on the bike,
    /// or riding). Riding refines it afterwards. A mean far from 1 g is no reference: a dead axis may
    /// carry gravity, or the bike is in the air; report it and try again. Returns the up once learned.
    mutating func learnFirst(_ smoothed: Vector3, t: Double, emit: (DetectorEvent) -> Void) -> Vector3? {
        learningSum += smoothed
        learningCount += 1
        guard t - learningStart >= DetectorConfiguration.initialUpSeconds else { return nil }
        let mean = learningSum / Double(learningCount)
        learningSum = .zero
        learningCount = 0
        learningStart = t
        guard let direction = mean.normalized, mean.magnitude > DetectorConfiguration.smallestDirectionG * standardGravity else { return nil }
        if Self.plausible(mean.magnitude) {
            gravity = mean.magnitude
        } else {
            // Far from 1 g: a dead axis carries part of gravity (or the range is wrong). Keep the
            // reading as the reference; posture is then estimated conservatively. Provisional like
            // any first reference: the bike may be lying with the dead axis along gravity, and
            // riding that reads the full 1 g elsewhere replaces it.
            emit(.sensorFault(t: t, fault: .implausibleGravity(g: mean.magnitude / standardGravity)))
        }
        force = mean
        return direction
    }

    /// The cosine of the angle between a force and the reference, both in g. A dead axis hides a
    /// component of each; the hidden parts are at most √(1−|m|²), so the largest cosine the
    /// readings allow is m_ref·m + √(1−|m_ref|²)·√(1−|m|²): a conservative posture that is the
    /// plain projection for a healthy sensor.
    @inline(__always) func postureCosine(_ force: Vector3) -> Double {
        let m = force * perG
        let hidden = max(0, 1 - m.dot(m)).squareRoot()
        return max(-1, min(1, referenceInG.dot(m) + hiddenReference * hidden))
    }

    /// Riding refines the up direction: the average force while the frame shakes (engine, road),
    /// over which braking and accelerating cancel and coordinated turns add nothing sideways. A
    /// running average at first, so that a start on the side stand fades fast, then exponential.
    /// Gross outliers (a wheelie, a fall) are left out. Quiet rest refines gravity's magnitude.
    /// A reference far from 1 g (dead axis) is kept as first learned.
    ///
    /// Only while the bike is really upright: a bike pushed at walking pace leans for real (nothing
    /// balances the lean as in a turn), and the reference must not follow it. So once a minute of
    /// riding taught it, only forces within `uprightLearningConeDegrees` of it refine it (riding
    /// keeps the force on the bike's up; a pushed lean, hard braking, a camber do not), and never
    /// while GPS says walking pace. Before that, a wide cone lets a start on the side stand fade.
    @inline(__always) mutating func learn(_ smoothed: Vector3, magnitude: Double, up: Vector3, plausible: Bool, still: Bool, dt: Double,
                                          activity: Vector3, rotation: Vector3, speed: Double, configuration: DetectorConfiguration) {
        guard configuration.calibratedUp == nil, plausible else { return }
        let taught = learnedSeconds >= configuration.uprightLearningSeconds
        // Within the cone: a cosine clearly above or below the edge's decides alone; within 0.01°
        // of the edge, the same arccosine as the posture does (the decision is the one it was).
        let cone = taught ? learnedCone : Self.wideCone
        guard magnitude > DetectorConfiguration.steadyForceMinimum * gravity && magnitude < DetectorConfiguration.steadyForceMaximum * gravity,
              case let direction = smoothed / magnitude,
              case let cosine = direction.dot(up), cosine <= 1, cosine > cone.outside,
              cosine > cone.inside || acosDegrees(cosine) < cone.degrees else { return }
        let walkingPace = speed.isFinite && speed < configuration.movingSpeed && !still
        let shaking = max(activity.x, activity.y, activity.z) > DetectorConfiguration.ridingVibration
        if shaking && !walkingPace {
            learnedSeconds += dt
            let k = dt / (min(configuration.uprightLearningSeconds, learnedSeconds) + dt)
            if let refined = (up + (direction - up) * k).normalized { force = refined * gravity }
        }
        // Gravity's magnitude (the sensor's own scale) only when quiet: turns read g/cos(lean).
        let quiet = activity.x + activity.y + activity.z < DetectorConfiguration.quietVibration
            && rotation.dot(rotation) < DetectorConfiguration.quietRotation * DetectorConfiguration.quietRotation
        let k = dt / (configuration.uprightLearningSeconds + dt)
        if still && quiet && magnitude > DetectorConfiguration.gravityLearningLow * gravity
            && magnitude < DetectorConfiguration.gravityLearningHigh * gravity {
            gravity += (magnitude - gravity) * k
        }
    }

    /// Riding confirmed it.
    mutating func confirm() { confirmed = true }

    /// Riding gave the up of a reference shown only in part (nothing else refines it).
    mutating func refinePartial(_ meanForce: Vector3) { force = meanForce }

    /// Riding contradicted it: this one replaces it, confirmed, and is learned afresh.
    mutating func replace(with force: Vector3) {
        self.force = force
        confirmed = true
        learnedSeconds = 0
    }

    private mutating func changed() {
        magnitude = force?.magnitude ?? 0
        up = (force ?? .zero) * (1 / magnitude)
        inFull = Self.plausible(magnitude)
        perG = 1 / gravity
        referenceInG = (force ?? .zero) * perG
        hiddenReference = max(0, 1 - referenceInG.dot(referenceInG)).squareRoot()
    }
}
