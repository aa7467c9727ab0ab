// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import Logging
import RideGuardCore
import Storage
import Synchronization

/// SMS received by the modem: parts put back together, then the command, if any, carried out. A
/// contact's WHERE gets the latest position back; a contact's OK (or yes in their language)
/// confirms they are a contact, and during an emergency is their acknowledgement (it stops the
/// calls); a contact's STOP declines (no message goes to them any more); the rider's own phone (`profile set --phone`) may ask
/// STATUS and PAIR (a one-time link to the web page). Anything else, and anything from another number, is journaled (number masked, text
/// never) and not answered. At most one answer per sender a minute. No SMS disarms, cancels or
/// changes anything: a sender's number can be spoofed.
final class IncomingSMS: Sendable {
    static let answerInterval = 60.0

    private let assembler = Mutex(SMSAssembler())
    private let lastAnswer = Mutex<[String: Double]>([:])
    private let database: RideGuardDatabase
    private let emergency: EmergencyService
    private let messages: MessageQueue
    private let sensor: SensorHealth
    private let web: AgentConfiguration.Web
    private let clock: any ServiceClock
    private let logger: Logger

    init(database: RideGuardDatabase, emergency: EmergencyService, messages: MessageQueue, sensor: SensorHealth,
         web: AgentConfiguration.Web = AgentConfiguration.Web(), clock: any ServiceClock, logger: Logger) {
        self.web = web
        self.database = database
        self.emergency = emergency
        self.messages = messages
        self.sensor = sensor
        self.clock = clock
        self.logger = logger
        // Parts of long messages received before a restart, waiting for the others.
        do {
            if let saved = try database.waitingSMSParts() {
                let restored = try JSONDecoder().decode(SMSAssembler.self, from: saved)
                assembler.withLock { $0 = restored }
            }
        } catch {
            logger.error("messages: the parts of long SMS kept in \(database.path) cannot be read (\(error)): they are lost")
        }
    }

    /// One part, as the modem read it; the modem hands the next only once this returns, so messages
    /// are handled one at a time, in order. Returns whether the modem may delete it: yes once the
    /// parts still waiting for the others are in the database (a restart finds them there), or the
    /// message is complete; no when the database refuses them (the part stays on the SIM and is
    /// read again).
    func received(_ part: SMSPDU.Decoded) async -> Bool {
        let now = clock.now()
        let (text, waiting) = assembler.withLock { assembler in
            (assembler.add(sender: part.number, text: part.text, concatenation: part.concatenation, at: now), assembler)
        }
        var kept = true
        if (part.concatenation?.total ?? 1) > 1 {
            do { try database.saveWaitingSMSParts(JSONEncoder().encode(waiting)) } catch {
                logger.error("messages: cannot keep a part of a long SMS in \(database.path) (\(error)): it stays on the SIM")
                kept = false
            }
        }
        guard let text else { return kept }
        await handle(text, from: part.number, at: now)
        return true
    }

