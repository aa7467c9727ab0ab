// SPDX-License-Identifier: Apache-2.0
import RideGuardCore

/// What an outbox message is: one of the emergency's (`MessageKind`), an answer to a contact's SMS,
/// the setup's test, one sent by hand; or a kind a newer release wrote, kept as it is and sent all
/// the same (going back a version loses no message).
package enum OutboxKind: Hashable, Sendable, CustomStringConvertible {
    case alert, locationUpdate, allClear, parkedFall
    /// An answer to a contact's SMS (STATUS, WHERE, OK…).
    case reply
    /// The setup's or the page's test SMS.
    case test
    /// `rideguard sms send`.
    case manual
    /// Asking a contact to confirm they are one.
    case confirmation
    /// The scheduled (or asked for) self-test report to the rider's own phone.
    case selfTest
    case other(String)

    package init(_ kind: MessageKind) {
        switch kind {
        case .alert: self = .alert
        case .locationUpdate: self = .locationUpdate
        case .allClear: self = .allClear
        case .parkedFall: self = .parkedFall
        }
    }

    /// As stored: the emergency's kinds by their own names (`location_update`…).
    package init(rawValue: String) {
        if let kind = MessageKind(rawValue: rawValue) {
            self.init(kind)
            return
        }
        self = switch rawValue {
        case "reply": .reply
        case "test": .test
        case "manual": .manual
        case "confirmation": .confirmation
        case "self_test": .selfTest
        default: .other(rawValue)
        }
    }

    package var rawValue: String {
        switch self {
        case .alert: MessageKind.alert.rawValue
        case .locationUpdate: MessageKind.locationUpdate.rawValue
        case .allClear: MessageKind.allClear.rawValue
        case .parkedFall: MessageKind.parkedFall.rawValue
        case .reply: "reply"
        case .test: "test"
        case .manual: "manual"
        case .confirmation: "confirmation"
        case .selfTest: "self_test"
        case .other(let raw): raw
        }
    }

    package var description: String { rawValue }
}

extension OutboxKind: Codable {
    package init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

extension JournalKind {
    /// As stored; a kind this release does not know (a newer one wrote it, or a hand) reads as
    /// `system`, its own name kept at the head of the line's text (`JournalRecord`).
    static func stored(_ raw: String) -> (kind: JournalKind, unknown: String?) {
        JournalKind(rawValue: raw).map { ($0, nil) } ?? (.system, raw)
    }
}
