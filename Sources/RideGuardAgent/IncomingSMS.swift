import Logging
import RideGuardCore
import Storage
import Synchronization

/// SMS received by the modem: parts put back together, then the command, if any, carried out. A
/// contact's WHERE gets the latest position back; a contact's OK during an emergency is journaled
/// as their acknowledgement. Anything else, and anything from a number that is not a contact, is
/// journaled (number masked, text never) and not answered. At most one answer per sender a minute.
/// No SMS disarms, cancels or changes anything: a sender's number can be spoofed.
final class IncomingSMS: Sendable {
    static let answerInterval = 60.0

    private let assembler = Mutex(SMSAssembler())
    private let lastAnswer = Mutex<[String: Double]>([:])
    private let database: RideGuardDatabase
    private let emergency: EmergencyService
    private let messages: MessageQueue
    private let clock: any ServiceClock
    private let logger: Logger

    init(database: RideGuardDatabase, emergency: EmergencyService, messages: MessageQueue, clock: any ServiceClock, logger: Logger) {
        self.database = database
        self.emergency = emergency
        self.messages = messages
        self.clock = clock
        self.logger = logger
    }

    /// One part, as the modem read it; the modem deletes it once this returns, and hands the next
    /// only then, so messages are handled one at a time, in order.
    func received(_ part: SMSPDU.Decoded) async {
        let now = clock.now()
        guard let text = assembler.withLock({ $0.add(sender: part.number, text: part.text, concatenation: part.concatenation, at: now) }) else { return }
        await handle(text, from: part.number, at: now)
    }

    private func handle(_ text: String, from number: String, at now: Double) async {
        let contact = ((try? database.contacts()) ?? []).first { $0.number == number }
        let who = contact.map { "\($0.name) (\(PhoneNumber.mask(number)))" } ?? "\(PhoneNumber.mask(number)) (not a contact)"
        guard contact != nil, let command = SMSCommand(text) else {
            journal("messages", "SMS from \(who), \(text.count) characters\(contact == nil ? "" : ", not a command"): not answered")
            return
        }
        switch command {
        case .whereAreYou:
            let due = lastAnswer.withLock { last -> Bool in
                guard now - (last[number] ?? -.infinity) >= Self.answerInterval else { return false }
                last[number] = now
                return true
            }
            guard due else {
                journal("messages", "WHERE from \(who): answered less than a minute ago; not again")
                return
            }
            do {
                try await messages.queueWhereReply(to: number)
                journal("messages", "WHERE from \(who): position sent back")
            } catch {
                journal("messages", "WHERE from \(who): could not queue the answer: \(error)")
            }
        case .acknowledge:
            let state = await emergency.state
            if [.emergencySending, .emergencySent, .emergencySendingFailed].contains(state) {
                journal("alerts", "\(who) acknowledged the alert by SMS")
            } else {
                journal("messages", "OK from \(who) with no emergency under way (\(state.rawValue)): nothing to acknowledge")
            }
        case .status:
            journal("messages", "STATUS from \(who): only the rider's own phone may ask; not answered")
        }
    }

    private func journal(_ kind: String, _ text: String) {
        try? database.journal(JournalEntry(kind, text), at: clock.now())
        logger.info("\(kind): \(text)")
    }
}
