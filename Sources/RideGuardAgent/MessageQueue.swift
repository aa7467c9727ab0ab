// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import SystemCalls
import Logging
import RideGuardCore
import Storage
import Synchronization
import AgentControl
import SystemTime

/// Writes the messages the workflow asks for into the outbox, one per recipient, worded from the
/// emergency the request carries, the rider's profile and the last fix. Never waits on the disk: a
/// message it refuses is kept in memory and sent (the outbox writes it later); contacts it cannot
/// read are the ones last read; a profile it cannot read leaves the default wording. Only contacts
/// that were never readable stop the queueing: never read as "no contacts", that is said to the
/// workflow, which retries.
final class MessageQueue: Sendable {
    private let database: RideGuardDatabase
    private let whereabouts: Whereabouts
    private let settings: AgentConfiguration.Messages
    private let doorbell: Doorbell
    private let clock: any ServiceClock
    private let logger: Logger

    init(database: RideGuardDatabase, whereabouts: Whereabouts, settings: AgentConfiguration.Messages,
         doorbell: Doorbell, clock: any ServiceClock, logger: Logger) {
        self.database = database
        self.whereabouts = whereabouts
        self.settings = settings
        self.doorbell = doorbell
        self.clock = clock
        self.logger = logger
    }

    /// The workflow's `queueMessages` action, run inside its batch.
    func queue(_ request: MessageRequest) -> QueueOutcome {
        var queued = request.skipping
        var added: [String] = []
        do {
            try queueNow(request.kind, to: request.recipients, about: request.emergency, skipping: &queued, added: &added)
            return QueueOutcome(queued: added)
        } catch {
            logger.error("messages: could not queue the \(request.kind.rawValue): \(error)")
            return QueueOutcome(queued: added, problem: "\(error)")
        }
    }

    /// Queues one message per recipient not in `queued` (those a failed attempt already queued),
    /// adding each to it. What the messages say of the emergency (crash or SOS, when, the crash's
    /// evidence) comes from its persisted state, never from an earlier one.
    private func queueNow(_ kind: MessageKind, to recipients: Recipients, about emergency: EmergencyFacts,
                          skipping queued: inout Set<String>, added: inout [String]) throws {
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
            database.outbox.queue(recipient: number, kind: OutboxKind(kind), body: text, now: clock.now())
            queued.insert(number)
            added.append(number)
            doorbell.ring()
        }
        let who = numbers.map(PhoneNumber.mask).joined(separator: ", ")
        let whom = recipients == .rider ? "the rider's phone" : "\(numbers.count) contact\(numbers.count == 1 ? "" : "s")"
        database.journal(JournalEntry(.messages, "\(kind.rawValue) queued for \(whom): \(who)"), at: clock.now())
    }

    /// The outbox kind of an answer to an SMS command.

    /// The answer to a contact's WHERE (what the agent is doing, the latest position), through the
    /// outbox like every message.
    func queueWhereReply(to number: String, state: WorkflowState, protection: Protection.Level) throws {
        try queueReply(to: number) { context in MessageComposer.whereReply(context, state: state, protection: protection) }
    }

    /// The answer to the rider's STATUS: the state, the IMU, what waits in the outbox, the position.
    func queueStatusReply(to number: String, state: WorkflowState, protection: Protection.Level, sensorRateHz: Double?) throws {
        let waiting = try database.outbox.countPending()
        try queueReply(to: number) { context in
            MessageComposer.statusReply(context, state: state, protection: protection, sensorRateHz: sensorRateHz, waiting: waiting)
        }
    }

    /// A one-time pairing link for the web page, to the rider's own phone; throws when the Pi has
    /// no network address for the link (`WebLink`).
    func queuePairingReply(to number: String, web: AgentConfiguration.Web) throws {
        guard let base = WebLink.base(web) else { throw RecordError(reason: "the Pi has no network address for the link (no Wi-Fi; or set web.address)") }
        let code = try database.newPairingCode(now: clock.now())
        _ = try database.outbox.enqueue(recipient: number, kind: .reply,
                                        body: MessageComposer.pairing(link: "\(base)/pair?code=\(code)", language: profile().language ?? settings.language),
                                        now: clock.now())
        doorbell.ring()
    }

    /// The words that confirm and decline, to a contact whose reply did neither.
    func queueReplyHint(to number: String) throws {
        let profile = try database.profile()
        _ = try database.outbox.enqueue(recipient: number, kind: .reply,
                                        body: MessageComposer.replyHint(riderName: profile.name, language: profile.language ?? settings.language),
                                        now: clock.now())
        doorbell.ring()
    }

    private func queueReply(to number: String, compose: (MessageContext) -> String) throws {
        let profile = try database.profile()
        let fix = whereabouts.lastFix
        let context = MessageContext(riderName: profile.name ?? "the rider", riderMessage: profile.message ?? "",
                                     language: profile.language ?? settings.language, mapLink: settings.mapLink,
                                     fix: fix, fixAge: fix.map { clock.now() - $0.time })
        let text = compose(context)
        _ = try database.outbox.enqueue(recipient: number, kind: .reply, body: text, now: clock.now())
        doorbell.ring()
    }

    /// The rider's profile, or none (the default wording) when the database cannot be read.
    private func profile() -> RiderProfile {
        do { return try database.profile() } catch {
            logger.error("messages: cannot read the rider's profile from \(database.path) (\(error)): the default wording is used")
            return RiderProfile()
        }
    }

    private func compose(_ kind: MessageKind, about emergency: EmergencyFacts) -> String {
        let crash = emergency.crash
        let profile = profile()
        let fix = whereabouts.lastFix
        let motion = crash.flatMap { whereabouts.motion(before: $0.time) }
        let context = MessageContext(
            riderName: profile.name ?? "the rider", riderMessage: profile.message ?? MessageComposer.suggestedMessage(profile.language ?? settings.language),
            medicalNote: profile.medicalNote, language: profile.language ?? settings.language, mapLink: settings.mapLink,
            trigger: emergency.trigger, crashTime: emergency.startedAt.map(Times.localHourMinute),
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
