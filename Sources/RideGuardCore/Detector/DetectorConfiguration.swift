// SPDX-License-Identifier: Apache-2.0
/// Every threshold and window of the crash detector, with the defaults it ships with.
///
/// The detector decides from physics, not from peaks: a bike that has gone down ends up lying
/// still far from its riding posture, and a collision that leaves it upright shows a short
/// horizontal pulse with a large change of velocity followed by stillness.
package struct DetectorConfiguration: Equatable, Sendable, Codable {
    /// Posture (angle between the learned "up" and the smoothed force) beyond which the bike is
    /// lying, degrees. A side stand leans 8–16°; a held wheelie reads the angle of the centre of mass
    /// seen from the rear tyre, 45–55°, whatever its pitch; a bike on its side lies at 70–100°.
    package var lyingAngleDegrees = 60.0
    /// Beyond this posture the bike is lying even if the tilt looks like a pitch (a wheelie): bars and
    /// pegs hold a fallen bike at 70–100°, wheelies run at 20–60°, degrees.
    package var wheelieMaximumDegrees = 70.0
    /// How long the bike must be lying and still before a crash is declared, seconds.
    package var restConfirmationSeconds = 1.25
    /// Used instead when the accelerometer reads far less than 1 g at rest (a dead axis carries
    /// gravity), so that free fall during a jump can never last long enough to look like rest, and
    /// once an axis is known dead (the wheelie/fall distinction is then lost).
    package var lowMagnitudeRestConfirmationSeconds = 3.0
    /// Used for a tilt past the lying angle that is ambiguous: it looks like a pitch (a wheelie), the
    /// sensor misses an axis and the angle is short of a clear 65°, or the force turned toward a dead
    /// axis short of `wheelieMaximumDegrees`. Neither a wheelie nor hard braking is held still that
    /// long, while a fallen bike stays down; not needed while GPS reads walking pace, seconds.
    package var ambiguousRestConfirmationSeconds = 4.0
    /// Low-pass time constant (two cascaded stages) that removes engine and road vibration, seconds.
    package var smoothingSeconds = 0.2
    /// The smoothed acceleration must stay within this distance of where it settled, m/s².
    package var stillAccelerationTolerance = 0.5
    /// The smoothed rotation rate must stay within this of where it settled, rad/s (gyro only).
    package var stillRotationTolerance = 0.15
    /// A smoothed rotation faster than this is never "still", whatever the bias, rad/s (gyro only).
    package var stillRotationLimit = 0.5
    /// Dynamic acceleration that opens an impact pulse, in g.
    package var impactThresholdG = 2.5
    /// Horizontal peak (perpendicular to the bike's up) that makes a pulse a collision, in g.
    package var collisionPeakG = 6.0
    /// Horizontal change of velocity within one pulse that makes it a collision, m/s. A sensor
    /// clipping at ±8 g under-reads a 20–40 g pulse, so this is set well below the true delta-v.
    package var collisionDeltaV = 2.0
    /// A GPS speed drop at least this large, between two readings, faster than `maximumBrakingG`
    /// and with an impact pulse in between, is a collision too, m/s.
    package var collisionSpeedDrop = 5.0
    /// The hardest a motorcycle brakes (about 1 g with ABS on dry asphalt), in g.
    package var maximumBrakingG = 1.3
    /// Longest pulse integrated for delta-v, seconds (hard braking lasts longer and peaks far lower).
    package var pulseMaximumSeconds = 0.4
    /// After a collision, how long the detector waits for the bike to come to rest, seconds.
    package var collisionWatchSeconds = 20.0
    /// After a collision, how long the bike must be still (upright or not), seconds.
    package var collisionRestSeconds = 2.0
    /// Above this GPS speed the bike is moving, whatever the accelerometer says, m/s.
    package var movingSpeed = 2.0
    /// Time constant for learning the bike's upright reference while riding, seconds.
    package var uprightLearningSeconds = 60.0
    /// Once that much riding taught the upright reference, only forces this close to it refine it,
    /// degrees: riding (coordinated turns, straight lines) keeps the force on the bike's up; a bike
    /// pushed at a lean, or hard braking, does not.
    package var uprightLearningConeDegrees = 5.0
    /// A fixed upright reference from a calibration (sensor-frame vector), instead of learning it.
    package var calibratedUp: [Double]? = nil
    /// Upright and moving for this long after a crash re-arms the detector, seconds.
    package var rearmSeconds = 10.0
    /// A gap between samples longer than this is reported as a sensor fault, seconds.
    package var gapSeconds = 0.25
    /// Impacts weaker than this are not reported as `impact` events, in g.
    package var reportedImpactG = 4.0
    /// Vibration (the mean deviation from the smoothed force, on the most shaken axis) above which an
    /// engine runs or a road shakes the frame, in g. An engine fires at 7 Hz and up (far above the
    /// smoothing) and shakes a frame by 0.01–0.5 g at idle (0.012 g on the IFSTTAR test bike, whose
    /// IMU reads 0.006 g of its own noise at rest); an IMU's noise is 0.003–0.008 g.
    package var engineVibrationG = 0.015
    /// Still, no vibration and no GPS speed for this long, the bike is parked: nobody is riding it, and
    /// its fall is a `parked_fall`, never a crash. A rider waiting at lights or in a queue moves the
    /// bike, or has the engine running, well within this, seconds.
    package var parkedAfterSeconds = 240.0
    /// A parked bike is parked until its engine has run this long, GPS has shown it moving this long,
    /// or it has been moved about upright this long (pushed out, sat on), seconds. A car's bump or a
    /// fall shakes it for a few seconds only.
    package var unparkSeconds = 10.0
    /// A fall of a parked bike, not a person laying it down: a rotation at least this fast, or a landing
    /// of at least `parkedFallPeakG`. A bike falling as a pendulum turns at 150–300 °/s before it lands;
    /// a person lowers one at a few tens, °/s.
    package var parkedFallRotationDegreesPerSecond = 60.0
    /// The landing that tells a fall from a lay-down without a gyro, in g.
    package var parkedFallPeakG = 1.5
    /// A bike that goes over from upright under its own weight turns at least this fast before it
    /// lands: a pendulum is at √(g/h) rad/s by 60° of tilt, 150 °/s for a centre of mass as high as
    /// 1.5 m and 200–250 °/s for a motorbike's. A person lifting a lying bike, or lowering one, turns
    /// it at 20–90. This tells a fall into lying from a lift; without a gyro (or with a dead one), a
    /// landing of `parkedFallPeakG` does, °/s.
    package var fallRotationDegreesPerSecond = 100.0
    /// A bike that went over as a fall does (above) lies from this posture, degrees: crash bars and
    /// panniers hold a dropped bike at 66–71° from upright, and an upright reference learned on the
    /// side stand or pushed at a lean can be 6–20° off toward the side it fell to. Short of
    /// `lyingAngleDegrees` such a rest must last `ambiguousRestConfirmationSeconds`: a held wheelie
    /// reads 45–55° and gets there as fast, but is never held still that long.
    package var fallenLyingAngleDegrees = 45.0
    /// After a fall no riding window begins for this long: a fallen bike shakes (a wheel turning,
    /// hands on it), and a riding window may replace the upright reference, seconds.
    package var fallSettleSeconds = 15.0
    /// The upright reference learned at start is provisional (the bike may lie on its side, on a
    /// trailer, on a stand): riding this long with the force near it confirms it, far from it replaces
    /// it. Until then only a fall into lying (`fallRotationDegreesPerSecond`, or a landing) or a
    /// collision raises a crash, seconds.
    package var ridingConfirmationSeconds = 5.0
    /// A confirmed reference is replaced only by this much consistent riding far from it (the bike
    /// cannot be ridden lying down): the detector never stays "crashed" through a ride, seconds.
    package var relearnRidingSeconds = 20.0

    package init() {}

    /// Problems with the values, each naming the field; empty when valid.
    package func validationErrors() -> [String] {
        var errors: [String] = []
        func check(_ ok: Bool, _ message: String) { if !ok { errors.append(message) } }
        check(lyingAngleDegrees > 20 && lyingAngleDegrees < 90, "lyingAngleDegrees must be between 20 and 90")
        check(wheelieMaximumDegrees >= lyingAngleDegrees && wheelieMaximumDegrees <= 180,
              "wheelieMaximumDegrees must be between lyingAngleDegrees and 180")
        check(restConfirmationSeconds >= 0.2 && restConfirmationSeconds <= 10, "restConfirmationSeconds must be 0.2...10")
        check(lowMagnitudeRestConfirmationSeconds >= restConfirmationSeconds && lowMagnitudeRestConfirmationSeconds <= 15,
              "lowMagnitudeRestConfirmationSeconds must be at least restConfirmationSeconds and at most 15")
        check(ambiguousRestConfirmationSeconds >= lowMagnitudeRestConfirmationSeconds && ambiguousRestConfirmationSeconds <= 20,
              "ambiguousRestConfirmationSeconds must be at least lowMagnitudeRestConfirmationSeconds and at most 20")
        check(smoothingSeconds > 0.01 && smoothingSeconds <= 1, "smoothingSeconds must be 0.01...1")
        check(stillAccelerationTolerance > 0, "stillAccelerationTolerance must be positive")
        check(stillRotationTolerance > 0, "stillRotationTolerance must be positive")
        check(stillRotationLimit > 0, "stillRotationLimit must be positive")
        check(impactThresholdG > 1, "impactThresholdG must be above 1")
        check(collisionPeakG > impactThresholdG, "collisionPeakG must be above impactThresholdG")
        check(collisionDeltaV > 0, "collisionDeltaV must be positive")
        check(collisionSpeedDrop > 0, "collisionSpeedDrop must be positive")
        check(maximumBrakingG >= 0.8 && maximumBrakingG <= 3, "maximumBrakingG must be 0.8...3")
        check(pulseMaximumSeconds > 0.05 && pulseMaximumSeconds <= 2, "pulseMaximumSeconds must be 0.05...2")
        check(uprightLearningSeconds >= 1, "uprightLearningSeconds must be at least 1")
        check(uprightLearningConeDegrees > 0 && uprightLearningConeDegrees <= 40, "uprightLearningConeDegrees must be above 0 and at most 40")
        if let up = calibratedUp {
            check(up.count == 3 && Vector3(up[0], up[1], up[2]).magnitude > 0.1, "calibratedUp must be three numbers, not all zero")
        }
        check(gapSeconds > 0, "gapSeconds must be positive")
        check(engineVibrationG > 0 && engineVibrationG <= 0.5, "engineVibrationG must be above 0 and at most 0.5")
        check(parkedAfterSeconds >= 30 && parkedAfterSeconds <= 3600, "parkedAfterSeconds must be 30...3600")
        check(unparkSeconds >= 1 && unparkSeconds <= 120, "unparkSeconds must be 1...120")
        check(parkedFallRotationDegreesPerSecond > 0, "parkedFallRotationDegreesPerSecond must be positive")
        check(parkedFallPeakG > 1, "parkedFallPeakG must be above 1")
        check(fallRotationDegreesPerSecond >= 30 && fallRotationDegreesPerSecond <= 300,
              "fallRotationDegreesPerSecond must be 30...300")
        check(fallenLyingAngleDegrees >= 30 && fallenLyingAngleDegrees <= lyingAngleDegrees,
              "fallenLyingAngleDegrees must be at least 30 and at most lyingAngleDegrees")
        check(fallSettleSeconds >= 0 && fallSettleSeconds <= 120, "fallSettleSeconds must be 0...120")
        check(ridingConfirmationSeconds >= 1 && ridingConfirmationSeconds <= 60, "ridingConfirmationSeconds must be 1...60")
        check(relearnRidingSeconds >= ridingConfirmationSeconds && relearnRidingSeconds <= 300,
              "relearnRidingSeconds must be at least ridingConfirmationSeconds and at most 300")
        return errors
    }
}

