// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
import SystemCalls
#endif
import CGPS
import FoundationEssentials
import Glibc
import RideGuardCore
import Synchronization

/// Reads fixes from gpsd on a dedicated thread, reconnecting with backoff when gpsd is absent or
/// restarts. Only usable fixes are delivered: mode 2D or 3D with finite coordinates (gpsd 3.22
/// leaves `status` at 0 even with a 3D fix, so it is not used).
package final class GPSDWatcher: Sendable {
    package enum Event: Sendable {
        case fix(Fix)
        /// gpsd answered: fixes will follow when the receiver has one.
        case connected
        /// Lost or refused; the watcher retries after `retryIn` seconds.
        case disconnected(reason: String, retryIn: Double)
    }

    private final class Flags: Sendable {
        let running = Atomic<Bool>(true)
    }

    private let flags = Flags()

    /// Starts watching `host:port`; `onEvent` runs on the watcher's thread.
    package init(host: String, port: String, maximumBackoff: Double = 30, onEvent: @escaping @Sendable (Event) -> Void) {
        let flags = self.flags
        startThread("rg-gpsd") {
            var backoff = Backoff(first: 0.5, limit: maximumBackoff)
            while flags.running.load(ordering: .acquiring) {
                let connection: GPSDConnection
                do {
                    connection = try GPSDConnection(host: host, port: port)
                } catch {
                    let wait = backoff.next()
                    onEvent(.disconnected(reason: "\(error)", retryIn: wait))
                    GPSDWatcher.pause(wait, while: flags)
                    continue
                }
                onEvent(.connected)
                backoff.reset()
                let reason = connection.read(while: { flags.running.load(ordering: .acquiring) }) { fix in onEvent(.fix(fix)) }
                if flags.running.load(ordering: .acquiring) {
                    onEvent(.disconnected(reason: reason, retryIn: backoff.delay))
                    GPSDWatcher.pause(backoff.delay, while: flags)
                }
            }
        }
    }

    package func stop() {
        flags.running.store(false, ordering: .releasing)
    }

    /// What one look at gpsd found: a fix, or whether gpsd answered at all.
    package struct Probe: Sendable {
        package var fix: Fix?
        package var connected = false
        package var problem: String?
    }

    /// Waits up to `seconds` for a fix from gpsd at `host:port` (retrying a gpsd that is still starting).
    package static func probe(host: String, port: String, seconds: Double) -> Probe {
        let seen = Mutex(Probe())
        let watcher = GPSDWatcher(host: host, port: port) { event in
            seen.withLock { s in
                switch event {
                case .fix(let fix): s.fix = fix
                case .connected: s.connected = true
                case .disconnected(let reason, _): s.problem = reason
                }
            }
        }
        defer { watcher.stop() }
        let deadline = Date().addingTimeInterval(seconds)
        while seen.withLock({ $0.fix == nil }) && Date() < deadline {
            usleep(50_000)
        }
        return seen.withLock { $0 }
    }

    private static func pause(_ seconds: Double, while flags: Flags) {
        var left = seconds
        while left > 0 && flags.running.load(ordering: .acquiring) {
            usleep(useconds_t(min(left, 0.1) * 1e6))
            left -= 0.1
        }
    }
}

extension GPSDConnection {
    /// Reads until gpsd goes away or `keepGoing` says stop; returns why it stopped. Each TPV report
    /// with a usable fix is delivered once.
    func read(while keepGoing: () -> Bool, onFix: (Fix) -> Void) -> String {
        while keepGoing() {
            switch next(seconds: 0.5) {
            case .quiet, .report(isFix: false): continue
            case .closed(let reason): return reason
            case .report(isFix: true):
                let fix = rg_gps_current_fix(data)
                guard fix.usable else { continue }
                onFix(Fix(time: fix.has_time ? fix.time_s : Date().timeIntervalSince1970,
                          latitude: fix.latitude, longitude: fix.longitude,
                          altitude: fix.altitude_m.isFinite ? fix.altitude_m : nil,
                          speed: fix.speed_mps.isFinite ? fix.speed_mps : nil,
                          track: fix.track_deg.isFinite ? fix.track_deg : nil,
                          accuracy: fix.eph_m.isFinite ? fix.eph_m : nil))
            }
        }
        return "stopped"
    }
}
