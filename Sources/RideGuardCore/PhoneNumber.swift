// SPDX-License-Identifier: Apache-2.0
/// A phone number in E.164 (`+` and 8–15 digits), as contacts are stored.
package struct PhoneNumber: Hashable, Codable, Sendable, CustomStringConvertible {
    package let e164: String

    /// Why a typed number cannot be made E.164.
    package enum Problem: Error, Equatable, Sendable {
        case noCountryCode, notDigits, digitCount(Int), countryCodeZero

        /// What to say, with what was typed (`ScreenText` says it in a language: English here).
        package func phrase(typed text: String) -> ScreenPhrase {
            switch self {
            case .noCountryCode: ScreenPhrase(.numberNoCountryCode, text)
            case .notDigits: ScreenPhrase(.numberNotDigits, text)
            case .digitCount(let count): ScreenPhrase(.numberDigitCount, text, String(count))
            case .countryCodeZero: ScreenPhrase(.numberCountryCodeZero, text)
            }
        }
    }

    /// Cleans what a person typed: spaces, dashes, dots and brackets go, a leading `00` becomes `+`.
    /// A number without its country code cannot be made E.164 and is refused with the reason.
    package init(_ text: String) throws(ConfigurationError) {
        switch Self.cleaned(text) {
        case .success(let number): e164 = number
        case .failure(let problem): throw ConfigurationError(key: "number", reason: ScreenText(.en)(problem.phrase(typed: text)))
        }
    }

    /// What was typed as E.164, or why it cannot be.
    package static func cleaned(_ text: String) -> Result<String, Problem> {
        var cleaned = ""
        for character in text.trimmingSpaces() {
            if " -.()/\u{00A0}".contains(character) { continue }
            cleaned.append(character)
        }
        if cleaned.hasPrefix("00") { cleaned = "+" + cleaned.dropFirst(2) }
        guard cleaned.hasPrefix("+") else { return .failure(.noCountryCode) }
        let digits = cleaned.dropFirst()
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return .failure(.notDigits) }
        guard (8...15).contains(digits.count) else { return .failure(.digitCount(digits.count)) }
        guard digits.first != "0" else { return .failure(.countryCodeZero) }
        return .success(cleaned)
    }

    package var description: String { e164 }

    /// Whether an SMS's sender, as the network gives it, is this number. An international sender
    /// (`+33612345678`) must be the same number. Some networks give a sender of their own country in
    /// national form (type 0x81: `0612345678`, a trunk 0 then the subscriber's number): it is this
    /// number when this one ends with those digits, the trunk zeros left out, seven at least.
    package func isSender(_ sender: String) -> Bool {
        if sender.hasPrefix("+") { return sender == e164 }
        let national = sender.drop { $0 == "0" }
        guard national.count >= 7, national.allSatisfy({ $0.isASCII && $0.isNumber }) else { return false }
        return e164.hasSuffix(national)
    }

    /// For logs: country code and the last four digits only (`+33•••••5678`).
    package var masked: String { PhoneNumber.mask(e164) }

    /// Masks any number-like text the same way.
    package static func mask(_ number: String) -> String {
        let digits = number.filter(\.isNumber)
        guard digits.count > 6 else { return String(repeating: "•", count: digits.count) }
        let prefix = number.hasPrefix("+") ? "+" + digits.prefix(2) : String(digits.prefix(2))
        return prefix + String(repeating: "•", count: digits.count - 6) + digits.suffix(4)
    }

    /// A line from elsewhere (a modem's `+CLIP: "+33612345678",145`, `+CMT: …`) with every run of
    /// seven or more digits, with its leading `+`, masked: nothing in it can be a readable number.
    package static func maskNumbers(in line: String) -> String {
        var out = ""
        var run = ""
        func flush() {
            out += run.filter(\.isNumber).count >= 7 ? mask(run) : run
            run = ""
        }
        for character in line {
            if character.isASCII && character.isNumber || (character == "+" && run.isEmpty) {
                run.append(character)
            } else {
                flush()
                out.append(character)
            }
        }
        flush()
        return out
    }
}