extension DetectorConfiguration {
    /// The settings a tuner can change, by name, with what each does and its unit.
    package struct Setting: Sendable {
        package let key: String
        let path: WritableKeyPath<DetectorConfiguration, Double> & Sendable
        package let meaning: String

        init(_ key: String, _ path: WritableKeyPath<DetectorConfiguration, Double> & Sendable, _ meaning: String) {
            self.key = key
            self.path = path
            self.meaning = meaning
        }
    }

    /// `lyingAngleDegrees` → `lying_angle_degrees`.
    package static func snakeCase(_ key: String) -> String {
        var out = ""
        for character in key {
            if character.isUppercase { out += "_" + character.lowercased() } else { out.append(character) }
        }
        return out
    }

    package static let settings: [Setting] = [
        Setting("lyingAngleDegrees", \.lyingAngleDegrees, "posture beyond which the bike is lying (°); wheelies read 45–55°, a fallen bike 66–100° (66 on crash bars)"),
        Setting("wheelieMaximumDegrees", \.wheelieMaximumDegrees, "beyond this posture a pitch-like tilt is lying too (°)"),
        Setting("restConfirmationSeconds", \.restConfirmationSeconds, "lying and still for this long before the alarm (s)"),
        Setting("lowMagnitudeRestConfirmationSeconds", \.lowMagnitudeRestConfirmationSeconds, "the same when the sensor reads well under 1 g at rest or has a dead axis (s)"),
        Setting("ambiguousRestConfirmationSeconds", \.ambiguousRestConfirmationSeconds, "the same for a tilt past the angle that looks like a wheelie, short of 65° with a dead axis, or turned toward one short of 70° (s)"),
        Setting("smoothingSeconds", \.smoothingSeconds, "low-pass time constant removing engine and road vibration (s)"),
        Setting("stillAccelerationTolerance", \.stillAccelerationTolerance, "how far the smoothed acceleration may wander and still be still (m/s²)"),
        Setting("stillRotationTolerance", \.stillRotationTolerance, "how far the smoothed rotation may wander and still be still (rad/s)"),
        Setting("stillRotationLimit", \.stillRotationLimit, "a smoothed rotation above this is never still (rad/s)"),
        Setting("impactThresholdG", \.impactThresholdG, "dynamic acceleration that opens an impact pulse (g)"),
        Setting("collisionPeakG", \.collisionPeakG, "horizontal peak that makes a pulse a collision (g)"),
        Setting("collisionDeltaV", \.collisionDeltaV, "horizontal delta-v within one pulse that makes it a collision (m/s)"),
        Setting("collisionSpeedDrop", \.collisionSpeedDrop, "a GPS speed drop this large between two fixes, faster than any braking and with an impact, is a collision (m/s)"),
        Setting("maximumBrakingG", \.maximumBrakingG, "the hardest a motorcycle brakes; a GPS speed drop faster than this is a collision (g)"),
        Setting("pulseMaximumSeconds", \.pulseMaximumSeconds, "longest pulse integrated for delta-v (s)"),
        Setting("collisionWatchSeconds", \.collisionWatchSeconds, "after a collision, how long to wait for the bike to come to rest (s)"),
        Setting("collisionRestSeconds", \.collisionRestSeconds, "after a collision, still for this long before the alarm (s)"),
        Setting("movingSpeed", \.movingSpeed, "GPS speed above which the bike is moving, whatever the accelerometer says (m/s)"),
        Setting("uprightLearningSeconds", \.uprightLearningSeconds, "time constant for learning the bike's upright reference while riding (s)"),
        Setting("uprightLearningConeDegrees", \.uprightLearningConeDegrees, "once learned, only forces this close to the upright reference refine it: a bike pushed at a lean does not (°)"),
        Setting("rearmSeconds", \.rearmSeconds, "upright for this long after a crash re-arms the detector (s)"),
        Setting("gapSeconds", \.gapSeconds, "a gap between samples longer than this is reported (s)"),
        Setting("reportedImpactG", \.reportedImpactG, "impacts weaker than this are not reported as events (g)"),
        Setting("engineVibrationG", \.engineVibrationG, "vibration above which an engine runs or a road shakes the frame (g)"),
        Setting("parkedAfterSeconds", \.parkedAfterSeconds, "still, no vibration, no GPS speed this long: parked, and a fall is a parked_fall (s)"),
        Setting("unparkSeconds", \.unparkSeconds, "engine running, GPS moving or moved about upright this long ends parked (s)"),
        Setting("parkedFallRotationDegreesPerSecond", \.parkedFallRotationDegreesPerSecond, "a parked bike turning this fast fell; slower, a person laid it down (°/s)"),
        Setting("parkedFallPeakG", \.parkedFallPeakG, "a landing this hard tells a parked bike's fall without a gyro (g)"),
        Setting("fallRotationDegreesPerSecond", \.fallRotationDegreesPerSecond, "going over this fast (by the gyro) is a fall into lying, not a lift; without a gyro (or with a dead one) a landing of parkedFallPeakG is (°/s)"),
        Setting("fallenLyingAngleDegrees", \.fallenLyingAngleDegrees, "a bike that went over as a fall does lies from this posture (°)"),
        Setting("fallSettleSeconds", \.fallSettleSeconds, "after a fall no riding window begins for this long: a fallen bike shakes (s)"),
        Setting("ridingConfirmationSeconds", \.ridingConfirmationSeconds, "riding this long confirms (or replaces) the upright reference learned at start (s)"),
        Setting("relearnRidingSeconds", \.relearnRidingSeconds, "consistent riding this long far from a confirmed reference replaces it (s)"),
    ]

