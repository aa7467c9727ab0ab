// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// The SIM as the modem reports it: 3GPP TS 27.007 §8.3 (`+CPIN: <code>`) and §9.2.1 (`+CME ERROR`
/// 10–18, the modem's answer to a SIM command when the SIM is missing, locked or failing), and the
/// network's word on it (§7.2 `+CREG`/`+CEREG` stat 3, registration denied). A SIM that is not
/// ready means no alert can leave the bike: each state says what the rider does about it.
package enum SIMState: Equatable, Sendable {
    case ready
    /// `+CPIN: NOT INSERTED` (SIMCom, Quectel), `+CME ERROR: 10`.
    case notInserted
    /// `+CPIN: SIM PIN`, `+CME ERROR: 11`: the SIM waits for its PIN.
    case pin
    /// `+CPIN: SIM PUK`, `+CME ERROR: 12`: three wrong PINs were entered; only the PUK unlocks it.
    case puk
    /// `+CPIN: PH-SIM PIN`, `PH-NET PIN`… (a modem or network lock), `SIM PIN2`/`SIM PUK2`: a lock
    /// RideGuard cannot lift.
    case otherLock(String)
    /// `+CME ERROR: 13` SIM failure, `15` SIM wrong: the modem cannot use the card.
    case failure
    /// `+CME ERROR: 14`: the SIM is still starting; asked again.
    case busy
    /// The network refuses the SIM (registration denied).
    case refusedByNetwork

    /// From `+CPIN: <code>`'s code; nil for a line that is not one.
    package init?(cpin code: String) {
        switch code.uppercased() {
        case "READY": self = .ready
        case "NOT INSERTED", "NOT READY", "SIM NOT INSERTED": self = .notInserted
        case "SIM PIN": self = .pin
        case "SIM PUK": self = .puk
        case "": return nil
        default: self = .otherLock(code)
        }
    }

    /// From the `+CME ERROR` a SIM command was answered with; nil for a code that is not the SIM's.
    package init?(cmeError code: Int) {
        switch code {
        case 10: self = .notInserted
        case 11: self = .pin
        case 12: self = .puk
        case 13, 15: self = .failure
        case 14: self = .busy
        case 17: self = .otherLock("SIM PIN2")
        case 18: self = .otherLock("SIM PUK2")
        default: return nil
        }
    }

    /// As `status`, `doctor`, the page and MQTT name it.
    package var name: String {
        switch self {
        case .ready: "ready"
        case .notInserted: "not inserted"
        case .pin: "wants its PIN"
        case .puk: "locked (PUK)"
        case .otherLock(let code): "locked (\(code))"
        case .failure: "not usable"
        case .busy: "starting"
        case .refusedByNetwork: "refused by the network"
        }
    }

    /// Why no alert can leave, and what to do, as one line: "<what>: no alert can be sent. <advice>"
    /// (`parts(of:)` takes it apart again); nil when ready. `pin` says what RideGuard did with the
    /// configured PIN, for a SIM that waits for one.
    package func problem(pin: PINDecision? = nil) -> String? {
        let (what, advice): (String, String?) = switch self {
        case .ready: ("", nil)
        case .notInserted:
            ("no SIM card in the modem", "Insert one (the modem powered off), with its PIN removed or set as modem.pin")
        case .pin:
            ("the SIM is locked by its PIN", (pin ?? .noneConfigured).advice)
        case .puk:
            ("the SIM is locked (three wrong PINs: it wants its PUK)",
             "Unlock it in a phone with the PUK from its operator's card, then set the right PIN as modem.pin or remove the PIN")
        case .otherLock(let code):
            ("the SIM or the modem is locked (\(code))", "Unlock it in a phone, or ask the operator who locked it")
        case .failure:
            ("the modem cannot use the SIM (SIM failure)",
             "Check it is pushed fully in and the right size; try it in a phone, or ask its operator for a new one")
        case .busy:
            ("the SIM is still starting", "Wait: RideGuard asks again every 10 s")
        case .refusedByNetwork:
            ("the network refuses this SIM (registration denied)",
             "Ask its operator to activate it (a new or expired SIM), or try another operator's")
        }
        return advice.map { what + Self.separator + $0 }
    }

    private static let separator = ": no alert can be sent. "

    /// A problem's two halves: what is wrong, and what to do.
    package static func parts(of problem: String) -> (what: String, advice: String) {
        guard let range = problem.firstRange(of: separator) else { return (problem, "") }
        return (String(problem[..<range.lowerBound]), String(problem[range.upperBound...]))
    }
}