    private func handle(_ text: String, from sender: String, at now: Double) async {
        // Who wrote decides what is done: a database that fails is never "nobody we know". The
        // contacts read last answer (as for the calls); never read, the failure is journaled.
        let contacts: [Contact]
        do { contacts = try database.contactsAsKnown() } catch {
            contacts = []
            journal(.messages, "SMS from \(PhoneNumber.mask(sender)): the contacts cannot be read (\(error)), so it cannot be told whether a contact wrote")
        }
        let contact = contacts.first { (try? PhoneNumber($0.number))?.isSender(sender) == true }
        let riderPhone: PhoneNumber?
        do { riderPhone = try database.profile().phone.flatMap { try? PhoneNumber($0) } } catch {
            riderPhone = nil
            journal(.messages, "SMS from \(PhoneNumber.mask(sender)): the rider's profile cannot be read (\(error))")
        }
        let fromRider = riderPhone?.isSender(sender) == true
        // Answers go to the number as stored (E.164), whatever form the network gave the sender in.
        let number = contact?.number ?? (fromRider ? riderPhone!.e164 : sender)
        let who = contact?.forLogs
            ?? (fromRider ? "the rider's phone (\(PhoneNumber.mask(number)))" : "\(PhoneNumber.mask(number)) (not a contact)")
        let command = SMSCommand(text)
        switch command {
        case .whereAreYou? where contact != nil && contact?.standing.isDeclined == true:
            journal(.messages, "WHERE from \(who): declined to be a contact, so not told where the rider is; not answered")
        case .whereAreYou? where contact != nil:
            await answer(.whereAreYou, from: who, to: number, at: now) {
                try messages.queueWhereReply(to: number, state: await emergency.state, protection: await emergency.protection.level)
            }
        case .acknowledge? where contact != nil:
            // The workflow journals it, and stops the calls when an emergency is under way.
            // Handled before the modem moves on: calls waiting for it are stopped before they dial.
            let confirmedNow = setStanding(contact!, .confirmed(at: now, byHand: false), "confirmed by reply", at: now)
            let state = await emergency.state
            if !confirmedNow || WorkflowState.alertsOut.contains(state) {
                await emergency.handle(.event(.acknowledged(Acknowledgement(who: who, channel: .sms, time: now))))
            }
        case .stop? where contact != nil:
            let word = SMSCommand.firstWord(text)
            setStanding(contact!, .declined(at: now, word: word),
                        "declined to be an emergency contact (replied \(word)): no message goes to them any more", at: now)
        case .status? where fromRider:
            let s = sensor.snapshot
            let rate = now - s.lastSampleWall <= 1 ? s.rateHz : nil      // NaN (never sampled) is not within
            await answer(.status, from: who, to: number, at: now) {
                try messages.queueStatusReply(to: number, state: await emergency.state, protection: await emergency.protection.level, sensorRateHz: rate)
            }
        case .status? where contact != nil:
            journal(.messages, "STATUS from \(who): only the rider's own phone may ask (rideguard profile set --phone); not answered")
        case .pair? where fromRider:
            let web = self.web
            await answer(.pair, from: who, to: number, at: now) { try messages.queuePairingReply(to: number, web: web) }
        case .pair?:
            journal(.messages, "PAIR from \(who): only the rider's own phone may pair (rideguard profile set --phone); not answered")
        case nil where contact.map({ Self.awaitsAnswer($0.standing) }) == true:
            hint(contact!, text: text, at: now)
        default:
            let known = contact != nil || fromRider
            let what = !known ? "" : command == nil ? ", not a command" : ", a command it may not give"
            journal(.messages, "SMS from \(who), \(text.count) characters\(what): not answered")
        }
    }

    /// Whether a contact's reply is taken as an answer to being asked: never asked, or asked and
    /// not answered yet.
    private static func awaitsAnswer(_ standing: ContactStanding) -> Bool {
        switch standing {
        case .unasked, .waiting: true
        case .confirmed, .declined, .unreachable: false
        }
    }

    /// A contact asked to confirm wrote something that neither confirms nor declines ("Thanks
    /// Alex", "d'accord"): answered once with the words that do, in the rider's language.
    private func hint(_ contact: Contact, text: String, at now: Double) {
        do {
            guard try database.noteReplyHint(to: contact.number) else {
                journal(.messages, "SMS from \(contact.forLogs), \(text.count) characters: neither confirms nor declines; already told the words that do, not again")
                return
            }
            try messages.queueReplyHint(to: contact.number)
            journal(.messages, "SMS from \(contact.forLogs), \(text.count) characters: neither confirms nor declines; told the words that do (once)")
        } catch {
            journal(.messages, "SMS from \(contact.forLogs): neither confirms nor declines, and the answer could not be queued: \(error)")
        }
    }

    /// Queues the answer, unless this sender had one less than a minute ago.
    private func answer(_ command: SMSCommand, from who: String, to number: String, at now: Double,
                        queue: () async throws -> Void) async {
        let due = lastAnswer.withLock { last -> Bool in
            guard now - (last[number] ?? -.infinity) >= Self.answerInterval else { return false }
            last[number] = now
            return true
        }
        let name = switch command {
        case .status: "STATUS"
        case .pair: "PAIR"
        default: "WHERE"
        }
        guard due else {
            journal(.messages, "\(name) from \(who): answered less than a minute ago; not again")
            return
        }
        do {
            try await queue()
            let what = switch command {
            case .status: "status"
            case .pair: "a one-time link to the web page"
            default: "position"
            }
            journal(.messages, "\(name) from \(who): \(what) sent back")
        } catch {
            journal(.messages, "\(name) from \(who): could not queue the answer: \(error)")
        }
    }

    /// A contact's answer to being asked; false when it was so already (a second OK, a second STOP).
    @discardableResult
    private func setStanding(_ contact: Contact, _ standing: ContactStanding, _ what: String, at now: Double) -> Bool {
        do {
            let changed = try database.setContactStanding(contact.number, standing, journal: "contact \(contact.forLogs) \(what)", now: now)
            if changed { logger.info("contacts: \(contact.forLogs) \(what)") }
            return changed
        } catch {
            logger.error("contacts: \(contact.forLogs) \(what), but the database refused to keep it: \(error)")
            return false
        }
    }

    private func journal(_ kind: JournalKind, _ text: String) {
        database.journal(JournalEntry(kind, text), at: clock.now())
        logger.info("\(kind): \(text)")
    }
}
