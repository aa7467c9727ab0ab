// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import RideGuardAgent
import RideGuardCore
import RideGuardTestSupport
import Storage
import Synchronization
import Testing

/// `rideguard run`'s agent built in the test's own process on a manual clock: the same wiring
/// (`Agent`), the parts the configuration names (the simulated IMU playing a trace, the real modem
/// code on a fake modem's pty, gpsd or a fixed position), and time moved by the test. A countdown,
/// a ring or a retry takes no real time; only the peers' I/O does.
package final class InProcessAgent: Sendable {
    package let clock: ManualClock
    package let agent: Agent
    package let log: LogLines
    private let running: Task<Void, Never>

    /// Starts the agent on `configuration` (and `database`, opened already, if given); the clock
    /// starts at the real time (the journal's times read as today's) unless one is given.
    package init(_ configuration: AgentConfiguration, database: RideGuardDatabase? = nil, clock: ManualClock = ManualClock(now: Date().timeIntervalSince1970),
         log: LogLines = LogLines()) throws {
        self.clock = clock
        self.log = log
        let agent = try Agent(configuration: configuration, database: database, clock: clock, logger: log.logger)
        self.agent = agent
        running = Task { await agent.run() }
    }

    /// Moves the agent's time on in steps of `step` seconds until `done` holds; fails after `limit`
    /// seconds of the agent's time, with what the agent said last.
    package func advance(until done: () async throws -> Bool, limit: Double, step: Double = 0.1,
                 sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await clock.advance(until: done, limit: limit, step: step, activity: { [log] in log.count },
                                said: { [log] in "; the agent said:\n" + log.all.suffix(30).joined(separator: "\n") },
                                sourceLocation: sourceLocation)
    }

    /// Moves the agent's time on by `seconds`, in steps.
    package func advance(by seconds: Double, step: Double = 0.1) async {
        let end = clock.now() + seconds
        while clock.now() + step <= end { await clock.advance(by: step) }
        if end > clock.now() { await clock.advance(by: end - clock.now()) }
    }

    package func advance(untilState state: WorkflowState, limit: Double, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await advance(until: { await agent.state == state }, limit: limit, sourceLocation: sourceLocation)
    }

    /// Graceful stop, as on SIGTERM, with time moving so that parts waiting on it see the stop.
    package func stop() async {
        agent.stop()
        let stopped = Atomic<Bool>(false)
        let stopping = Task { [running] in
            await running.value
            stopped.store(true, ordering: .releasing)
        }
        // As any wait here: the parts' stops (a pty closed, a thread joined) take real time too, which
        // the clock outran under load (the calls rang on through 60 s of its time before the stop).
        do {
            try await advance(until: { stopped.load(ordering: .acquiring) }, limit: 60)
        } catch {
            return      // recorded, with what the agent said last
        }
        await stopping.value
    }

    /// The configuration most tests start from: everything simulated, the trace `trace` played at
    /// ×`playback`, the rider at 45.1, 5.7, a 10 s countdown, the database in `folder`.
    package static func configuration(in folder: URL, trace: URL = Rideguard.fixtures.appendingPathComponent("example-lowside.csv"),
                              playback: Double = 8, modem: FakeModem? = nil) -> AgentConfiguration {
        var configuration = AgentConfiguration()
        configuration.database = folder.appendingPathComponent("rideguard.sqlite").path
        configuration.controlSocket = folder.appendingPathComponent("control.sock").path
        configuration.imu.simulated = true
        configuration.imu.trace = trace.path
        configuration.imu.speed = playback
        configuration.gpio.simulated = true
        configuration.gps.simulated = true
        configuration.gps.fixedPosition = [45.1, 5.7]
        if let modem {
            configuration.modem.simulated = false
            configuration.modem.device = modem.link
        } else {
            configuration.modem.simulated = true
        }
        configuration.workflow.countdownSeconds = 10
        return configuration
    }
}
