// SPDX-License-Identifier: Apache-2.0
/// Text put inside HTML or SVG (the report, the rescue card): the characters markup gives a meaning
/// written as entities, and what no markup may hold (control characters) made visible.
package enum Markup {
    package static func escaped(_ text: String) -> String {
        var out = ""
        for character in DisplayText.neutralised(text) {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}

/// What a person typed that is shown again elsewhere (a name on the rescue card, in the Pi's
/// terminal, in the journal): control characters (ESC, BEL: a terminal obeys them; XML may not hold
/// them) and the bidi overrides (U+202E reverses the number after it) are refused where text comes
/// in, and shown as `�` where rows stored before are printed.
package enum DisplayText {
    /// Why `text` cannot be stored as `what` (a name, the message), or nil when it can. Line breaks
    /// are allowed where `lineBreaks` says so (the message, the medical note), never in a name.
    package static func problem(in text: String, what: String, lineBreaks: Bool = false) -> String? {
        for scalar in text.unicodeScalars where isHidden(scalar) && !(lineBreaks && scalar == "\n") {
            let code = String(scalar.value, radix: 16, uppercase: true)
            let kind = bidiControls.contains(scalar.value) ? "a direction override" : "a control character"
            return "\(what) holds \(kind) (U+\(String(repeating: "0", count: max(0, 4 - code.count)) + code)), which could change how it, or what follows it, is shown: type it again without it"
        }
        return nil
    }

    /// `text` with every control character and bidi control replaced by U+FFFD (line breaks too,
    /// unless `lineBreaks`): safe to print on a terminal or put in a page.
    package static func neutralised(_ text: String, lineBreaks: Bool = true) -> String {
        guard text.unicodeScalars.contains(where: { isHidden($0) && !(lineBreaks && $0 == "\n") }) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            out.append(isHidden(scalar) && !(lineBreaks && scalar == "\n") ? "\u{FFFD}" : scalar)
        }
        return String(out)
    }

    /// C0, DEL and C1 controls; the bidi embeddings, overrides, isolates and marks.
    static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || bidiControls.contains(scalar.value)
    }

    static let bidiControls: Set<UInt32> = [0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069]
}
