// SPDX-License-Identifier: Apache-2.0
import Logging
import RideGuardCore
import Synchronization

/// What the agent knows of its IMU, written by the sampler and read by `status` and systemd: the
/// sample count and rate, the last fault, whether it is blind (no sample: stalled, or not opened).
final class SensorHealth: Sendable {
    struct Status: Sendable {
        var samples = 0
        var lastSampleWall = Double.nan
        var rateHz = 0.0
        var lastFault: String?
        /// The low-passed specific force, g: about 1 at rest.
        var gravityG = Double.nan
        /// Non-physical samples dropped this run.
        var rejected = 0
        /// The device read, and how (`ReadMode.summary`), once opened.
        var device: String?
        var readMode: String?
        /// What the detector said of a dead axis, once it found one.
        var deadAxis: String?
        fileprivate var windowStart = Double.nan
        fileprivate var windowSamples = 0
        fileprivate var lastWatchdogPing = -Double.infinity
    }

    private let status = Mutex(Status())
    private let blind = Atomic<Bool>(false)
    private let emergency: EmergencyService
    private let logger: Logger

    init(emergency: EmergencyService, logger: Logger) {
        self.emergency = emergency
        self.logger = logger
    }

    var snapshot: Status { status.withLock { $0 } }

    /// One sample seen at `now`.
    func sampled(at now: Double, gravityG: Double) {
        if blind.load(ordering: .relaxed), blind.exchange(false, ordering: .acquiringAndReleasing) {
            logger.info("IMU: samples again")
            emergency.post(.event(.health(.imu, problem: nil, at: now)))
        }
        status.withLock { s in
            s.samples += 1
            s.lastSampleWall = now
            s.gravityG = gravityG
            if s.windowStart.isNaN || now - s.windowStart >= 5 {
                if !s.windowStart.isNaN { s.rateHz = Double(s.windowSamples) / (now - s.windowStart) }
                s.windowStart = now
                s.windowSamples = 0
            }
            s.windowSamples += 1
        }
    }

    /// The sampler's thread is alive at `now` (sampling, waiting for the IMU, or retrying it).
    /// Returns true once a second: time to feed systemd's watchdog. Fed whether or not samples
    /// come, so a missing IMU is said (`status`, the buzzer) instead of restarting the agent for ever;
    /// a thread that hangs stops feeding it, and systemd restarts the agent.
    func beat(at now: Double) -> Bool {
        status.withLock { s in
            guard now - s.lastWatchdogPing >= 1 else { return false }
            s.lastWatchdogPing = now
            return true
        }
    }

    func rejected(_ count: Int) {
        status.withLock { $0.rejected += count }
    }

    func opened(_ device: String, readMode: String) {
        status.withLock {
            $0.device = device
            $0.readMode = readMode
        }
    }

    func fault(_ summary: String) {
        status.withLock { $0.lastFault = summary }
    }

    func deadAxis(_ summary: String) {
        status.withLock { $0.lastFault = summary; $0.deadAxis = summary }
    }

    /// The IMU sends nothing (`reason`): the workflow hears it once, until samples come again.
    func wentBlind(_ reason: String, at now: Double) {
        guard !blind.exchange(true, ordering: .acquiringAndReleasing) else { return }
        emergency.post(.event(.health(.imu, problem: reason, at: now)))
    }
}
