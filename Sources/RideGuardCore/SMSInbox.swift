// SPDX-License-Identifier: Apache-2.0
/// What a received SMS asks of RideGuard: its first word, in any of the five languages, case and
/// accents ignored, punctuation around it allowed ("Où ?", "dónde", "WHERE?", "Ok merci !", "oui
/// bien sûr", "nein danke"). "No" declines only alone: "no problem" is no answer. Anything else is
/// no command. No command disarms, cancels or changes a setting: a sender's number can be spoofed.
package enum SMSCommand: Equatable, Sendable {
    /// The latest position link, its age, and the state.
    case whereAreYou
    /// Yes: a contact acknowledges the alert, or confirms they are a contact.
    case acknowledge
    /// A contact declines to be one: no message goes to them any more.
    case stop
    /// The agent's state, sensor, fix and outbox (from the rider's own number only).
    case status
    /// A one-time link to the web page (from the rider's own number only).
    case pair

    /// The words, after case and accents are folded: every language's (`MessageLanguage.replyWords`),
    /// and PAIR.
    static let words: [String: SMSCommand] = {
        var words: [String: SMSCommand] = ["PAIR": .pair]
        for language in MessageLanguage.allCases {
            let said = language.replyWords
            for (list, command) in [(said.whereAreYou, SMSCommand.whereAreYou), (said.yes, .acknowledge), (said.stop, .stop), (said.status, .status)] {
                for word in list { words[word] = command }
            }
        }
        return words
    }()

    /// Declines only as the whole reply: English, Spanish and Italian start many other answers with it.
    static let aloneOnly: [String: SMSCommand] = ["NO": .stop]

    package init?(_ text: String) {
        let words = Self.folded(text).split { $0.isWhitespace || $0.isPunctuation }
        guard let first = words.first.map(String.init), first.allSatisfy(\.isLetter) else { return nil }
        if let command = Self.words[first] {
            self = command
        } else if words.count == 1, let command = Self.aloneOnly[first] {
            self = command
        } else {
            return nil
        }
    }

    /// The reply's first word as its writer wrote it ("Arrêt", "Ok"), to show beside what it decided.
    package static func firstWord(_ text: String) -> String {
        String(text.drop { !$0.isLetter }.prefix { $0.isLetter }.prefix(20))
    }

    /// Upper case without accents, punctuation around it dropped: "Où ?" → "OU", "¿dónde?" → "DONDE".
    static func folded(_ text: String) -> String {
        var out = ""
        for character in text.trimmingWhitespaceAndPunctuation.uppercased() {
            switch character {
            case "À", "Á", "Â", "Ä", "Ã", "Å": out += "A"
            case "Ç": out += "C"
            case "È", "É", "Ê", "Ë": out += "E"
            case "Ì", "Í", "Î", "Ï": out += "I"
            case "Ñ": out += "N"
            case "Ò", "Ó", "Ô", "Ö", "Õ": out += "O"
            case "Ù", "Ú", "Û", "Ü": out += "U"
            default: out.append(character)
            }
        }
        return out
    }
}

extension String {
    fileprivate var trimmingWhitespaceAndPunctuation: Substring {
        let keep: (Character) -> Bool = { $0.isLetter || $0.isNumber }
        guard let first = firstIndex(where: keep), let last = lastIndex(where: keep) else { return "" }
        return self[first...last]
    }
}

/// Puts concatenated SMS back together: parts are kept by sender and reference until all have
/// come, in any order. A message whose parts do not all arrive within `maximumAge` seconds is
/// dropped, and at most `maximumPending` messages wait, so a stream of stray parts cannot fill memory.
package struct SMSAssembler: Codable, Sendable {
    private struct Key: Codable, Hashable {
        var sender: String
        var reference: Int
        var total: Int
    }

    private struct Pending: Codable {
        var parts: [Int: String] = [:]
        var firstSeen: Double
    }

    package static let maximumAge = 3600.0
    package static let maximumPending = 32
    private var pending: [Key: Pending] = [:]

    package init() {}

    /// The whole message once `text` completes it (a single-part message at once), or nil while
    /// parts are missing.
    package mutating func add(sender: String, text: String, concatenation: SMSPDU.Concatenation?, at time: Double) -> String? {
        pending = pending.filter { time - $0.value.firstSeen <= Self.maximumAge }
        guard let c = concatenation, c.total > 1 else { return text }
        guard (1...c.total).contains(c.sequence) else { return nil }
        let key = Key(sender: sender, reference: c.reference, total: c.total)
        if pending[key] == nil && pending.count >= Self.maximumPending,
           let oldest = pending.min(by: { $0.value.firstSeen < $1.value.firstSeen })?.key {
            pending[oldest] = nil
        }
        pending[key, default: Pending(firstSeen: time)].parts[c.sequence] = text
        guard let parts = pending[key]?.parts, parts.count == c.total else { return nil }
        pending[key] = nil
        return (1...c.total).map { parts[$0] ?? "" }.joined()
    }

    /// Messages still missing parts.
    package var waiting: Int { pending.count }
}
