// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import Logging
import RideGuardCore
import SerialModem
import Storage
import Synchronization
import SystemCalls

/// How one try to send a message ended.
package enum SendOutcome: Sendable {
    case sent
    /// Given up for good: why, or nil for a damaged row the outbox set aside.
    case gaveUp(SendError?)
    /// Failed for now; tried again later.
    case willRetry(SendError)
}

/// Sends what the outbox holds through the modem, oldest first, and records every outcome. A
/// transient failure is retried with exponential backoff and jitter; a permanent one (invalid
/// number) is given up with its reason. Nothing is deleted.
package actor OutboxSender {
    private let outbox: Outbox
    private let modem: any SMSTransport
    private let clock: any ServiceClock
    private let logger: Logger
    /// Told how each try ended, by kind and recipient (a damaged row the outbox set aside is given up).
    private let onOutcome: @Sendable (_ kind: OutboxKind, _ recipient: String, _ outcome: SendOutcome) async -> Void
    /// First retry delay, seconds; it doubles up to 5 min.
    private let retryBase: Double
    /// The message's words as it leaves, for those that say how things stand (nil: as queued).
    private let compose: @Sendable (OutboxMessage) async -> String?

    package init(outbox: Outbox, modem: any SMSTransport, clock: any ServiceClock, retryBase: Double = 5,
                logger: Logger, compose: @escaping @Sendable (OutboxMessage) async -> String? = { _ in nil },
                onOutcome: @escaping @Sendable (_ kind: OutboxKind, _ recipient: String, _ outcome: SendOutcome) async -> Void = { _, _, _ in }) {
        self.retryBase = retryBase
        self.compose = compose
        self.outbox = outbox
        self.modem = modem
        self.clock = clock
        self.logger = logger
        self.onOutcome = onOutcome
    }

    /// Seconds before attempt `n + 1` after `n` failures: base, 2×, 4×, … up to 5 min, ±20 %.
    package static func backoff(afterAttempts attempts: Int, base: Double = 5) -> Double {
        Backoff(first: base, limit: 300).delay(afterFailures: attempts) * Double.random(in: 0.8...1.2)
    }

    /// Puts messages interrupted by a crash back in the queue. Call once at start.
    package func resume() throws -> Int {
        try outbox.resumeInterrupted(now: clock.now())
    }

    /// Sends every message that is due now. Returns how many are still waiting.
    @discardableResult
    package func sendDue() async throws -> Int {
        while let message = try await claimNext(), let id = message.id {
            let references: [Int]
            let body = await compose(message) ?? message.body
            do {
                references = try await modem.send(body, to: message.recipient)
            } catch {
                if error.permanent {
                    let line = try outbox.markFailed(id, error: error.reason, now: clock.now())
                    logger.warning("\(line)")
                    await onOutcome(message.kind, message.recipient, .gaveUp(error))
                } else {
                    let wait = Self.backoff(afterAttempts: message.attempts, base: retryBase)
                    let line = try outbox.markRetry(id, error: error.reason, at: clock.now() + wait, now: clock.now())
                    logger.warning("\(line)")
                    await onOutcome(message.kind, message.recipient, .willRetry(error))
                }
                continue
            }
            let line = try outbox.markSent(id, references: references, body: body, now: clock.now())
            logger.info("\(line)")
            await onOutcome(message.kind, message.recipient, .sent)
        }
        return try outbox.countPending()
    }

    /// The next message due; the damaged alerts set aside on the way are settled as failed.
    private func claimNext() async throws -> OutboxMessage? {
        let message = try outbox.claimNext(now: clock.now())
        for recipient in outbox.takeSetAsideAlerts() {
            await onOutcome(.alert, recipient, .gaveUp(nil))
        }
        return message
    }

    /// Sends until nothing is pending or `deadline` passes; returns how many are left.
    package func flush(until deadline: Double) async throws -> Int {
        while true {
            let left = try await sendDue()
            if left == 0 || clock.now() >= deadline { return left }
            try await clock.sleep(until: min(deadline, clock.now() + 1))
        }
    }
}
