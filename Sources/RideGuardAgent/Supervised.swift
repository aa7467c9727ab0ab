// SPDX-License-Identifier: Apache-2.0
import Logging
import RideGuardCore
import ServiceLifecycle
import SystemCalls

/// What happens when a part of the agent ends before the agent is told to stop. Each part retries
/// its own I/O and should never end; this is the policy for when one does anyway (a bug, an error
/// it did not expect). Before, any part that returned ended the whole agent.
enum EndPolicy {
    /// Started again, 1 s doubling to 60 s between tries, each end journaled: the rest of the agent
    /// goes on detecting and alerting meanwhile.
    case restart
    /// The agent stops so that systemd starts it again (`Restart=always`): for the emergency
    /// workflow, which owns the state every other part reads. The state it saved is resumed.
    case restartAgent
}

/// A part run under its `EndPolicy`.
struct Supervised: Service, CustomStringConvertible {
    let service: any Service & CustomStringConvertible
    let policy: EndPolicy
    let clock: any ServiceClock
    let logger: Logger
    /// Says an end in the journal.
    let journal: @Sendable (String) -> Void
    /// The first wait before a restart, seconds.
    var firstDelay = 1.0

    var description: String { service.description }

    func run() async throws {
        var backoff = Backoff(first: firstDelay, limit: 60)
        while true {
            var failure: (any Error)?
            do { try await service.run() } catch { failure = error }
            if Task.isShuttingDownGracefully || Task.isCancelled {
                if let failure { throw failure }
                return
            }
            let why = failure.map { "failed (\($0))" } ?? "ended"
            switch policy {
            case .restartAgent:
                let text = "\(service.description) \(why) while the agent runs: the agent stops so that systemd starts it again, resuming what it saved"
                logger.critical("\(text)")
                journal(text)
                throw SupervisedEnd(text)
            case .restart:
                let delay = backoff.next()
                let text = "\(service.description) \(why) while the agent runs: started again in \(Int(delay)) s"
                logger.error("\(text)")
                journal(text)
                do { try await clock.sleep(until: clock.now() + delay) } catch { return }
            }
        }
    }
}

struct SupervisedEnd: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
