// SPDX-License-Identifier: Apache-2.0
import Dispatch
import FoundationEssentials
import Glibc
import SystemCalls
import IIOSensor
import Logging
import RideGuardCore
import ServiceLifecycle
import Storage
import Synchronization

/// Where samples come from: the IMU through libiio, or its simulated twin playing a trace.
enum SampleSource: Sendable {
    case iio(SamplerConfiguration)
    case trace(path: String, speed: Double)
}

/// The per-sample pipeline, on the sampler's own thread: GPS speed onto the sample, the detector,
/// the crash window, a recording if one runs, the sensor's health and systemd's watchdog; the
/// detector's crashes and faults go to the emergency workflow in the detector's order. Nothing here
/// waits on the disk: the crash window and recordings hand their samples to queues of their own.
struct SamplerService: Service, CustomStringConvertible {
    let source: SampleSource
    let detector: DetectorConfiguration
    let speeds: SpeedSnapshot
    let crashWindow: CrashWindow
    let recorder: Recorder
    let health: SensorHealth
    let bike: BikeContext
    let emergency: EmergencyService
    let database: RideGuardDatabase
    let clock: any ServiceClock
    let logger: Logger
    var description: String { "sampler" }
    /// Below this the detector misses short impacts, Hz.
    static let slowestUsefulRateHz = 50.0

