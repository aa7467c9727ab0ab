// SPDX-License-Identifier: Apache-2.0
/// The GSM 03.38 default alphabet (3GPP TS 23.038): which characters an SMS can carry in 7 bits,
/// and how many parts a text takes.
package enum GSM7 {
    /// Index = code.
    static let basic: [Character] = Array(
        "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\u{1B}ÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà")
    /// Characters reached through the escape code 0x1B: they take two septets.
    static let extended: [Character: UInt8] = [
        "\u{0C}": 0x0A, "^": 0x14, "{": 0x28, "}": 0x29, "\\": 0x2F, "[": 0x3C, "~": 0x3D, "]": 0x3E, "|": 0x40, "€": 0x65,
    ]
    static let basicCodes: [Character: UInt8] = {
        var codes: [Character: UInt8] = [:]
        for (code, character) in basic.enumerated() where character != "\u{1B}" { codes[character] = UInt8(code) }
        return codes
    }()

    /// The nearest letter of the alphabet for each Latin letter French, Spanish, German and Italian
    /// write that it lacks (ê→e, á→a, ç→c, œ→oe).
    static let nearest: [Character: String] = [
        "á": "a", "â": "a", "ã": "a", "ç": "c", "ê": "e", "ë": "e", "í": "i", "î": "i", "ï": "i", "ó": "o", "ô": "o",
        "õ": "o", "ú": "u", "û": "u", "ý": "y", "ÿ": "y", "œ": "oe", "À": "A", "Á": "A", "Â": "A", "È": "E", "Ê": "E", "Ë": "E",
        "Í": "I", "Î": "I", "Ì": "I", "Ó": "O", "Ô": "O", "Ò": "O", "Ú": "U", "Û": "U", "Ù": "U", "Œ": "OE", "’": "'", "«": "\"",
        "»": "\"", "\u{A0}": " ", "\u{202F}": " ",
    ]

    /// `text` with each letter the alphabet lacks replaced by its nearest one, and nothing else
    /// changed. Only RideGuard's own words are folded, never a rider's name or words.
    package static func folded(_ text: String) -> String {
        var out = ""
        for character in text {
            if basicCodes[character] != nil || extended[character] != nil {
                out.append(character)
            } else {
                out += nearest[character] ?? String(character)
            }
        }
        return out
    }

    /// The septets for `text` (escape pairs for extension characters), or nil when a character is
    /// not in the alphabet (the text then needs UCS2).
    package static func septets(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.count)
        for character in text {
            if let code = basicCodes[character] {
                out.append(code)
            } else if let code = extended[character] {
                out.append(0x1B)
                out.append(code)
            } else {
                return nil
            }
        }
        return out
    }

    /// Decodes septets back to text (escape pairs included).
    package static func text(_ septets: [UInt8]) -> String {
        var out = ""
        var escaped = false
        for code in septets {
            if escaped {
                out.append(extended.first { $0.value == code }?.key ?? " ")
                escaped = false
            } else if code == 0x1B {
                escaped = true
            } else if Int(code) < basic.count {
                out.append(basic[Int(code)])
            }
        }
        return out
    }
}

/// How a text goes out as SMS: its encoding and its parts (160/153 septets in GSM 7-bit, 70/67
/// UTF-16 code units in UCS2 — an emoji is two). Parts never split an escape pair or a surrogate pair.
package struct SMSText: Equatable, Sendable {
    package enum Encoding: String, Sendable { case gsm7, ucs2 }

    package let encoding: Encoding
    /// Each part's payload: septets (GSM7) or UTF-16 code units (UCS2).
    package let parts: [[UInt16]]

    package init(_ text: String) {
        if let septets = GSM7.septets(text) {
            encoding = .gsm7
            parts = SMSText.split(septets.map(UInt16.init), single: 160, multi: 153) { units, cut in
                units[cut - 1] == 0x1B  // never end a part on an escape
            }
        } else {
            encoding = .ucs2
            parts = SMSText.split(Array(text.utf16), single: 70, multi: 67) { units, cut in
                UTF16.isLeadSurrogate(units[cut - 1])
            }
        }
    }

    private static func split(_ units: [UInt16], single: Int, multi: Int,
                              splitsPair: ([UInt16], Int) -> Bool) -> [[UInt16]] {
        guard units.count > single else { return [units] }
        var parts: [[UInt16]] = []
        var start = 0
        while start < units.count {
            var end = min(units.count, start + multi)
            if end < units.count && splitsPair(units, end) { end -= 1 }
            parts.append(Array(units[start..<end]))
            start = end
        }
        return parts
    }
}
