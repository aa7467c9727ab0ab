import FoundationEssentials
import Glibc
import SystemCalls
import Logging
import RideGuardCore
import Storage
import Synchronization

/// Writes the messages the workflow asks for into the outbox, one per recipient, composed from the
/// emergency's persisted state, the rider's profile and the last fix. Never waits on the disk: a
/// message it refuses is kept in memory and sent (the outbox writes it later); contacts it cannot
/// read are the ones last read; a profile it cannot read leaves the default wording. Only contacts
/// that were never readable stop the queueing: never read as "no contacts", that is journaled (to
/// the log too), sounded, and retried, 1 s doubling to 30 s, while the emergency still wants them.
final class MessageQueue: Sendable {
    private let database: RideGuardDatabase
    private let emergency: EmergencyService
    private let location: LocationService
    private let settings: AgentConfiguration.Messages
    private let doorbell: Doorbell
    private let clock: any ServiceClock
    private let logger: Logger
    private let stopped = Atomic<Bool>(false)

    init(database: RideGuardDatabase, emergency: EmergencyService, location: LocationService, settings: AgentConfiguration.Messages,
         doorbell: Doorbell, clock: any ServiceClock, logger: Logger) {
        self.database = database
        self.emergency = emergency
        self.location = location
        self.settings = settings
        self.doorbell = doorbell
        self.clock = clock
        self.logger = logger
    }

    /// Ends the retries (graceful shutdown: what is not queued is queued again after the restart).
    func stop() {
        stopped.store(true, ordering: .releasing)
    }

    /// The workflow's `queueMessages` action, run inside its batch.
    func queue(_ kind: MessageKind, to recipients: Recipients) async {
        var queued: Set<String> = []
        do {
            try queueNow(kind, to: recipients, about: await emergency.snapshot, skipping: &queued)
        } catch {
            logger.error("messages: could not queue the \(kind.rawValue): \(error); retrying")
            // Posted, not awaited: this runs inside the workflow's batch, which the event follows.
            emergency.post(.event(.messagesBlocked(at: clock.now(), summary: "could not queue the \(kind.rawValue): \(error); retrying")))
            Task { [queued] in await retry(kind, to: recipients, skipping: queued) }
        }
    }

    private func retry(_ kind: MessageKind, to recipients: Recipients, skipping alreadyQueued: Set<String>) async {
        var queued = alreadyQueued
        var delay = 1.0
        var attempts = 1
        while !stopped.load(ordering: .acquiring) {
            try? await clock.sleep(until: clock.now() + delay)
            let state = await emergency.state
            guard kind == .allClear || kind == .parkedFall || WorkflowState.alertsOut.contains(state) else {
                database.journal(JournalEntry(.messages, "\(kind.rawValue) no longer needed (\(state.rawValue)): not queued"), at: clock.now())
                return
            }
            attempts += 1
            do {
                try queueNow(kind, to: recipients, about: await emergency.snapshot, skipping: &queued)
                emergency.post(.event(.partRecovered(at: clock.now(), summary: "\(kind.rawValue) queued after \(attempts) attempts")))
                return
            } catch {
                logger.error("messages: could not queue the \(kind.rawValue) (attempt \(attempts)): \(error)")
                delay = min(30, delay * 2)
            }
        }
    }

    /// Queues one message per recipient not in `queued` (those a failed attempt already queued),
    /// adding each to it. What the messages say of the emergency (crash or SOS, when, the crash's
    /// evidence) comes from its persisted state, never from an earlier one.
    private func queueNow(_ kind: MessageKind, to recipients: Recipients, about emergency: EmergencyWorkflow,
                          skipping queued: inout Set<String>) throws {
        let numbers: [String]
        switch recipients {
        case .everyContact: numbers = try database.contactsToAlert().map(\.number)
        case .only(let list): numbers = list
        case .rider:
            guard let phone = profile().phone else {
                database.journal(JournalEntry(.messages, "\(kind.rawValue): no phone of the rider's own is set (rideguard profile set --phone), nothing sent"), at: clock.now())
                return
            }
            numbers = [phone]
        }
        let text = compose(kind, about: emergency)
        for number in numbers where !queued.contains(number) {
            database.outbox.queue(recipient: number, kind: kind.rawValue, body: text, now: clock.now())
            queued.insert(number)
            doorbell.ring()
        }
        let who = numbers.map(PhoneNumber.mask).joined(separator: ", ")
        let whom = recipients == .rider ? "the rider's phone" : "\(numbers.count) contact\(numbers.count == 1 ? "" : "s")"
        database.journal(JournalEntry(.messages, "\(kind.rawValue) queued for \(whom): \(who)"), at: clock.now())
    }

    /// The outbox kind of an answer to an SMS command.
    static let replyKind = "reply"

    /// The answer to a contact's WHERE (what the agent is doing, the latest position), through the
    /// outbox like every message.
    func queueWhereReply(to number: String) async throws {
        try await queueReply(to: number) { context, state in MessageComposer.whereReply(context, state: state) }
    }

    /// The answer to the rider's STATUS: the state, the IMU, what waits in the outbox, the position.
    func queueStatusReply(to number: String, sensorRateHz: Double?) async throws {
        let waiting = try database.outbox.countPending()
        try await queueReply(to: number) { context, state in
            MessageComposer.statusReply(context, state: state, sensorRateHz: sensorRateHz, waiting: waiting)
        }
    }

    private func queueReply(to number: String, compose: (MessageContext, WorkflowState) -> String) async throws {
        let profile = try database.profile()
        let fix = location.lastFix
        let context = MessageContext(riderName: profile.name ?? "the rider", riderMessage: profile.message ?? "",
                                     language: settings.language, mapLink: settings.mapLink,
                                     fix: fix, fixAge: fix.map { clock.now() - $0.time })
        let text = compose(context, await emergency.state)
        _ = try database.outbox.enqueue(recipient: number, kind: Self.replyKind, body: text, now: clock.now())
        doorbell.ring()
    }

    /// The rider's profile, or none (the default wording) when the database cannot be read.
    private func profile() -> RiderProfile {
        do { return try database.profile() } catch {
            logger.error("messages: cannot read the rider's profile from \(database.path) (\(error)): the default wording is used")
            return RiderProfile()
        }
    }

    private func compose(_ kind: MessageKind, about emergency: EmergencyWorkflow) -> String {
        let crash = emergency.crash
        let startedAt = crash?.time ?? emergency.countdownStart
        let profile = profile()
        let fix = location.lastFix
        let motion = crash.flatMap { location.motion(before: $0.time) }
        let context = MessageContext(
            riderName: profile.name ?? "the rider", riderMessage: profile.message ?? MessageComposer.suggestedMessage(settings.language),
            medicalNote: profile.medicalNote, language: settings.language, mapLink: settings.mapLink,
            trigger: emergency.trigger ?? .manual, crashTime: startedAt.map(Times.localHourMinute),
            evidence: crash?.evidence, fix: fix, fixAge: fix.map { clock.now() - $0.time },
            speedBefore: motion?.speed ?? crash?.evidence?.speedBefore, headingBefore: motion?.heading)
        return switch kind {
        case .alert: MessageComposer.alert(context)
        case .locationUpdate: MessageComposer.locationUpdate(context)
        case .allClear: MessageComposer.allClear(context)
        case .parkedFall: MessageComposer.parkedFall(context)
        }
    }
}