/// What was done with the configured PIN for a SIM that asks for one, and why: a PIN is entered
/// only when it can be right, and never with fewer than two attempts left (a wrong one then would
/// lock the SIM to its PUK).
package enum PINDecision: Equatable, Sendable {
    /// `modem.pin` is not set.
    case noneConfigured
    /// This PIN was refused before (kept in the database until `modem.pin` changes).
    case refusedBefore
    /// Entered now, and refused by the SIM.
    case refusedNow(attemptsLeft: Int?)
    /// The modem says fewer than two attempts are left.
    case tooFewAttempts(Int)
    /// The modem does not say how many attempts are left: not risked.
    case attemptsUnknown

    package var advice: String {
        switch self {
        case .noneConfigured:
            "Set its PIN as modem.pin in /etc/rideguard/config.yaml, or remove the PIN in a phone"
        case .refusedBefore:
            "The SIM refused modem.pin before, and RideGuard will not enter it again (three wrong PINs lock the SIM): set the right PIN as modem.pin"
        case .refusedNow(let left):
            "The SIM refused modem.pin" + (left.map { " (\($0) attempt\($0 == 1 ? "" : "s") left)" } ?? "")
                + ", and RideGuard will not enter it again: set the right PIN as modem.pin"
        case .tooFewAttempts(let left):
            "Only \(left) attempt\(left == 1 ? "" : "s") left before the SIM locks itself: RideGuard will not risk it. Unlock the SIM in a phone with the right PIN"
        case .attemptsUnknown:
            "This modem does not say how many PIN attempts are left, so RideGuard will not risk a wrong one: remove the PIN in a phone"
        }
    }
}

/// How many PIN attempts the SIM has left, as modems say it; nil where the line is not an answer
/// about the SIM's PIN.
package enum PINAttempts {
    /// The commands that ask, in the order tried: 27.007 §8.65 (`+CPINR: SIM PIN,<retries>,<default>`),
    /// Quectel (`+QPINC: "SC",<pin>,<puk>`), Huawei (`^CPIN: <code>,<times>,<puk>,<pin>,<puk2>,<pin2>`),
    /// SIMCom (`+SPIC: <pin1>,<puk1>,<pin2>,<puk2>`).
    package static let queries = ["AT+CPINR=\"SIM PIN\"", "AT+QPINC?", "AT^CPIN?", "AT+SPIC"]

    package static func parse(_ line: String) -> Int? {
        func fields(after prefix: String) -> [String]? {
            guard line.hasPrefix(prefix) else { return nil }
            return line.dropFirst(prefix.count).split(separator: ",", omittingEmptySubsequences: false)
                .map { $0.trimmingSpaces().filter { $0 != "\"" } }
        }
        if let f = fields(after: "+CPINR:"), f.count >= 2, f[0] == "SIM PIN" { return Int(f[1]) }
        if let f = fields(after: "+QPINC:"), f.count >= 2, f[0] == "SC" { return Int(f[1]) }
        if let f = fields(after: "^CPIN:"), f.count >= 4 { return Int(f[3]) }
        if let f = fields(after: "+SPIC:"), f.count >= 1 { return Int(f[0]) }
        return nil
    }
}

/// Remembers that the SIM refused a PIN, across restarts, so that the same PIN is never entered
/// again: the agent keeps it in its database; the one-off commands do without one.
package protocol PINRefusals: Sendable {
    /// Whether this PIN was refused before.
    func wasRefused(_ pin: String) -> Bool
    /// The SIM refused this PIN; throws when it cannot be kept.
    func noteRefused(_ pin: String) throws
}

/// Refused PINs remembered by this process only: for the one-off commands that open no database.
package final class RefusedPINsInMemory: PINRefusals {
    private let refused = Mutex<Set<String>>([])

    package init() {}

    package func wasRefused(_ pin: String) -> Bool { refused.withLock { $0.contains(pin) } }
    package func noteRefused(_ pin: String) { _ = refused.withLock { $0.insert(pin) } }
}