    /// Sets one setting from text (`lyingAngleDegrees`, `65`), or says what is wrong with it.
    /// `key` in snake_case, as the configuration file writes every key (`lying_angle_degrees`), or
    /// in the camelCase the settings were first written in (`lyingAngleDegrees`).
    package mutating func set(_ key: String, to text: String) throws(ConfigurationError) {
        guard let setting = Self.settings.first(where: { $0.key == key || Self.snakeCase($0.key) == key }) else {
            throw ConfigurationError(key: key, reason: "unknown detector setting; known: \(Self.settings.map { Self.snakeCase($0.key) }.joined(separator: ", "))")
        }
        guard let value = Double(text.trimmingSpaces()), value.isFinite else {
            throw ConfigurationError(key: key, reason: "'\(text)' is not a number")
        }
        self[keyPath: setting.path] = value
        let problems = validationErrors().filter { $0.hasPrefix(key + " ") }
        if let problem = problems.first { throw ConfigurationError(key: key, reason: problem) }
    }
}

/// The detector's fixed thresholds: from the physics of a bike, a rider and a MEMS sensor, not tuned per
/// bike, so not in the configuration file. Each with its unit and its reason; the settings above are
/// the ones an installer may change.
extension DetectorConfiguration {
    // MARK: Input sanity

