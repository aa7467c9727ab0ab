// SPDX-License-Identifier: Apache-2.0
import Logging
import RideGuardCore
import ServiceLifecycle
import Storage

/// Arms, or says why it cannot, and keeps the arming true while the agent runs: the contacts are
/// read every second, whoever changes them (the page, the CLI, a restore, sqlite3), so the last one
/// removed stops the protection at once and a contact added arms it, no restart needed. Watches the
/// storage every 10 s: a database that cannot be written (a read-only or full SD card) leaves the
/// rider protected, degraded (alerts kept in memory and sent), never unprotected. What the buzzer,
/// `status`, the page, systemd and the fleet say follows from the workflow's protection.
/// Last to start, first to stop. systemd hears READY=1 once the first check is done, protecting or
/// not: READY means the agent runs and answers (the buzzer, `status`, a manual SOS, the page), and
/// systemd's STATUS line says whether it protects. A boot never waits on the rider's set-up.
struct ArmingService: Service, CustomStringConvertible {
    static let contactsEverySeconds = 1.0
    static let storageEverySeconds = 10.0

    let emergency: EmergencyService
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

    /// Arms once it can, then reads the contacts every second and the storage every 10 s; each
    /// change goes to the workflow. Posted, not awaited, in the loop: awaiting the workflow in this
    /// loop crashed Debian's Swift 6.2.3 (sid's swiftlang) in release builds ("Cannot dereference a
    /// null Type!" emitting IR).
    private func watch() async throws {
        if let problem = database.startupProblem { logger.error("\(problem)") }
        var storage = database.storageProblem()
        var (problems, contacts) = check()
        if let storage { logger.error("storage: \(storage)") }
        await emergency.handle(.health(.storage, problem: storage, at: clock.now()))
        await emergency.handle(.health(.contacts, problem: contacts, at: clock.now()))
        await emergency.handle(.arm(at: clock.now(), problems: problems))
        SystemdNotify.send("READY=1\nSTATUS=" + (await emergency.protection).summary)
        var nextStorageCheck = clock.now() + Self.storageEverySeconds
        while !Task.isCancelled {
            try await clock.sleep(until: clock.now() + Self.contactsEverySeconds)
            if clock.now() >= nextStorageCheck {
                nextStorageCheck = clock.now() + Self.storageEverySeconds
                let checked = database.storageProblem()
                if checked != storage {
                    if let checked { logger.error("storage: \(checked)") } else { logger.info("storage: the database can be written again") }
                    emergency.post(.event(.health(.storage, problem: checked, at: clock.now())))
                    storage = checked
                }
            }
            // Read every time, armed or not: the contacts an emergency alerts if the database
            // cannot be read by then are these.
            let (checked, standing) = check()
            if standing != contacts {
                contacts = standing
                logger.info("contacts: \(standing ?? "one at least has confirmed, none declined or unreachable")")
                emergency.post(.event(.health(.contacts, problem: standing, at: clock.now())))
            }
            if checked != problems {
                problems = checked
                logger.info("\(checked.isEmpty ? "contacts: ready to protect" : "not protecting: " + checked.joined(separator: "; "))")
                emergency.post(.event(.arm(at: clock.now(), problems: checked)))
            }
        }
    }

    /// What stops the agent from protecting the rider: nobody to alert (no contact, or every one
    /// declined), or contacts that cannot be read (never taken for none). Without a message of the rider's own, alerts start with the
    /// default one in the configured language; a disk that refuses writes degrades protection:
    /// neither is a reason not to protect.
    /// And what weakens it: no contact has confirmed, or one declined or cannot be reached
    /// (`ContactStanding.problem`); nil when the contacts are in order or cannot be read.
    private func check() -> (arming: [String], contacts: String?) {
        do {
            let contacts = try database.contacts()
            if contacts.allSatisfy(\.standing.isDeclined) {
                let why = contacts.isEmpty ? "no emergency contact" : "every contact declined (replied STOP)"
                return (["\(why) (rideguard contacts add NAME NUMBER, or the phone's page)"], nil)
            }
            return ([], ContactStanding.problem(contacts.map { (DisplayText.neutralised($0.name, lineBreaks: false), $0.standing) }))
        } catch {
            return (["the contacts cannot be read from \(database.path) (\(error)): the database is damaged; restore a backup, or move it aside and add the contacts again"], nil)
        }
    }
}
