// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import SystemCalls
import SystemPackage
import GPIOLines
import Logging
import RideGuardCore
import ServiceLifecycle
import Storage
import Synchronization

/// The ignition's GPIO line (the bike's switched supply through an optocoupler), watched on its own
/// thread like the button and reopened with backoff. Its level goes to the detector through
/// `BikeContext` (off: parked at once); each change is journaled. With
/// `power.shutdown_after_ignition_off_s`, the Pi is powered off cleanly once the ignition has been
/// off that long, never while an emergency is under way.
struct IgnitionService: Service, CustomStringConvertible {
    let address: GPIOLineAddress
    let activeLow: Bool
    let power: AgentConfiguration.Power
    let bike: BikeContext
    let problems: PartProblems
    let emergency: EmergencyService
    let database: RideGuardDatabase
    let clock: any ServiceClock
    let logger: Logger
    var description: String { "ignition" }

    func run() async throws {
        let address = address, activeLow = activeLow, bike = bike, database = database, clock = clock, logger = logger
        let lost = Atomic<Bool>(false)
        let set = { @Sendable (on: Bool) in
            guard bike.setIgnition(on, at: clock.now()) else { return }
            let text = on ? "ignition on: a ride may begin" : "ignition off: the bike is parked (a fall now is the parked bike's, not a crash)"
            database.journal(JournalEntry(.system, text), at: clock.now())
            logger.info("\(text)")
        }
        let watcher = ButtonWatcher(open: { () throws(GPIOError) -> GPIOLine in
            try GPIOLine.input(address, consumer: "rideguard-ignition", activeLow: activeLow, bias: activeLow ? .pullUp : .pullDown,
                               debounceMicroseconds: 50_000)
        }, onEdge: { edge in set(edge.pressed) }, onEvent: { event in
            switch event {
            case .opened(let active):
                problems.set("ignition", nil)
                if lost.exchange(false, ordering: .acquiringAndReleasing) {
                    database.journal(JournalEntry(.system, "ignition line back: \(address) works again"), at: clock.now())
                }
                if let active { set(active) }
            case .failed(let error, let retry):
                problems.set("ignition", "\(error); retrying")
                bike.setIgnition(nil, at: clock.now())
                logger.warning("ignition: \(error); retrying in \(DecimalFormat.string(retry, decimals: 1)) s")
                if !lost.exchange(true, ordering: .acquiringAndReleasing) {
                    database.journal(JournalEntry(.system, "ignition line lost: \(error); the detector decides from the physics alone until it is back"),
                                          at: clock.now())
                }
            }
        })
        if let delay = power.shutdownAfterIgnitionOffSeconds {
            await shutDown(after: delay)
        } else {
            try? await gracefulShutdown()
        }
        watcher.stop()
    }

    /// Once a second: the ignition off for `delay` and no emergency under way → the shutdown
    /// command, once per time the ignition goes off (journaled either way).
    private func shutDown(after delay: Double) async {
        var handled: Double?
        var waitingJournaled = false
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            try? await clock.sleep(until: clock.now() + 1)
            guard bike.ignition == false, let since = bike.ignitionChangedAt, clock.now() - since >= delay, handled != since else {
                waitingJournaled = false
                continue
            }
            let state = await emergency.state
            guard !WorkflowState.emergencyUnderWay.contains(state) else {
                if !waitingJournaled {
                    journal("ignition off for \(Int(delay)) s: not powering off while an emergency is under way (\(state.rawValue))")
                    waitingJournaled = true
                }
                continue
            }
            handled = since
            journal("ignition off for \(Int(delay)) s: powering the Pi off (\(power.shutdownCommand.joined(separator: " ")))")
            // Waited for on a thread of its own: never a blocking wait on the concurrency pool.
            let status = await runProgram(power.shutdownCommand)
            if status == nil { journal("power off failed: \(power.shutdownCommand[0]) could not be started") }
            else if status != 0 { journal("power off failed: \(power.shutdownCommand[0]) exited with \(status!)") }
        }
    }

    private func journal(_ text: String) {
        database.journal(JournalEntry(.system, text), at: clock.now())
        logger.info("\(text)")
    }
}