    /// Beyond any MEMS IMU's range with a wide margin (accelerometers reach ±16 g, some ±200 g): such
    /// a reading is a corrupt sample, not a motion, m/s².
    package static let largestAcceleration = 4000.0
    /// The same for gyros (±4000 °/s at most), rad/s.
    package static let largestRotation = 200.0
    /// A GPS speed at or above this is a corrupt fix (720 km/h), m/s.
    static let largestSpeed = 200.0
    /// A sample more than a day after the one before is a corrupt time stamp, seconds.
    static let largestSampleGap = 86_400.0
    /// Non-physical samples are reported at most this often (with a count), seconds.
    static let faultReportInterval = 1.0

    // MARK: Posture

    /// Under this posture the bike is upright: a side stand leans 8–16°, riding reads near 0, °.
    static let uprightDegrees = 20.0
    /// A smoothed force shorter than this share of gravity hides part of it (a dead axis, free fall):
    /// the posture is uncertain, and a rest reading it is evidence of a missing axis.
    static let uncertainForceShare = 0.9
    /// A reading within this share of 1 g is gravity in full (a healthy sensor at rest reads 0.97–1.03).
    static let plausibleGravityTolerance = 0.1
    /// With a dead axis, a posture short of this is not clearly lying without the long rest: a dead
    /// axis hides up to a few tens of degrees, °.
    static let clearDeadAxisLyingDegrees = 65.0
    /// Lying on its side rather than pitched (a wheelie): the sideways share of the tilt is at least
    /// this times the longitudinal one.
    static let sidewaysShare = 0.5

