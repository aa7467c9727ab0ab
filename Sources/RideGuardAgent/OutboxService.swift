// SPDX-License-Identifier: Apache-2.0
import Logging
import RideGuardCore
import ServiceLifecycle
import Storage
import Synchronization

/// Sends what the outbox holds: when a message is queued (the doorbell), when a retry falls due,
/// and at least every `fallbackSeconds` (messages queued by another process, such as `rideguard
/// setup`'s test SMS, ring no doorbell). Each alert delivered, or given up, goes back to the
/// workflow, which knows whom it awaits.
struct OutboxService: Service, CustomStringConvertible {
    static let fallbackSeconds = 5.0

    let outbox: Outbox
    let database: RideGuardDatabase
    let transport: any SMSTransport
    let doorbell: Doorbell
    let emergency: EmergencyService
    let selfTest: SelfTest
    /// The messages' language until the rider chose one (`messages.language`).
    let language: MessageLanguage
    let clock: any ServiceClock
    let logger: Logger
    var description: String { "outbox" }

    func run() async throws {
        let outbox = outbox, emergency = emergency, clock = clock
        let outcomes = SMSOutcomes(database: database, emergency: emergency, selfTest: selfTest, clock: clock, logger: logger)
        let words = SendTimeWords(database: database, selfTest: selfTest, language: language)
        let sender = OutboxSender(outbox: outbox, modem: transport, clock: clock, logger: logger, compose: words.compose) { kind, recipient, outcome in
            if kind == .alert {
                switch outcome {
                case .sent: emergency.post(.event(.alertDelivered(contact: recipient, at: clock.now())))
                case .gaveUp: emergency.post(.event(.alertFailed(contact: recipient, at: clock.now())))
                case .willRetry: break
                }
            }
            outcomes.note(kind, to: recipient, outcome)
        }
        // Messages a power cut interrupted go first; until they could be put back (the database
        // cannot even be read), sending waits: their alert must not be passed over.
        let resumed = Atomic<Bool>(false)
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                var wake = clock.now() + 1          // after a database error: try again soon
                do {
                    if !resumed.load(ordering: .relaxed) {
                        let count = try await sender.resume()
                        resumed.store(true, ordering: .relaxed)
                        if count > 0 { logger.warning("outbox: \(count) message(s) interrupted while being sent (a power cut?): sending them again") }
                    }
                    try await sender.sendDue()
                    wake = min(clock.now() + Self.fallbackSeconds, try outbox.nextAttempt() ?? .infinity)
                } catch {
                    logger.error("outbox: \(error); trying again in 1 s")
                }
                await doorbell.wait(until: wake, clock: clock)
            }
        }
    }
}
