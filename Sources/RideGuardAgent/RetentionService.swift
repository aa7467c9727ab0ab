// SPDX-License-Identifier: Apache-2.0
import Logging
import RideGuardCore
import ServiceLifecycle
import Storage

/// Keeps the database from growing for ever on a bike that rides for years: at start and then
/// daily, messages delivered or given up and journal lines older than `database.keep_days` are
/// deleted, a few hundred rows a transaction. What waits to be sent is never touched.
struct RetentionService: Service, CustomStringConvertible {
    static let intervalSeconds = 86_400.0

    let database: RideGuardDatabase
    let keepDays: Int
    let clock: any ServiceClock
    let logger: Logger
    var description: String { "retention" }

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                prune()
                try await clock.sleep(until: clock.now() + Self.intervalSeconds)
            }
        }
    }

    private func prune() {
        do {
            let pruned = try database.prune(before: clock.now() - Double(keepDays) * 86_400)
            guard pruned.messages + pruned.journal > 0 else { return }
            let text = "retention: deleted \(pruned.messages) delivered messages and \(pruned.journal) journal lines older than \(keepDays) days"
            logger.info("\(text)")
            database.journal(JournalEntry(.system, text), at: clock.now())
        } catch {
            logger.warning("retention: old records could not be deleted (\(error)); trying again tomorrow")
        }
    }
}