    // MARK: The upright reference

    /// The first reference is the mean force over this long (a rider sitting on the bike, or riding), seconds.
    static let initialUpSeconds = 0.5
    /// A force shorter than this points nowhere (noise, free fall), in g.
    static let smallestDirectionG = 0.05
    /// Before a minute of riding taught the up, forces this close to it refine it, so that a start
    /// on the side stand (8–16° off) fades, °.
    static let firstUprightConeDegrees = 40.0
    /// Riding's steady force stays between these shares of gravity: less is free fall, more a blow.
    static let steadyForceMinimum = 0.6
    static let steadyForceMaximum = 2.0
    /// The frame shakes with riding (engine, road) when an axis's vibration exceeds this, m/s²; the
    /// bike is quiet enough to weigh gravity when the axes' vibrations add up to less than `quietVibration`.
    static let ridingVibration = 0.3
    static let quietVibration = 0.6
    /// …and it turns slower than this, rad/s (a turn reads g/cos(lean), not gravity).
    static let quietRotation = 0.05
    /// Gravity's magnitude is learned only from rests reading between these shares of it.
    static let gravityLearningLow = 0.95
    static let gravityLearningHigh = 1.05

    // MARK: The forward axis

    /// The horizontal force is learned from while the vertical stays within this share of gravity
    /// (braking and accelerating; a turn raises the vertical to g/cos(lean)).
    static let forwardVerticalTolerance = 0.03
    /// …and the horizontal stays under this share of it (more is no riding force), in g.
    static let forwardHorizontalLimit = 0.8
    /// Time constant of the horizontal statistics, seconds.
    static let forwardLearningSeconds = 60.0
    /// A horizontal variation above this share of gravity is evidence (braking, accelerating), in g…
    static let forwardVariation = 0.08
    /// …and this much of it makes the axis worth computing, seconds; it is computed again this often.
    static let forwardEvidenceSeconds = 5.0
    static let forwardUpdateSeconds = 1.0
    /// The principal horizontal direction is the forward axis only when its variance is at least
    /// this many times the one across it.
    static let forwardDominance = 4.0

