// SPDX-License-Identifier: Apache-2.0
/// Why an SMS did not go out, as somebody can act on it: the contact's number, the rider's SIM, or
/// the network. From the final result of AT+CMGS (3GPP TS 27.005 §3.2.5 +CMS ERROR: 0–127 are the
/// network's RP-cause values of TS 24.011 Annex E, 128–255 the SMS centre's TP-FCS values of
/// TS 23.040 §9.2.3.22, 300–500 the modem's own) and, where the code says little, the modem's
/// extended report (AT+CEER, in the maker's words).
package enum SMSCause: String, Codable, CaseIterable, Sendable {
    /// The number is not in service (RP-cause 1 unassigned number; TP-FCS C3 invalid SME address).
    case numberNotInService = "number_not_in_service"
    /// The recipient's line cannot receive SMS (TP-FCS C4 destination SME barred).
    case recipientBarred = "recipient_barred"
    /// The SIM may not send SMS: not in its plan, or no credit on a prepaid one (RP-cause 50
    /// requested facility not subscribed; TP-FCS C1 no SC subscription).
    case notSubscribed = "not_subscribed"
    /// The operator refused the message (RP-cause 21 short message transfer rejected): on a
    /// prepaid SIM, most often an empty balance.
    case refused
    /// The operator has barred the SIM from sending (RP-cause 8 operator determined barring: an
    /// unpaid bill, an expired plan; 10 call barred: a barring set on the SIM).
    case simBarred = "sim_barred"
    /// The network does not know the SIM for SMS (RP-cause 28 unidentified subscriber, 29 facility
    /// rejected, 30 unknown subscriber, 69 requested facility not implemented).
    case simNotProvisioned = "sim_not_provisioned"
    /// The SIM holds no SMS centre number (330 SMSC address unknown).
    case serviceCentre = "service_centre"
    /// The SIM is missing, locked or busy (310–318).
    case sim
    /// The network is busy or failing for now (RP-cause 27, 38, 41, 42, 47; TP-FCS C0 SC busy,
    /// C2 SC system failure; 332 network timeout): retried.
    case congestion
    /// No network service (331): retried.
    case noNetwork = "no_network"
    /// Anything else (500 unknown error, a protocol error): retried unless the code says otherwise.
    case other

    /// Whose trouble it is: the contact's number, the rider's SIM, or the network's for now.
    package enum Party: String, Sendable { case contact, sim, network, unknown }

    package var party: Party {
        switch self {
        case .numberNotInService, .recipientBarred: .contact
        case .notSubscribed, .refused, .simBarred, .simNotProvisioned, .serviceCentre, .sim: .sim
        case .congestion, .noNetwork: .network
        case .other: .unknown
        }
    }

    /// What it means and what to do, in the rider's words (after "the SMS could not be sent: ").
    package var advice: String {
        switch self {
        case .numberNotInService: "the network says the number is not in service: check it with the contact"
        case .recipientBarred: "the number cannot receive SMS (a landline, or barred): ask the contact for a mobile number"
        case .notSubscribed: "the SIM may not send SMS (no credit, or SMS not in its plan): top it up or ask its operator"
        case .refused: "the operator refused it (on a prepaid SIM, most often no credit left): check the balance"
        case .simBarred: "the operator has barred the SIM from sending (an unpaid bill or an expired plan): ask the operator"
        case .simNotProvisioned: "the network does not know this SIM for SMS: activate it, or ask its operator"
        case .serviceCentre: "the SIM holds no SMS centre number: set the operator's in a phone, or ask the operator"
        case .sim: "the SIM is missing, locked or busy: check it in the modem"
        case .congestion: "the network is busy: retrying"
        case .noNetwork: "no network here: retrying"
        case .other: "the modem gave no reason a person can act on: retrying"
        }
    }

    /// The +CMS ERROR codes that name this cause (`.other`: every code no other names).
    package var codes: [Int] {
        switch self {
        case .numberNotInService: [1, 195]
        case .recipientBarred: [196]
        case .notSubscribed: [50, 193]
        case .refused: [21]
        case .simBarred: [8, 10]
        case .simNotProvisioned: [28, 29, 30, 69]
        case .serviceCentre: [330]
        case .sim: Array(310...318)
        case .congestion: [27, 38, 41, 42, 47, 192, 194, 332]
        case .noNetwork: [331]
        case .other: []
        }
    }

    /// The cause a +CMS ERROR code names.
    package init(cmsError code: Int) {
        self = Self.allCases.first { $0.codes.contains(code) } ?? .other
    }

    /// The cause a failure's reason as the outbox keeps it names ("+CMS ERROR: 50 (…)…"); nil for
    /// one without a +CMS ERROR (a timeout, a lost port).
    package init?(reason: String) {
        guard reason.hasPrefix("+CMS ERROR: "),
              let code = Int(reason.dropFirst("+CMS ERROR: ".count).prefix(while: { $0.isNumber })) else { return nil }
        self.init(cmsError: code)
        if self == .other, let range = reason.firstRange(of: "the modem's report: "), let named = SMSCause(report: String(reason[range.upperBound...])) {
            self = named
        }
    }

    /// The cause a modem's extended report (AT+CEER) names in words, where its makers write the
    /// network's cause out ("Requested facility not subscribed", "Operator determined barring");
    /// nil for reports that are numbers only or say nothing of one.
    package init?(report: String) {
        let text = report.lowercased()
        let phrases: [(String, SMSCause)] = [
            ("unassigned", .numberNotInService), ("unallocated", .numberNotInService), ("invalid sme address", .numberNotInService),
            ("destination sme barred", .recipientBarred),
            ("not subscribed", .notSubscribed), ("no sc subscription", .notSubscribed),
            ("operator determined barring", .simBarred), ("call barred", .simBarred),
            ("transfer rejected", .refused),
            ("unknown subscriber", .simNotProvisioned), ("unidentified subscriber", .simNotProvisioned), ("facility rejected", .simNotProvisioned),
            ("congestion", .congestion), ("temporary failure", .congestion), ("resources unavailable", .congestion),
            ("network out of order", .congestion),
        ]
        guard let found = phrases.first(where: { text.contains($0.0) }) else { return nil }
        self = found.1
    }
}

