// SPDX-License-Identifier: Apache-2.0
import RideGuardCore
import Storage

/// The messages that say how things stand are written again as they leave, not as they were when
/// queued: a contact's question signed with the rider's name as the profile has it then (a name
/// given after the contact was added), the self-test with the state of that moment (a test held
/// back by a locked SIM does not report the lock its arrival disproves). The others go as queued.
struct SendTimeWords: Sendable {
    let database: RideGuardDatabase
    let selfTest: SelfTest
    /// Until the rider chose one, for a message whose own language cannot be told.
    let language: MessageLanguage

    func compose(_ message: OutboxMessage) async -> String? {
        switch message.kind {
        case .confirmation:
            guard let profile = try? database.profile() else { return nil }
            // In the rider's language now, else in the one it was asked in (`setup` asks in the one chosen there).
            let asked = MessageComposer.confirmationLanguage(of: message.body) ?? language
            return MessageComposer.confirmationRequest(riderName: profile.name, language: profile.language ?? asked)
        case .selfTest:
            return await selfTest.body(now: message.updatedAt)
        default:
            return nil
        }
    }
}