    // MARK: The gyro's tilt

    /// The gyro drifts: its tilt is trusted for this long after it was last anchored upright, seconds.
    static let gyroAnchorLifetimeSeconds = 60.0
    /// Still and upright this long anchors the gyro's tilt, seconds.
    static let gyroAnchorRestSeconds = 1.0
    /// The gyro settles a tilt the accelerometer already reads at least this large (but ambiguous), °.
    static let gyroTiltFromDegrees = 40.0
    /// With a dead axis the gyro's tilt counts only after a rotation this fast (a fall; riding turns
    /// and stops stay far below), rad/s.
    static let deadAxisFallRotation = 1.5
    /// A dead-axis gravity rebuilt with one sign must match the live axes within this (in g)…
    static let gyroTiltFitError = 0.25
    /// …and fit clearly better than the other sign (this share of its error), unless the hidden part is
    /// smaller than `gyroTiltSmallHidden` (in g), where both signs say the same.
    static let gyroTiltFitMargin = 0.5
    static let gyroTiltSmallHidden = 0.1
    /// The gyro's bias is learned at rest, when it reads under this, rad/s, with this time constant, seconds.
    static let gyroBiasLimit = 0.05
    static let gyroBiasSeconds = 5.0

    // MARK: Falls

    /// A fall's crossing into lying is judged until this long after it: the landing may come just after, seconds.
    static let fallJudgingSeconds = 1.0
    /// The posture a tilt is timed to, from `uprightDegrees`, °: a fall does the 40° in a few tenths of a
    /// second, a person laying a bike down takes seconds.
    static let fastTiltDegrees = 60.0
    /// A gyro reading under this while the posture turned past 45° is dead or stuck at zero, °/s.
    static let stuckGyroDegreesPerSecond = 2.0
    /// A landing counts for a fall when it came no earlier than this before the bike left upright
    /// (the smoothed posture lags the landing), seconds.
    static let landingBeforeTiltSeconds = 0.5
    /// A fall (a fast tilt) this recent tells a parked bike's fall from a person's laying it down, seconds.
    static let fellLikeAFallSeconds = 20.0
    /// A rest reading clearly less than gravity for this long is evidence of a missing axis, seconds.
    static let deficientRestSeconds = 2.0
    /// After a crash or a parked fall, upright is under this posture, °…
    static let rearmUprightDegrees = 30.0
    /// …reading at least this share of what the upright reference read.
    static let rearmForceShare = 0.7

    // MARK: Impacts

