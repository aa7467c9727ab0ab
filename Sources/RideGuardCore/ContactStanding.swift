// SPDX-License-Identifier: Apache-2.0
/// Whether an emergency contact knows they are one: asked by SMS when added, and what came of it.
/// Alerts go to every contact but one who declined: an unconfirmed number is tried, never skipped.
package enum ContactStanding: Equatable, Sendable {
    /// Never asked: added before RideGuard asked its contacts (0.2.0), or by a hand in the database.
    case unasked
    /// Asked at `since` (when the question went out); no answer yet. `held`: why the question has
    /// not gone out yet (the SIM missing or locked, no network), nil once it has.
    case waiting(since: Double, held: String? = nil)
    /// Replied OK (or yes in their language), or the rider marked them confirmed (`byHand`: they
    /// called them).
    case confirmed(at: Double, byHand: Bool)
    /// Replied STOP (or no in their language: `word`, as they wrote it): no message goes to them any more.
    case declined(at: Double, word: String? = nil)
    /// An SMS to them failed for a reason that names the number (not in service, cannot receive SMS).
    case unreachable(at: Double, reason: String)

    /// The state's name as `status`, the page, MQTT and the database write it.
    package var name: String {
        switch self {
        case .unasked: "unasked"
        case .waiting: "waiting"
        case .confirmed: "confirmed"
        case .declined: "declined"
        case .unreachable: "unreachable"
        }
    }

    /// When it began; nil when never asked.
    package var since: Double? {
        switch self {
        case .unasked: nil
        case .waiting(let t, _), .confirmed(let t, _), .declined(let t, _), .unreachable(let t, _): t
        }
    }

    /// `waiting`'s `held` for a question queued that nothing has tried to send yet.
    package static let queued = "queued"

    package var isConfirmed: Bool { if case .confirmed = self { true } else { false } }
    package var isDeclined: Bool { if case .declined = self { true } else { false } }

    /// As stored: the name, when, and the reason or how it was confirmed ("hand", "reply").
    package var stored: (name: String, since: Double?, detail: String?) {
        switch self {
        case .confirmed(_, let byHand): (name, since, byHand ? "hand" : "reply")
        case .unreachable(_, let reason): (name, since, reason)
        case .waiting(_, let held): (name, since, held)
        case .declined(_, let word): (name, since, word)
        default: (name, since, nil)
        }
    }

    /// From the stored columns; nil for a name this release does not know or a row missing its time.
    package init?(stored name: String, since: Double?, detail: String?) {
        switch (name, since) {
        case ("unasked", _): self = .unasked
        case ("waiting", let t?): self = .waiting(since: t, held: detail)
        case ("confirmed", let t?): self = .confirmed(at: t, byHand: detail == "hand")
        case ("declined", let t?): self = .declined(at: t, word: detail)
        case ("unreachable", let t?): self = .unreachable(at: t, reason: detail ?? "the SMS to this number failed")
        default: return nil
        }
    }

    /// One line for a person, after the contact's name: "confirmed by reply 2 days ago" (in English
    /// for the command line, `status` and MQTT; in the rider's language on the page).
    package func summary(now: Double, _ t: ScreenText = ScreenText(.en)) -> String {
        switch self {
        case .unasked: t(.standingUnasked)
        case .waiting(_, Self.queued?): t(.standingQueued)
        case .waiting(_, let held?): t(.standingNotSent, held)
        case .waiting(let at, nil): t(.standingWaiting, Ago.text(now - at))
        case .confirmed(let at, let byHand): t(byHand ? .standingConfirmedByHand : .standingConfirmedByReply, Ago.text(now - at))
        case .declined(let at, let word): t(.standingDeclined, Ago.text(now - at), word ?? "STOP")
        case .unreachable(_, let reason): t(.standingUnreachable, reason)
        }
    }

    /// A word or two, beside a contact in a list: "confirmed", "asked 2 h ago", "not asked".
    package func brief(now: Double) -> String {
        switch self {
        case .unasked: "not asked"
        case .waiting(_, _?): "not sent yet"
        case .waiting(let t, nil): "asked \(Ago.text(now - t)) ago"
        case .confirmed: "confirmed"
        case .declined: "declined"
        case .unreachable: "unreachable"
        }
    }

    /// What weakens the protection, or nil: degraded while no contact has confirmed, or while one
    /// has declined or cannot be reached. `contacts`: names (as shown) and standings, in order.
    package static func problem(_ contacts: [(name: String, standing: ContactStanding)]) -> String? {
        guard !contacts.isEmpty else { return nil }
        var problems: [String] = []
        if !contacts.contains(where: { $0.standing.isConfirmed }) {
            problems.append("no contact has confirmed their number yet (a reply OK confirms; rideguard contacts confirm NAME once you have called them)")
        }
        for contact in contacts {
            switch contact.standing {
            case .declined: problems.append("\(contact.name) declined to be a contact: remove them, or ask again")
            case .unreachable(_, let reason): problems.append("\(contact.name) cannot be reached: \(reason)")
            default: break
            }
        }
        return problems.isEmpty ? nil : problems.joined(separator: "; ")
    }
}

/// A duration as people say it: "40 s", "5 min", "3 h", "2 days".
package enum Ago {
    package static func text(_ seconds: Double) -> String {
        let s = max(0, seconds.isFinite ? seconds : 0)
        if s < 60 { return "\(Int(s)) s" }
        if s < 3600 { return "\(Int(s / 60)) min" }
        if s < 2 * 86_400 { return "\(Int(s / 3600)) h" }
        return "\(Int(s / 86_400)) days"
    }
}
