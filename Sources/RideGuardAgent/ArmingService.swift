import Logging
import RideGuardCore
import ServiceLifecycle
import Storage

/// Arms, or says why it cannot and checks again every 10 s (a contact or a message added while the
/// agent runs arms it, no restart needed); then sleeps until the group shuts down. Last to start,
/// first to stop. systemd hears READY=1 only once the agent protects the rider, or carries on with
/// an emergency resumed after a restart.
struct ArmingService: Service, CustomStringConvertible {
    let emergency: EmergencyService
    let sensor: SensorHealth
    let database: RideGuardDatabase
    let clock: any ServiceClock
    let logger: Logger
    var description: String { "arming" }

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            var problems = armingProblems()
            await arm(problems: problems)
            while !problems.isEmpty {
                try await clock.sleep(until: clock.now() + 10)
                problems = armingProblems()
                if problems.isEmpty { await arm(problems: problems) }
            }
        }
        try? await gracefulShutdown()
        SystemdNotify.send("STOPPING=1")
        logger.info("stopping")
    }

    /// What stops the agent from protecting the rider: nobody to alert. (Without a message of the
    /// rider's own, alerts start with the default one in the configured language: never a reason not
    /// to protect.)
    private func armingProblems() -> [String] {
        var problems: [String] = []
        if ((try? database.contacts()) ?? []).isEmpty { problems.append("no emergency contact (rideguard contacts add NAME NUMBER)") }
        return problems
    }

    /// Arms when there are no problems, otherwise says why not (journal, buzzer fault pattern,
    /// systemd status).
    private func arm(problems: [String]) async {
        await emergency.handle(.arm(at: clock.now(), problems: problems))
        let state = await emergency.state
        if state == .armed {
            SystemdNotify.send("READY=1\n" + sensor.armedStatus)
        } else if state != .disarmed {
            SystemdNotify.send("READY=1\nSTATUS=emergency in progress (\(state.rawValue))")
        } else if !problems.isEmpty {
            SystemdNotify.send("STATUS=not protecting: " + problems.joined(separator: "; "))
        }
    }
}
