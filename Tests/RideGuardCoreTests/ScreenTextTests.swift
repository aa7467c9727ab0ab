// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import RideGuardCore

/// The rider's screens in five languages: every text in every language, with the same values put
/// in; a missing one falls back to English, never to its key.
@Suite struct ScreenTextTests {
    @Test(arguments: MessageLanguage.allCases)
    func everyTextExistsInEveryLanguageWithTheSameValues(language: MessageLanguage) throws {
        let table = try #require(ScreenText.catalog[language])
        for key in ScreenKey.allCases {
            let english = try #require(ScreenText.english[key], "\(key) has no English text")
            let text = try #require(table[key], "\(key) is missing in \(language)")
            #expect(!text.isEmpty && text != key.rawValue, "\(language) \(key)")
            #expect(Self.placeholders(text) == Self.placeholders(english), "\(language) \(key): \(text)")
        }
        #expect(table.count == ScreenKey.allCases.count, "\(language) has texts for keys that do not exist")
        if language != .en {
            // Written for the language, not copied: most texts differ from English's.
            let same = ScreenKey.allCases.filter { table[$0] == ScreenText.english[$0] }
            #expect(same.count < ScreenKey.allCases.count / 8, "\(language) copies English: \(same)")
        }
    }

    /// Which values a text takes.
    static func placeholders(_ text: String) -> Set<Int> {
        Set((0..<10).filter { text.contains("{\($0)}") })
    }

    @Test func aMissingTextFallsBackToEnglishNeverToItsKey() {
        let partial: [ScreenKey: String] = [.save: "Speichern"]
        #expect(ScreenText.text(.save, in: partial, []) == "Speichern")
        #expect(ScreenText.text(.remove, in: partial, []) == "Remove")
        #expect(ScreenText.text(.setupAdded, in: partial, ["Sam", "+33612345678"]) == "added Sam +33612345678")
    }

    @Test func aNumberIsRefusedInTheRidersLanguageForTheSameReasonAsInEnglish() throws {
        let cases: [(String, PhoneNumber.Problem)] = [("06 12 34 56 78", .noCountryCode), ("+33 6 12 AB", .notDigits),
                                                      ("+33 612", .digitCount(5)), ("+033612345678", .countryCodeZero)]
        for (typed, problem) in cases {
            #expect(PhoneNumber.cleaned(typed) == .failure(problem), "\(typed)")
            do {
                _ = try PhoneNumber(typed)
                Issue.record("\(typed) was taken")
            } catch {
                #expect(error.reason == ScreenText(.en)(problem.phrase(typed: typed)))
            }
            #expect(ScreenText(.de)(problem.phrase(typed: typed)).contains("„\(typed)“"))
        }
        #expect(ScreenText(.fr)(PhoneNumber.Problem.digitCount(5).phrase(typed: "+33 612")) == "« +33 612 » a 5 chiffres ; un numéro international en a de 8 à 15")
        #expect(throws: ConfigurationError(key: "message", reason: ScreenText(.en)(.messageTooShort))) { try MessageComposer.validateRiderMessage("Aïe") }
        #expect(PhoneNumber.cleaned("0033 6 12.34.56.78") == .success("+33612345678"))
    }
}