    func run() async throws {
        let pipeline = Pipeline(service: self)
        // A new detector has no crash in progress (a restarted sampler's crash is forgotten with it).
        emergency.post(.event(.detectorWatching(at: clock.now())))
        let stop: @Sendable () -> Void
        // systemd's watchdog is fed from the sampler's own thread while it lives.
        let heartbeat: @Sendable () -> Void = { [health, clock] in
            if health.beat(at: clock.now()) { SystemdNotify.send("WATCHDOG=1") }
        }
        switch source {
        case .trace(let path, let speed):
            let player = TracePlayer(path: path, speed: speed, clock: clock, onSample: pipeline.take, heartbeat: heartbeat) { problem in
                logger.info("\(problem.map { "simulated IMU: \($0)" } ?? "simulated IMU: end of the trace")")
                pipeline.streamEnded()
            }
            logger.info("IMU: playing \(path) ×\(DecimalFormat.string(speed, decimals: 1))")
            stop = player.stop
        case .iio(let configuration):
            // A reason is logged when it changes, not at every retry (every few seconds while the IMU is missing).
            let lastFailure = Mutex<String?>(nil)
            let readMode = Mutex<ReadMode?>(nil)
            let sampler = IIOSampler(configuration: configuration, onSample: pipeline.take, heartbeat: heartbeat) { event in
                switch event {
                case .opened(let device, let gyro, _, let rate, _, let mode):
                    lastFailure.withLock { $0 = nil }
                    // What sysfs says of a local chip (its driver, its mount matrix) goes with it, for doctor and the page.
                    let sysfs = configuration.uri == "local:" ? IIOSysfs(deviceNamed: device)?.summary : nil
                    health.opened(device, readMode: ([mode.summary] + [sysfs].compactMap { $0 }).joined(separator: "; "))
                    readMode.withLock { $0 = mode }
                    let line = "IMU: \(device) at \(Int(rate)) Hz\(gyro ? " with gyro" : ""), \(mode.summary)"
                    if case .polled = mode { logger.warning("\(line)") } else { logger.info("\(line)") }
                case .stalled(let seconds):
                    health.fault("stalled")
                    health.wentBlind("the IMU sends no sample (stalled for \(DecimalFormat.string(seconds, decimals: 1)) s): a crash cannot be seen", at: clock.now())
                case .failed(let reason, _):
                    health.wentBlind("the IMU cannot be read (\(reason)): a crash cannot be seen", at: clock.now())
                    let changed = lastFailure.withLock { last in
                        defer { last = reason }
                        return last != reason
                    }
                    if changed { logger.warning("IMU: \(reason); retrying every \(DecimalFormat.string(IIOSampler.retryLimitSeconds, decimals: 0)) s at most") }
                case .rateOff(let measured, let nominal):
                    logger.warning("IMU: \(DecimalFormat.string(measured, decimals: 0)) Hz measured, \(Int(nominal)) Hz asked")
                    // An impact lasts 10 to 50 ms: below 50 Hz (or half the rate asked) it falls
                    // between samples. Falls are still seen (the posture changes for seconds).
                    if measured < max(Self.slowestUsefulRateHz, nominal / 2) {
                        let how = readMode.withLock { $0 }.map { " (\($0.summary))" } ?? ""
                        emergency.post(.event(.health(.imuRate, problem: "the IMU gives \(Int(measured)) samples a second of the \(Int(nominal)) asked\(how): a short impact may be missed; wire the IMU's INT line (boards/imus.md)", at: clock.now())))
                    }
                case .rateNormal:
                    // The first 5 s after each opening say this or the above: a slow IMU stays
                    // degraded across reopenings, and a recovered one is cleared.
                    emergency.post(.event(.health(.imuRate, problem: nil, at: clock.now())))
                case .dropped:
                    break
                }
            }
            stop = sampler.stop
        }
        try? await gracefulShutdown()
        // Stopping waits for the sampler's thread to let go of the device and for the trace files
        // to be written: done on a thread of its own, never on the concurrency pool.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            startThread("rg-stop") {
                stop()
                pipeline.streamEnded()
                done.resume()
            }
        }
    }

    /// The state the sampler's thread keeps between samples.
    final class Pipeline: Sendable {
        private let service: SamplerService
        private let detector: Mutex<CrashDetector>
        private let nextProgress = Mutex(-Double.infinity)
        /// When the detector last said the IMU reads far from 1 g at rest (the sample's time).
        private let implausibleAt = Mutex(Double.nan)
        /// Impacts are journaled here, never on the sampler's thread.
        private let journal = DispatchQueue(label: "rideguard.detections")

        init(service: SamplerService) {
            self.service = service
            detector = Mutex(CrashDetector(configuration: service.detector))
        }

        func take(_ incoming: IMUSample) {
            let now = service.clock.now()
            var sample = incoming
            if sample.speed == nil { sample.speed = service.speeds.fresh(at: now) }
            var events: [DetectorEvent] = []
            let ignition = service.bike.ignition
            let state = detector.withLock { d -> CrashDetector.State in
                if d.ignition != ignition { d.setIgnition(ignition) }
                d.process(sample) { events.append($0) }
                return d.state
            }
            if state.context != service.bike.context { contextChanged(to: state.context, at: now) }
            if case .trace = service.source { showProgress(sample, state) }
            service.crashWindow.append(sample)
            service.recorder.record(sample)
            service.health.sampled(at: now, gravityG: state.smoothedG)
            for event in events { detected(event) }
        }

        /// A stream that ends (or an agent that stops) before 30 s after a crash saves what it has;
        /// a recording running is closed. Everything is written before the agent goes on (or exits).
        func streamEnded() {
            service.recorder.stop()
            service.recorder.flush()
            service.crashWindow.flush()
        }

        /// Parked, and no longer parked, are journaled (riding and stopped alternate at every light).
        private func contextChanged(to context: CrashDetector.Context, at now: Double) {
            let was = service.bike.context
            service.bike.context = context
            guard context == .parked || was == .parked else { return }
            let text = context == .parked
                ? "the bike is parked (\(service.bike.ignition == false ? "ignition off" : "still, no engine, no GPS speed")): a fall now is the parked bike's, not a crash"
                : "the bike is no longer parked (\(context.rawValue))"
            let database = service.database
            journal.async { database.journal(JournalEntry(.detections, text), at: now) }
            service.logger.info("\(text)")
        }

        /// The simulated ride, every 5 s of trace: what a person watching the demo follows.
        private func showProgress(_ sample: IMUSample, _ state: CrashDetector.State) {
            guard sample.t >= nextProgress.withLock({ $0 }) else { return }
            nextProgress.withLock { $0 = sample.t + 5 }
            service.logger.info("ride t=\(DecimalFormat.string(sample.t, decimals: 0)) s: \(state.phase.rawValue), \(DecimalFormat.string(state.smoothedG, decimals: 2)) g, posture \(DecimalFormat.string(state.postureDegrees, decimals: 0))°")
        }

        private func detected(_ event: DetectorEvent) {
            let clock = service.clock
            switch event {
            case .crashDetected(let t, let evidence):
                service.crashWindow.crashDetected(at: t)
                service.emergency.post(.event(.crashDetected(at: clock.now(), summary: evidence.summary, evidence: evidence)))
            case .parkedFall(_, let evidence):
                service.bike.lastParkedFall = clock.now()
                service.emergency.post(.event(.parkedFall(at: clock.now(), summary: evidence.summary)))
            case .sensorFault(_, .nonPhysical(let count)):
                // Dropped, journaled and counted: the detector goes on with the next samples, and
                // the rider is still protected (no fault pattern for a corrupt value).
                service.health.rejected(count)
                let at = clock.now(), database = service.database, summary = SensorFault.nonPhysical(count: count).summary
                journal.async { database.journal(JournalEntry(.system, "sensor: \(summary)"), at: at) }
                service.logger.warning("IMU: \(summary)")
            case .sensorFault(_, let fault):
                if fault.isDroppedSample { return }
                if case .deadAxis = fault { service.health.deadAxis(fault.summary) } else { service.health.fault(fault.summary) }
                switch fault {
                case .deadAxis:
                    service.emergency.post(.event(.health(.imuAxis, problem: fault.summary, at: clock.now())))
                case .implausibleGravity(_):
                    implausibleAt.withLock { $0 = event.t }
                    service.emergency.post(.event(.health(.imuReading, problem: fault.summary, at: clock.now())))
                default:
                    // Over by the time it is seen (a gap ends with the sample that shows it): journaled,
                    // and the protection is what the parts say now.
                    let at = clock.now(), database = service.database
                    journal.async { database.journal(JournalEntry(.system, "sensor: \(fault.summary)"), at: at) }
                    service.logger.warning("IMU: \(fault.summary)")
                }
            case .uprightLearned(let t, _):
                // An upright learned from a plausible reading (the detector learns one from an
                // implausible reading too, at the same instant as it says so: that one ends nothing).
                guard implausibleAt.withLock({ $0 }) != t else { return }
                service.emergency.post(.event(.health(.imuReading, problem: nil, at: clock.now())))
            case .impact(_, let peak, _, _, let kind):
                let at = clock.now(), database = service.database
                let text = "impact \(DecimalFormat.string(peak, decimals: 1)) g: \(kind.summary)"
                journal.async { database.journal(JournalEntry(.detections, text), at: at) }
                service.logger.info("\(text)")
            case .rearmed:
                service.emergency.post(.event(.detectorWatching(at: clock.now())))
            }
        }
    }
}
