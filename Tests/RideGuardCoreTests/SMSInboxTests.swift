// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import RideGuardCore

@Suite struct SMSInboxTests {
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
