// SPDX-License-Identifier: Apache-2.0
import Logging
import RideGuardCore
import SerialModem
import ServiceLifecycle
import Storage

/// The modem's health, checked every minute while the outbox has nothing to send (a send's own
/// outcome speaks meanwhile), so an unplugged modem or a lost network shows in `status` and the
/// journal before a crash, not after. The modem runs one operation at a time: a check never comes
/// between a send's commands.
struct ModemHealthService: Service, CustomStringConvertible {
    let modem: Modem
    let outbox: Outbox
    let database: RideGuardDatabase
    let announcer: FleetAnnouncer
    let emergency: EmergencyService
    let clock: any ServiceClock
    let logger: Logger
    var description: String { "modem health" }

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            var last: String?
            while true {
                var next = clock.now() + 60
                if (try? outbox.countPending()) == 0 {
                    let health = await modem.checkHealth()
                    let summary = health.problem ?? (health.registered
                        ? "ready, network \(health.registration?.rawValue ?? "?")"
                        : "not registered (\(health.registration ?? .unknown))")
                    // A modem that does not answer sends no alert: the rider is not protected. A
                    // network lost is not that: an alert waits for it, and `status` shows it.
                    emergency.post(.event(.health(.modem, problem: health.problem.map { "the modem does not answer (\($0)): no alert can be sent" },
                                                  at: clock.now())))
                    if summary != last {
                        last = summary
                        database.journal(JournalEntry(.system, "modem: \(summary)"), at: clock.now())
                        announcer.announce(FleetEvent(health.problem == nil && health.registered ? .modemReady : .modemFault, summary: summary))
                        logger.info("modem: \(summary)\(health.signalDBm.map { ", \($0) dBm" } ?? "")")
                    }
                } else {
                    next = clock.now() + OutboxService.fallbackSeconds
                }
                try await clock.sleep(until: next)
            }
        }
    }
}
