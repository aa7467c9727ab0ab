// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import RideGuardCore

@Suite struct SMSInboxTests {
    /// Each language's words are read as what its speakers mean by them, whatever the rider's
    /// language; no word means two things; the hint a contact gets names only words that are read.
    @Test(arguments: MessageLanguage.allCases)
    func eachLanguagesWordsAreRead(_ language: MessageLanguage) {
        let said = language.replyWords
        for (words, command) in [(said.whereAreYou, SMSCommand.whereAreYou), (said.yes, .acknowledge), (said.stop, .stop), (said.status, .status)] {
            #expect(!words.isEmpty, "\(language) has no word for \(command)")
            for word in words {
                #expect(SMSCommand(word) == command && SMSCommand(word.lowercased() + " merci") == command, "\(language): \(word)")
                for other in MessageLanguage.allCases {
                    let theirs = other.replyWords
                    let meaning = [(theirs.whereAreYou, SMSCommand.whereAreYou), (theirs.yes, .acknowledge), (theirs.stop, .stop), (theirs.status, .status)]
                        .filter { $0.0.contains(word) }.map(\.1)
                    #expect(meaning.allSatisfy { $0 == command }, "\(word) means \(command) in \(language) and \(meaning) in \(other)")
                }
            }
        }
        let hint = MessageComposer.replyHint(riderName: "Léa", language: language)
        let named = hint.split { !$0.isLetter }.map(String.init).filter { $0.count >= 2 && $0 == $0.uppercased() }
        let read = named.map { SMSCommand($0) ?? SMSCommand.aloneOnly[$0] }
        #expect(read.allSatisfy { $0 == .acknowledge || $0 == .stop }, "\(language): \(zip(named, read).map { "\($0) → \(String(describing: $1))" })")
        #expect(read.contains(.acknowledge) && read.contains(.stop), "\(hint)")
        #expect(named.contains { said.yes.contains($0) } || named.contains("OK"), "\(language)'s own yes is not in its hint: \(hint)")
    }

    @Test(arguments: [
        ("WHERE", SMSCommand.whereAreYou), ("where?", .whereAreYou), (" Où ? ", .whereAreYou), ("ou", .whereAreYou),
        ("Wo?", .whereAreYou), ("¿Dónde?", .whereAreYou), ("dove", .whereAreYou),
        ("OK", .acknowledge), ("ok!", .acknowledge), ("Ok.", .acknowledge), ("Oui", .acknowledge), ("ja", .acknowledge),
        ("Sí", .acknowledge), ("yes", .acknowledge),
        ("STOP", .stop), ("Stopp", .stop), ("Arrêt", .stop), ("baja", .stop),
        ("STATUS", .status), ("État", .status), ("estado", .status), ("Stato", .status),
        // Issue 61: the first word counts, as people write ("Ok merci !", "nein danke").
        ("Ok merci !", .acknowledge), ("oui bien sûr", .acknowledge), ("Ja", .acknowledge), ("ok thanks", .acknowledge),
        ("OKAY", .acknowledge), ("Vale, de acuerdo", .acknowledge), ("Certo!", .acknowledge),
        ("nein danke", .stop), ("Non merci", .stop), ("STOP NOW", .stop), ("non", .stop), ("No", .stop), ("no.", .stop),
        ("WHERE ARE YOU", .whereAreYou), ("Where's Alex", .whereAreYou), ("Où es-tu ?", .whereAreYou),
    ])
    func commandsInFiveLanguages(text: String, command: SMSCommand) {
        #expect(SMSCommand(text) == command)
    }

    @Test(arguments: ["", "1234", "?", "WHERE1", "disarm", "no problem", "No worries, happy to", "Thanks Alex", "d'accord"])
    func anythingElseIsNoCommand(text: String) {
        #expect(SMSCommand(text) == nil)
    }

    /// The word shown beside what a reply decided is the contact's own.
    @Test func theContactsOwnWordIsKept() {
        #expect(SMSCommand.firstWord("Arrêt") == "Arrêt")
        #expect(SMSCommand.firstWord("  ¡Ok merci !") == "Ok")
        #expect(SMSCommand.firstWord("nein danke") == "nein")
        #expect(SMSCommand.firstWord("?") == "")
    }

    @Test func partsComeTogetherInAnyOrder() {
        var assembler = SMSAssembler()
        #expect(assembler.add(sender: "+33612345678", text: "Short", concatenation: nil, at: 0) == "Short")
        let c = { (n: Int) in SMSPDU.Concatenation(reference: 0x1234, total: 3, sequence: n) }
        #expect(assembler.add(sender: "+33612345678", text: "c", concatenation: c(3), at: 1) == nil)
        // Another sender's part with the same reference is another message.
        #expect(assembler.add(sender: "+4915112345678", text: "x", concatenation: c(1), at: 1) == nil)
        #expect(assembler.add(sender: "+33612345678", text: "a", concatenation: c(1), at: 2) == nil)
        #expect(assembler.waiting == 2)
        #expect(assembler.add(sender: "+33612345678", text: "b", concatenation: c(2), at: 3) == "abc")
        #expect(assembler.waiting == 1)
    }

    @Test func strayPartsAreDroppedAfterAnHourAndNeverPileUp() {
        var assembler = SMSAssembler()
        let part = { (ref: Int) in SMSPDU.Concatenation(reference: ref, total: 2, sequence: 1) }
        #expect(assembler.add(sender: "+33612345678", text: "a", concatenation: part(1), at: 0) == nil)
        #expect(assembler.add(sender: "+33612345678", text: "b", concatenation: part(2), at: SMSAssembler.maximumAge + 1) == nil)
        #expect(assembler.waiting == 1)                   // the first one is gone
        for ref in 0..<100 { _ = assembler.add(sender: "+1555", text: "x", concatenation: part(1000 + ref), at: SMSAssembler.maximumAge + 2) }
        #expect(assembler.waiting == SMSAssembler.maximumPending)
        #expect(assembler.add(sender: "+1555", text: "y", concatenation: SMSPDU.Concatenation(reference: 1, total: 2, sequence: 3),
                              at: SMSAssembler.maximumAge + 3) == nil)   // part 3 of 2: ignored
    }
}