/// What a failed AT+CMGS means for the message: give up on it, or try again later; why, and whose
/// trouble it is.
package struct SendFailure: Equatable, Sendable {
    package var permanent: Bool
    package var reason: String
    package var cause: SMSCause

    package init(permanent: Bool, reason: String, cause: SMSCause) {
        self.permanent = permanent
        self.reason = reason
        self.cause = cause
    }

    /// A wrong number or a message the network cannot take do not get better by retrying: given
    /// up. What the SIM refuses (no credit, barred, not provisioned, missing or locked) holds the
    /// message until the SIM is put right, as congestion or no network holds it until they pass:
    /// retried, never given up. `report`: the modem's AT+CEER answer, told beside the code, and
    /// used where the code names no cause.
    package static func classify(_ final: ATFinal, report: String? = nil) -> SendFailure {
        let told = report.map { "; the modem's report: \($0)" } ?? ""
        switch final {
        case .cmsError(let code):
            var cause = SMSCause(cmsError: code)
            if cause == .other, let named = report.flatMap(SMSCause.init(report:)) { cause = named }
            let permanent = cause.party == .contact || [96, 97, 304, 305].contains(code)
            return SendFailure(permanent: permanent, reason: "+CMS ERROR: \(code) (\(cmsMeaning(code)))\(told)", cause: cause)
        case .cmeError(let code): return SendFailure(permanent: false, reason: "+CME ERROR: \(code)\(told)", cause: .other)
        case .error: return SendFailure(permanent: false, reason: "ERROR\(told)", cause: report.flatMap(SMSCause.init(report:)) ?? .other)
        case .other(let word): return SendFailure(permanent: false, reason: word, cause: .other)
        case .ok: return SendFailure(permanent: false, reason: "OK without a message reference", cause: .other)
        }
    }

    /// The name 27.005 §3.2.5 gives a code (24.011 Annex E and 23.040 for those it takes from them).
    static func cmsMeaning(_ code: Int) -> String {
        switch code {
        case 1: "unassigned number"
        case 8: "operator determined barring"
        case 10: "call barred"
        case 21: "short message transfer rejected"
        case 27: "destination out of service"
        case 28: "unidentified subscriber"
        case 29: "facility rejected"
        case 30: "unknown subscriber"
        case 38: "network out of order"
        case 41: "temporary failure"
        case 42: "congestion"
        case 47: "resources unavailable"
        case 50: "requested facility not subscribed"
        case 69: "requested facility not implemented"
        case 96: "invalid mandatory information"
        case 97: "message type non-existent or not implemented"
        case 192: "SC busy"
        case 193: "no SC subscription"
        case 194: "SC system failure"
        case 195: "invalid SME address"
        case 196: "destination SME barred"
        case 300: "ME failure"
        case 302: "operation not allowed"
        case 304: "invalid PDU mode parameter"
        case 305: "invalid text mode parameter"
        case 310: "SIM not inserted"
        case 311: "SIM PIN required"
        case 313: "SIM failure"
        case 314: "SIM busy"
        case 315: "SIM wrong"
        case 316: "SIM PUK required"
        case 330: "SMSC address unknown"
        case 331: "no network service"
        case 332: "network timeout"
        case 500: "unknown error"
        default: "see 3GPP TS 27.005"
        }
    }
}
