// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import GPIOLines
import Logging
import RideGuardCore
import ServiceLifecycle
import SystemCalls
import Synchronization

/// The button's GPIO line, watched on its own thread and reopened with backoff after an error: a
/// loose connector must not leave the rider unable to cancel. While it is gone the fault goes to the
/// workflow (journaled, shown in `status` and, when armed, sounded); "button back" when it returns.
struct ButtonService: Service, CustomStringConvertible {
    let address: GPIOLineAddress
    let activeLow: Bool
    let problems: PartProblems
    let emergency: EmergencyService
    let clock: any ServiceClock
    let logger: Logger
    var description: String { "button" }

    func run() async throws {
        let address = address, activeLow = activeLow
        let lost = Atomic<Bool>(false)
        let watcher = ButtonWatcher(open: { () throws(GPIOError) -> GPIOLine in
            try GPIOLine.input(address, activeLow: activeLow)
        }, onEdge: { edge in
            // Kernel timestamps are monotonic; the workflow's time is the wall clock.
            let age = monotonicSeconds() - edge.monotonicSeconds
            emergency.post(.buttonEdge(pressed: edge.pressed, at: clock.now() - max(0, age)))
        }, onEvent: { event in
            switch event {
            case .opened:
                problems.set("button", nil)
                if lost.exchange(false, ordering: .acquiringAndReleasing) {
                    emergency.post(.event(.health(.button, problem: nil, at: clock.now())))
                }
            case .failed(let error, let retry):
                problems.set("button", "\(error); retrying")
                logger.warning("button: \(error); retrying in \(DecimalFormat.string(retry, decimals: 1)) s")
                if !lost.exchange(true, ordering: .acquiringAndReleasing) {
                    emergency.post(.event(.health(.button, problem: "the button (\(address)) cannot be read: \(error); a false alarm cannot be cancelled on the bike", at: clock.now())))
                }
            }
        })
        try? await gracefulShutdown()
        watcher.stop()
    }
}
