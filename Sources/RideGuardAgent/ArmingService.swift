import Logging
import RideGuardCore
import ServiceLifecycle
import Storage

/// Arms, or says why it cannot and checks again every 10 s (a contact added while the agent runs
/// arms it, no restart needed). Watches the storage every 10 s while the agent runs: a database that
/// cannot be written (a read-only or full SD card) leaves the rider protected, degraded (alerts kept
/// in memory and sent; its own buzzer pattern; `status` and `doctor` say it), never unprotected.
/// Last to start, first to stop. systemd hears READY=1 only once the agent protects the rider, or
/// carries on with an emergency resumed after a restart.
struct ArmingService: Service, CustomStringConvertible {
    let emergency: EmergencyService
    let sensor: SensorHealth
    let database: RideGuardDatabase
    let clock: any ServiceClock
    let logger: Logger
    var description: String { "arming" }

    func run() async throws {
        try? await cancelWhenGracefulShutdown { try await watch() }
        try? await gracefulShutdown()
        SystemdNotify.send("STOPPING=1")
        logger.info("stopping")
    }

    /// Arms once it can, then watches the storage and reads the contacts every 10 s. Storage news
    /// is posted, not awaited: awaiting the workflow in this loop crashed Debian's Swift 6.2.3
    /// (sid's swiftlang) in release builds ("Cannot dereference a null Type!" emitting IR).
    private func watch() async throws {
        if let problem = database.startupProblem { logger.error("\(problem)") }
        var storage = database.storageProblem()
        var problems = armingProblems()
        await arm(problems: problems, storage: storage)
        while !Task.isCancelled {
            try await clock.sleep(until: clock.now() + 10)
            let checked = database.storageProblem()
            if checked != storage {
                if let problem = checked {
                    logger.error("storage: \(problem)")
                    emergency.post(.event(.storageFault(at: clock.now(), summary: problem)))
                } else {
                    logger.info("storage: the database can be written again")
                    emergency.post(.event(.partRecovered(at: clock.now(), summary: "storage: the database \(database.path) can be written again; what was kept in memory is written")))
                }
                storage = checked
            }
            // Read every time, armed or not: the contacts an emergency alerts if the database
            // cannot be read by then are these.
            let wasReady = problems.isEmpty
            problems = armingProblems()
            if problems.isEmpty && !wasReady { await arm(problems: problems, storage: storage) }
        }
    }

    /// What stops the agent from protecting the rider: nobody to alert, or contacts that cannot be
    /// read (never taken for none). Without a message of the rider's own, alerts start with the
    /// default one in the configured language; a disk that refuses writes degrades protection:
    /// neither is a reason not to protect.
    private func armingProblems() -> [String] {
        do {
            if try database.contacts().isEmpty { return ["no emergency contact (rideguard contacts add NAME NUMBER)"] }
            return []
        } catch {
            return ["the contacts cannot be read from \(database.path) (\(error)): the database is damaged; restore a backup, or move it aside and add the contacts again"]
        }
    }

    /// Arms when there are no problems, otherwise says why not (journal, buzzer fault pattern,
    /// systemd status). Armed with a storage fault, its pattern follows the chirp.
    private func arm(problems: [String], storage: String?) async {
        await emergency.handle(.arm(at: clock.now(), problems: problems))
        let state = await emergency.state
        if let storage {
            logger.error("storage: \(storage)")
            await emergency.handle(.storageFault(at: clock.now(), summary: storage))
        }
        let degraded = storage == nil ? "" : " (degraded: the database cannot be written)"
        if state == .armed {
            SystemdNotify.send("READY=1\n" + sensor.armedStatus + degraded)
        } else if state != .disarmed {
            SystemdNotify.send("READY=1\nSTATUS=emergency in progress (\(state.rawValue))")
        } else if !problems.isEmpty {
            SystemdNotify.send("STATUS=not protecting: " + problems.joined(separator: "; "))
        }
    }
}
