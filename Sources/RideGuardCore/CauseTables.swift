// SPDX-License-Identifier: Apache-2.0
/// The tables docs/installer.md gives of what the SIM and the network can refuse, written from the
/// code's own words (`SIMState`, `SMSCause`): a test holds the document equal to them.
package enum CauseTables {
    /// What the modem says of the SIM, what it means for the alerts, and what to do.
    package static var simStates: String {
        let rows: [(said: String, state: SIMState, pin: PINDecision?)] = [
            ("`+CPIN: NOT INSERTED`, `+CME ERROR: 10`", .notInserted, nil),
            ("`+CPIN: SIM PIN`, no `modem.pin`", .pin, .noneConfigured),
            ("`+CPIN: SIM PIN`, the PIN refused now", .pin, .refusedNow(attemptsLeft: 2)),
            ("`+CPIN: SIM PIN`, the PIN refused before", .pin, .refusedBefore),
            ("`+CPIN: SIM PIN`, fewer than two attempts left", .pin, .tooFewAttempts(1)),
            ("`+CPIN: SIM PIN`, attempts not told", .pin, .attemptsUnknown),
            ("`+CPIN: SIM PUK`, `+CME ERROR: 12`", .puk, nil),
            ("`+CPIN: PH-SIM PIN`, `PH-NET PIN`, `SIM PIN2`…", .otherLock("PH-SIM PIN"), nil),
            ("`+CME ERROR: 13`, `15`", .failure, nil),
            ("`+CREG: 0,3` / `+CEREG: 0,3`", .refusedByNetwork, nil),
        ]
        var text = "| the modem says | RideGuard says (NOT protecting) | what to do |\n|---|---|---|\n"
        for row in rows {
            let parts = SIMState.parts(of: row.state.problem(pin: row.pin) ?? "")
            text += "| \(row.said) | \(parts.what) | \(parts.advice) |\n"
        }
        return text
    }

    /// Each `+CMS ERROR` cause: whose trouble, what becomes of the message, what to do.
    package static var smsCauses: String {
        var text = "| `+CMS ERROR` | whose | the message | what to do |\n|---|---|---|---|\n"
        for cause in SMSCause.allCases {
            let codes = cause == .sim ? "310–318" : cause == .other ? "500 and others" : cause.codes.map(String.init).joined(separator: ", ")
            let whose = switch cause.party {
            case .contact: "the contact's"
            case .sim: "the SIM's"
            case .network: "the network's, for now"
            case .unknown: "unknown (the modem's `+CEER` words decide when they name a cause)"
            }
            let fate = SendFailure.classify(.cmsError(cause.codes.first ?? 500)).permanent
                ? "given up; the contact is `unreachable`" : cause.party == .sim ? "held until the SIM is put right, retried" : "retried"
            text += "| \(codes) | \(whose) | \(fate) | \(cause.advice) |\n"
        }
        return text
    }
}
