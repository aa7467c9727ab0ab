// SPDX-License-Identifier: Apache-2.0
import GPSDClient
import Logging
import RideGuardCore
import ServiceLifecycle
import Synchronization

/// Where the rider is: fixes from gpsd, or a simulated position refreshed every second, kept in
/// `whereabouts`; the first fix is reported to the workflow (an alert sent without a position is
/// followed by one).
final class LocationService: Service, CustomStringConvertible {
    /// gpsd at `host:port`, or a fixed simulated position.
    enum Source: Sendable {
        case gpsd(host: String, port: String)
        case fixed(latitude: Double, longitude: Double)
        case none
    }

    let source: Source
    private let whereabouts: Whereabouts
    private let emergency: EmergencyService
    private let clock: any ServiceClock
    private let logger: Logger
    var description: String { "location" }

    init(source: Source, whereabouts: Whereabouts, emergency: EmergencyService, clock: any ServiceClock, logger: Logger) {
        self.source = source
        self.whereabouts = whereabouts
        self.emergency = emergency
        self.clock = clock
        self.logger = logger
    }

    func run() async throws {
        switch source {
        case .gpsd(let host, let port):
            let seenFix = Atomic<Bool>(false)
            let clockWarned = Atomic<Bool>(false)
            let watcher = GPSDWatcher(host: host, port: port) { [self] event in
                switch event {
                case .fix(let received):
                    // Timed on arrival, by the clock every age and deadline is measured with.
                    var fix = received
                    let now = clock.now()
                    fix.time = now
                    if abs(received.time - now) > 60, !clockWarned.exchange(true, ordering: .acquiringAndReleasing) {
                        logger.warning("gpsd: the receiver's time is \(DecimalFormat.string(received.time - now, decimals: 0)) s from this clock (a GPS week rollover, or a clock not set yet): fixes are timed on arrival")
                    }
                    whereabouts.update(fix)
                    if let speed = fix.speed { whereabouts.speeds.store(speed, at: now) }
                    if !seenFix.exchange(true, ordering: .acquiringAndReleasing) {
                        emergency.post(.event(.locationFix(at: clock.now())))
                    }
                case .connected: logger.info("gpsd: connected")
                case .disconnected(let reason, let retry): logger.warning("gpsd: \(reason); retrying in \(DecimalFormat.string(retry, decimals: 1)) s")
                }
            }
            try? await gracefulShutdown()
            watcher.stop()
        case .fixed(let latitude, let longitude):
            try? await cancelWhenGracefulShutdown { [self] in
                var first = true
                while true {
                    whereabouts.update(Fix(time: clock.now(), latitude: latitude, longitude: longitude, speed: 0, accuracy: 5))
                    if first {
                        first = false
                        emergency.post(.event(.locationFix(at: clock.now())))
                    }
                    try await clock.sleep(until: clock.now() + 1)
                }
            }
        case .none:
            try? await gracefulShutdown()
        }
    }
}