    /// A pulse goes on while the dynamic force exceeds this, in g…
    static let pulseContinuesG = 1.5
    /// …and ends this long after it last did, seconds.
    static let pulseEndSeconds = 0.1
    /// Impacts are reported at most this often, seconds.
    static let impactReportInterval = 1.0
    /// GPS gives a fix at least this often: a held speed is the last fix repeated, seconds.
    static let gpsFixInterval = 1.0
    /// A GPS speed drop is a collision only with an impact pulse ending this close before it, seconds.
    static let speedDropPulseSeconds = 1.5
    /// A collision's pulse stops the bike: the sensor has settled within this long of its end (a pinned
    /// bike settles, its lean and the smoothing included, within about 2 s; a rider who rode on and braked to a stop takes longer: a
    /// reaction, then braking from what speed was left), seconds.
    static let collisionStopSeconds = 2.5
    /// After a collision's pulse, the sensor has settled while its smoothed force stays within this of
    /// where it settled, whatever GPS and the gyro say, m/s² (0.15 g: braking moves it by 0.3 g and more).
    static let settledTolerance = 1.5
    /// A landing or a hard hit after which the bike rests tilted this far or more (a rider's foot
    /// holds it within 15°, a side stand at 8–16°) was a crash: a highside landing on its wheels and
    /// tumbling to rest on its bars at 56° is one, degrees.
    static let tiltedAfterHitDegrees = 30.0
    /// A GPS fix this long after a collision's pulse that still reads moving: the bike rode on (the
    /// fix's latency is under a second), seconds.
    static let riddenOnAfterSeconds = 1.2
    /// A pulse whose delta-v along the bike's up is at least this share of its horizontal delta-v is
    /// a hard hit (a pothole, a bump, a kerb climbed), not a collision: more than 45° from the
    /// bike's horizontal, where a collision's deceleration stays within about 20° of it.
    static let hardHitVerticalShare = 1.0
    /// In the air: the force, through a low-pass of `flightFilterSeconds` (the engine's 25–200 Hz
    /// out: 1.5 g at 30 Hz leaves 0.2 g), under `freeFallG` for at least `flightSeconds` (a fall of
    /// 5 cm), in g and seconds.
    static let freeFallG = 0.3
    static let flightFilterSeconds = 0.04
    static let flightSeconds = 0.1
    /// A pulse beginning this soon after a flight ended is its landing, seconds.
    static let landingAfterFlightSeconds = 0.3

    // MARK: Riding windows

    /// A riding spell survives breaks of this long with no shaking, no movement and no GPS speed, seconds.
    static let spellBreakSeconds = 2.0
    /// A force smaller than this is lost in noise, in g.
    static let spellSmallestForceG = 0.02
    /// The bike moves within this long of the smoothed force last changing (riding keeps changing it;
    /// idling never does), seconds.
    static let recentlyMovedSeconds = 2.0
    /// A spell that mostly idled starts afresh after this long, seconds.
    static let spellLongestSeconds = 120.0
    /// A window's directions bunch when the mean of their unit vectors is at least this long…
    static let spellBunching = 0.95
    /// …and its two halves agree within 15° (the cosine).
    static let spellHalvesCosine = 0.966
    /// A window reading at least this share of gravity shows the up in full (0.95 g hides at most 18° on a dead axis).
    static let fullGravityShown = 0.95
    /// Riding within 30° of the reference (the cosine) confirms it; farther, it replaces it.
    static let confirmCosine = 0.866

    // MARK: The dead axis

    /// Time constant of each axis's vibration, seconds; the axes are judged this often, seconds.
    static let vibrationSeconds = 3.0
    static let axisCheckSeconds = 1.0
    /// After this many seconds of shaking, an axis showing less than `silentAxisShare` of the most
    /// shaken axis's vibration is silent (the engine and the road shake a frame in every direction).
    static let silentAxisShakenSeconds = 30
    static let silentAxisShare = 0.02
    /// An axis is dead when the others' smoothed readings spanned more than `deadAxisOthersRange`
    /// (m/s²) while it spanned less than `deadAxisRange` (m/s²) with less than `deadAxisVibrationShare`
    /// of the strongest vibration, over at least `deadAxisWatchSeconds` of the session.
    static let deadAxisOthersRange = 3.0
    static let deadAxisRange = 0.3
    static let deadAxisVibrationShare = 0.15
    static let deadAxisWatchSeconds = 60.0

    // MARK: Evidence

    /// The evidence (peaks, delta-v) is kept in two buckets of this long: the last 10–20 s, seconds.
    static let evidenceBucketSeconds = 10.0
    /// The fall's swing (the peak rotation) in two buckets of this long: the last 1–2 s, seconds.
    static let rotationBucketSeconds = 1.0
}

/// A configuration value that cannot be used: which key, and why.
package struct ConfigurationError: Error, Equatable, CustomStringConvertible, Sendable {
    package var key: String
    package var reason: String

    package init(key: String, reason: String) {
        self.key = key
        self.reason = reason
    }

    package var description: String { "\(key): \(reason)" }
}
