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
///
/// The SIM is part of the protection: missing, locked or refused by the network, no alert can
/// leave (`HealthPart.sim`). While it is so the modem is asked every 10 s, messages waiting or
/// not, so that a SIM inserted or unlocked while the agent runs is found; once it is ready the
/// messages it held are sent at once.
struct ModemHealthService: Service, CustomStringConvertible {
    static let everySeconds = 60.0
    static let simFaultEverySeconds = 10.0

    let modem: Modem
    let outbox: Outbox
    let database: RideGuardDatabase
    let announcer: FleetAnnouncer
    let emergency: EmergencyService
    let doorbell: Doorbell
    let clock: any ServiceClock
    let logger: Logger
    var description: String { "modem health" }

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            var last: String?
            var simProblem: String?
            while true {
                let idle = (try? outbox.countPending()) == 0
                // Without asking: what the last send found.
                let health = idle || simProblem != nil ? await modem.checkHealth() : await modem.lastHealth
                // A modem that does not answer sends no alert: the rider is not protected; nor does
                // one whose SIM is missing, locked or refused. A network lost is not that: an alert
                // waits for it, and `status` shows it.
                let modemProblem = health.simFault == nil ? health.problem.map { "the modem does not answer (\($0)): no alert can be sent" } : nil
                emergency.post(.event(.health(.modem, problem: modemProblem, at: clock.now())))
                emergency.post(.event(.health(.sim, problem: health.simProblem, at: clock.now())))
                if simProblem != nil && health.simProblem == nil && health.sim != nil {
                    heldMessagesGo()
                }
                simProblem = health.simProblem
                let summary = health.simProblem ?? health.problem ?? (health.registered
                    ? "ready, network \(health.registration?.rawValue ?? "?")"
                    : "not registered (\(health.registration ?? .unknown))")
                if summary != last {
                    last = summary
                    database.journal(JournalEntry(.system, "modem: \(summary)"), at: clock.now())
                    announcer.announce(FleetEvent(health.problem == nil && health.registered ? .modemReady : .modemFault, summary: summary))
                    logger.info("modem: \(summary)\(health.signalDBm.map { ", \($0) dBm" } ?? "")")
                }
                let wait = simProblem != nil ? Self.simFaultEverySeconds : idle ? Self.everySeconds : OutboxService.fallbackSeconds
                try await clock.sleep(until: clock.now() + wait)
            }
        }
    }

    /// The SIM is ready again: what it held back goes now, not at its next retry (up to 5 min away).
    private func heldMessagesGo() {
        do {
            let count = try outbox.retryPendingNow(now: clock.now())
            if count > 0 { logger.info("modem: the SIM is ready: \(count) message(s) held back by it go now") }
        } catch {
            logger.error("modem: the SIM is ready, but the outbox cannot be read (\(error)): its messages go at their next retry")
        }
        doorbell.ring()
    }
}
