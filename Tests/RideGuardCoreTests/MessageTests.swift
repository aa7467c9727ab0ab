// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import RideGuardCore

@Suite struct PhoneNumberTests {
    /// An SMS's sender in international form must be the number; in national form (a trunk 0,
    /// or none as for Italian mobiles) it is when the number ends with its digits.
    @Test(arguments: [
        ("+33612345678", "+33612345678", true), ("+33612345679", "+33612345678", false),
        ("0612345678", "+33612345678", true), ("0612345679", "+33612345678", false),
        ("3471234567", "+393471234567", true), ("0612345678", "+4915112345678", false),
        ("045678", "+33612345678", false), ("+4915112345678", "+33612345678", false),
    ])
    func sendersAsNetworksGiveThem(sender: String, stored: String, same: Bool) throws {
        #expect(try PhoneNumber(stored).isSender(sender) == same)
    }

    @Test(arguments: [
        ("+33 6 12 34 56 78", "+33612345678"), ("0033 (6) 12.34.56.78", "+33612345678"),
        ("+49-151-1234-5678", "+4915112345678"), ("+1 (415) 555-0100", "+14155550100"),
    ])
    func cleansWhatPeopleType(input: String, e164: String) throws {
        #expect(try PhoneNumber(input).e164 == e164)
    }

    @Test(arguments: [
        ("06 12 34 56 78", "no country code"), ("+33 6 12 AB 56 78", "not digits"), ("+33 12", "8 to 15"),
        ("+0 612345678", "never starts with 0"), ("", "no country code"),
    ])
    func refusesWhatIsNotE164(input: String, reason: String) {
        #expect {
            _ = try PhoneNumber(input)
        } throws: { error in
            (error as? ConfigurationError)?.reason.contains(reason) == true
        }
    }

    @Test func masksForLogs() throws {
        #expect(try PhoneNumber("+33612345678").masked == "+33•••••5678")
        #expect(PhoneNumber.mask("+4915112345678") == "+49•••••••5678")
        #expect(PhoneNumber.maskNumbers(in: #"+CLIP: "+33612345678",145,,,"",0"#) == #"+CLIP: "+33•••••5678",145,,,"",0"#)
        #expect(PhoneNumber.maskNumbers(in: #"+CMT: "0612345678",,"24/11/22,10:00:00+04""#)
            == #"+CMT: "06••••5678",,"24/11/22,10:00:00+04""#)
        #expect(PhoneNumber.maskNumbers(in: "+CMGS: 12") == "+CMGS: 12")
        #expect(PhoneNumber.maskNumbers(in: "+CSQ: 18,99") == "+CSQ: 18,99")
    }
}

@Suite struct GSM7Tests {
    @Test func alphabetHasAllItsCodes() {
        #expect(GSM7.basic.count == 128)
        #expect(GSM7.septets("@") == [0])
        #expect(GSM7.septets("à") == [0x7F])
        #expect(GSM7.septets("€") == [0x1B, 0x65])
    }

    @Test func roundTripsEveryCharacter() {
        let all = String(GSM7.basic.filter { $0 != "\u{1B}" }) + "^{}\\[~]|€"
        let septets = try! #require(GSM7.septets(all))
        #expect(GSM7.text(septets) == all)
        #expect(septets.count == 127 + 18)
    }

    @Test func textsOutsideTheAlphabetNeedUCS2() {
        #expect(GSM7.septets("ç") == nil)       // only Ç is in the alphabet
        #expect(GSM7.septets("á") == nil)
        #expect(SMSText("Crash 🏍").encoding == .ucs2)
    }

    @Test(arguments: [
        (String(repeating: "a", count: 160), SMSText.Encoding.gsm7, [160]),
        (String(repeating: "a", count: 161), .gsm7, [153, 8]),
        (String(repeating: "€", count: 80), .gsm7, [160]),                     // 80 × 2 septets
        (String(repeating: "€", count: 81), .gsm7, [152, 10]),                 // an escape pair is never cut
        (String(repeating: "é", count: 70) + "ç", .ucs2, [67, 4]),
        (String(repeating: "x", count: 66) + "🏍" + "yyy", .ucs2, [66, 5]),     // the emoji's pair stays whole
        (String(repeating: "x", count: 68) + "🏍", .ucs2, [70]),                // an emoji is two code units
    ])
    func partsAreCountedInSeptetsOrCodeUnits(text: String, encoding: SMSText.Encoding, sizes: [Int]) {
        let sms = SMSText(text)
        #expect(sms.encoding == encoding)
        #expect(sms.parts.map(\.count) == sizes)
    }
}

@Suite struct MessageComposerTests {
    let fix = Fix(time: 1_700_000_000, latitude: 48.858370, longitude: 2.294481, speed: 0, accuracy: 8)
    let evidence = CrashEvidence(reason: .lyingStill, postureDegrees: 84, stillSeconds: 1.3, peakG: 7.9, deltaV: 2,
                                 peakRotationDegreesPerSecond: 300, speedBefore: 17.2, fallTime: 10)

    func context(_ language: MessageLanguage, fix: Fix?, age: Double? = 5, name: String = "Alex",
                 message: String = "I may have crashed. Please call me or come and find me.") -> MessageContext {
        MessageContext(riderName: name, riderMessage: message, medicalNote: nil, language: language, mapLink: .google,
                       trigger: .crash, crashTime: "14:32", evidence: evidence, fix: fix, fixAge: age,
                       speedBefore: 17.2, headingBefore: 40)
    }

    @Test func englishAlertSaysWhatARescuerNeeds() {
        let text = MessageComposer.alert(context(.en, fix: fix))
        #expect(text == """
            I may have crashed. Please call me or come and find me.
            https://maps.google.com/?q=48.85837,2.29448 (accuracy 8 m)
            Crash at 14:32, moving 62 km/h heading NE, bike on its side, impact 7.9 g
            RideGuard - Alex
            """)
    }

    @Test func staleFixSaysHowOldAndNoFixSaysUnknown() {
        let stale = MessageComposer.alert(context(.en, fix: fix, age: 240))
        #expect(stale.contains("(accuracy 8 m, position 4 min old)"))
        let none = MessageComposer.alert(context(.en, fix: nil))
        #expect(none.contains("Position unknown (no GPS fix)."))
        #expect(!none.contains("http"))
    }

    @Test(arguments: MapLinkStyle.allCases)
    func mapLinksCarryFiveDecimals(style: MapLinkStyle) {
        let link = style.link(fix)
        #expect(link.contains("48.85837") && link.contains("2.29448"))
    }

    /// How a message goes out in `language`: German's, Italian's and English's letters are all in the
    /// GSM 7-bit alphabet, so theirs always go in 7 bits; French's and Spanish's go in UCS-2 within
    /// `ucs2Parts`, or else in 7 bits with only the letters GSM lacks folded (never more than
    /// `gsmParts` parts). Returns the text.
    @discardableResult
    func expectSent(_ text: String, _ language: MessageLanguage, gsmParts: Int, ucs2Parts: Int = MessageComposer.PartsAllowed.other,
                    sourceLocation: SourceLocation = #_sourceLocation) -> String {
        let sms = SMSText(text)
        switch sms.encoding {
        case .gsm7:
            #expect(sms.parts.count <= gsmParts, "\(language): \(sms.parts.count) parts: \(text)", sourceLocation: sourceLocation)
        case .ucs2:
            #expect(language == .fr || language == .es, "\(language) needs no UCS-2: \(text)", sourceLocation: sourceLocation)
            #expect(sms.parts.count <= ucs2Parts, "\(language): \(sms.parts.count) UCS-2 parts: \(text)", sourceLocation: sourceLocation)
            #expect(GSM7.folded(text) != text, "UCS-2 only for a letter GSM lacks: \(text)", sourceLocation: sourceLocation)
        }
        return text
    }

    /// Every message in every language, with its language's spelling, in this many SMS parts: alert
    /// 2 in GSM 7-bit (rider's message of 55 characters, fix, facts) or 3 in UCS-2, the monthly test
    /// 1 (2 with a long reason) or 2 in UCS-2, every other message 1. The words each language spells
    /// with letters GSM carries keep them.
    @Test(arguments: MessageLanguage.allCases)
    func everyMessageKeepsItsSpellingWithinItsParts(language: MessageLanguage) {
        var sent: [String] = []
        for fixCase in [fix, nil] as [Fix?] {
            for age in [5.0, 600] {
                let c = context(language, fix: fixCase, age: age)
                sent.append(expectSent(MessageComposer.alert(c), language, gsmParts: 2, ucs2Parts: MessageComposer.PartsAllowed.alert))
                sent.append(expectSent(MessageComposer.locationUpdate(c), language, gsmParts: 1))
            }
            for state in WorkflowState.allCases {
                let reply = MessageComposer.whereReply(context(language, fix: fixCase, age: 600), state: state, protection: state == .armed ? .protecting : .notProtecting)
                sent.append(expectSent(reply, language, gsmParts: 1))
                if fixCase != nil { #expect(reply.contains("48.85837,2.29448"), "the reply carries the position: \(reply)") }
            }
            for rate in [200.0, nil] as [Double?] {
                let reply = MessageComposer.statusReply(context(language, fix: fixCase, age: 600), state: .armed, protection: .protecting, sensorRateHz: rate, waiting: 12)
                sent.append(expectSent(reply, language, gsmParts: 1))
                #expect(reply.contains("12") && reply.contains(rate == nil ? ":" : "200 Hz"), "\(reply)")
                if fixCase != nil { #expect(reply.contains("48.85837,2.29448"), "the reply carries the position: \(reply)") }
            }
            for byRider in [true, false] {
                sent.append(expectSent(MessageComposer.allClear(context(language, fix: fixCase), byRider: byRider), language, gsmParts: 1))
            }
            sent.append(expectSent(MessageComposer.parkedFall(context(language, fix: fixCase)), language, gsmParts: 2))
        }
        var sos = context(language, fix: fix)
        sos.trigger = .manual
        sent.append(expectSent(MessageComposer.alert(sos), language, gsmParts: 2, ucs2Parts: MessageComposer.PartsAllowed.alert))
        sent.append(expectSent(MessageComposer.whereReply(context(language, fix: fix), state: .alertCountdown, protection: .protecting), language, gsmParts: 1))
        sent.append(expectSent(MessageComposer.pairing(link: "http://10.42.0.1/p/2f8a1c", language: language), language, gsmParts: 1))
        // Setup's test SMS and its suggested message: one part each, and the test says it is one.
        let test = expectSent(MessageComposer.test(riderName: "Alexandra", language: language), language, gsmParts: 1)
        sent.append(test)
        #expect(test.contains("TEST"))
        let suggested = MessageComposer.suggestedMessage(language)
        #expect(suggested.count <= 110 && suggested.contains(language == .en ? "emergency services" : "112"), "\(suggested)")
        // Asking a contact: one SMS with a rider's name of 20 characters, or none given; it says
        // how to answer with the words the inbox reads.
        for name in ["Alexandra Martinelli", nil] as [String?] {
            let ask = expectSent(MessageComposer.confirmationRequest(riderName: name, language: language), language, gsmParts: 1)
            sent.append(ask)
            #expect(ask.contains(" OK ") && ask.contains("STOP") && SMSCommand("OK") == .acknowledge && SMSCommand("STOP") == .stop)
        }
        // A name with a letter GSM lacks is never changed: UCS-2, in at most three parts, as
        // docs/rider.md says (issue 61's Jérôme); the language it was asked in is told from it.
        let jerome = MessageComposer.confirmationRequest(riderName: "Jérôme-Dominique Lefèvre", language: language)
        #expect(jerome.contains("Jérôme-Dominique Lefèvre") && SMSText(jerome).encoding == .ucs2 && SMSText(jerome).parts.count <= 3, "\(jerome)")
        #expect(MessageComposer.confirmationLanguage(of: jerome) == language)
        // The answer to a reply that neither confirms nor declines: one SMS, the words that count.
        let hint = expectSent(MessageComposer.replyHint(riderName: "Alexandra Martinelli", language: language), language, gsmParts: 1)
        #expect(hint.contains("OK") && hint.contains("STOP") && hint.contains("NEIN") && SMSCommand("NEIN") == .stop, "\(hint)")
        // The self-test: one SMS for a rider protecting with a fix, a sensor and no crash; two at
        // most with a long reason and a crash.
        let plain = SelfTestReport(protection: Protection(.protecting), contacts: 3, confirmed: 2, modem: "home, -71 dBm",
                                   fixAge: 180, sensorRateHz: 200, lastCrash: nil)
        let test1 = expectSent(MessageComposer.selfTest(plain, language: language, crashDate: { _ in "2026-11-02" }), language,
                               gsmParts: 1, ucs2Parts: MessageComposer.PartsAllowed.selfTest)
        sent.append(test1)
        #expect(test1.contains(" 2/3.") && test1.contains("-71 dBm") && test1.contains("200 Hz"))
        var worst = plain
        worst.protection = Protection(.notProtecting, reasons: ["the SIM cannot send SMS: the SIM may not send SMS (no credit, or SMS not in its plan): top it up"])
        worst.lastCrash = 1_762_000_000
        let test2 = expectSent(MessageComposer.selfTest(worst, language: language, crashDate: { _ in "2026-11-02" }), language,
                               gsmParts: 2, ucs2Parts: MessageComposer.PartsAllowed.selfTest)
        sent.append(test2)
        #expect(test2.contains("2026-11-02"), "\(test2)")
        // Reasons too long for two parts are cut between two words, never inside one (issue 61:
        // "ask the op...").
        var longest = worst
        let reasons = ["the IMU gives 40 samples a second where the detector needs 100: a short impact may not be seen",
                       "no contact has confirmed their number yet (a reply OK confirms; rideguard contacts confirm NAME once you have called them)",
                       "Jo cannot be reached: the network says the number is not in service: check it with the contact"]
        longest.protection = Protection(.degraded, reasons: reasons)
        let test3 = MessageComposer.selfTest(longest, language: language, crashDate: { _ in "2026-11-02" })
        #expect(SMSText(test3).parts.count <= MessageComposer.PartsAllowed.selfTest, "\(test3)")
        let bare = { (word: Substring) in String(word.filter { !";:,.()".contains($0) }) }
        let words = Set(reasons.joined(separator: " ").split(separator: " ").map(bare))
        let lastTold = test3.components(separatedBy: "...").first?.split(separator: " ").last.map(bare) ?? ""
        #expect(test3.contains("...") && words.contains(lastTold), "a word cut (\(lastTold)): \(test3)")
        // Each language's own letters, where GSM carries them, are kept (and never the ASCII that
        // stood for them before).
        let kept: [MessageLanguage: [String]] = [
            .en: [],
            .fr: ["annulé", "garée est tombée", "prévenus", "détectée", "Répondez", "téléphone", "Chute à"],
            .de: ["ausgelöst", "läuft", "gewählt", "Bestätigen", "öffnen", "bestätigt", "nötig"],
            .es: ["teléfono", "detectado", "Accidente a las", "SIN vigilancia"],
            .it: ["è successo", "è caduta"],
        ]
        let all = sent.joined(separator: "\n")
        for word in kept[language]! {
            #expect(all.contains(word) || all.contains(GSM7.folded(word)) && GSM7.folded(word) != word, "\(language): \(word) missing")
            if GSM7.folded(word) == word { #expect(all.contains(word), "\(language): \(word) lost its accent") }
        }
        let ascii: [MessageLanguage: [String]] = [
            .en: [], .fr: ["annule ", "garee", "prevenus", "detectee", "Repondez"], .de: ["ausgeloest", "laeuft", "gewaehlt", "oeffnen", "noetig"],
            .es: ["telefono", "Medico"], .it: ["non e successo", "e caduta"],
        ]
        for word in ascii[language]! {
            #expect(!all.contains(word), "\(language): \(word) written in ASCII")
        }
    }

    /// The letters GSM lacks take their nearest letter, the ones it has are kept; nothing else changes.
    @Test func onlyTheLettersGSMLacksAreFolded() {
        #expect(GSM7.folded("peut-être à ça, Ça, où, Llámame, caída, posición, Über, Straße, è, œuvre") ==
                "peut-etre à ca, Ça, où, Llamame, caida, posicion, Über, Straße, è, oeuvre")
        #expect(GSM7.septets(GSM7.folded("Répondez, êtes, reçu, más, sí, aún")) != nil)
    }

    /// The rider's own words and name are never folded: when they need UCS-2 the alert goes in UCS-2,
    /// whatever its length, and RideGuard's words keep their spelling with them.
    @Test func theRidersWordsAndNameAreNeverChanged() {
        let words = "Puede que haya tenido una caída en moto. Llámame, y llama al 112 si no contesto. Voy solo."
        var c = context(.es, fix: fix, name: "José Martínez", message: words)
        c.medicalNote = "alergia a la penicilina, grupo sanguíneo 0+"
        let alert = MessageComposer.alert(c)
        #expect(alert.hasPrefix(words) && alert.contains("José Martínez") && alert.contains("grupo sanguíneo"))
        #expect(alert.contains("Accidente a las 14:32") && alert.contains("Datos médicos") && alert.contains("margen 8 m"), "\(alert)")
        #expect(SMSText(alert).encoding == .ucs2 && SMSText(alert).parts.count > MessageComposer.PartsAllowed.alert)
        // Folded words around a name GSM carries: only RideGuard's letters change.
        let ask = MessageComposer.confirmationRequest(riderName: "Begoña", language: .es)
        #expect(ask == "RideGuard: Begoña le ha elegido como contacto de emergencia. Si se cae, recibe un SMS con el lugar. OK para confirmar, STOP para rechazar.")
        #expect(SMSText(ask).encoding == .gsm7)
        // A French parked-fall notice spelled right fits one SMS part in UCS-2? No: folded, it keeps
        // its é and à; a name GSM lacks puts it in UCS-2, and then the words keep every letter.
        let fall = MessageComposer.parkedFall(MessageContext(riderName: "Anaïs", riderMessage: "x", language: .fr))
        #expect(fall.contains("Anaïs") && fall.contains("garée est tombée") && SMSText(fall).encoding == .ucs2, "\(fall)")
    }

    @Test func longNamesAndMessagesStillGoOut() {
        let long = String(repeating: "Call the emergency services. ", count: 12)
        let c = context(.de, fix: fix, name: "Maximilian-Alexander von Hohenzollern-Sigmaringen", message: long)
        let text = MessageComposer.alert(c)
        #expect(text.hasPrefix(long.trimmingSpaces()))
        #expect(text.contains("Maximilian-Alexander von Hohenzollern-Sigmaringen"))
        #expect(SMSText(text).parts.count == 4)
        // A name outside the alphabet turns the message into UCS2, which is still sent.
        let accented = context(.fr, fix: fix, name: "François")
        #expect(SMSText(MessageComposer.alert(accented)).encoding == .ucs2)
    }

    @Test func medicalNoteAndManualSOS() {
        var c = context(.it, fix: fix)
        c.medicalNote = "diabetic, allergic to penicillin"
        c.trigger = .manual
        let text = MessageComposer.alert(c)
        #expect(text.contains("Dati medici: diabetic, allergic to penicillin"))
        #expect(text.contains("SOS lanciato dal motociclista alle 14:32") && !text.contains("Caduta"))
    }

    @Test func riderMessageMustSaySomething() {
        #expect(throws: ConfigurationError(key: "message", reason: "the alert message must have at least 5 characters")) {
            try MessageComposer.validateRiderMessage("  hi  ")
        }
        #expect(throws: Never.self) { try MessageComposer.validateRiderMessage("Help!") }
    }

    @Test(arguments: [(0.0, "N"), (44.0, "NE"), (90, "E"), (200, "S"), (337.6, "N"), (-90, "W")])
    func compassPoints(degrees: Double, point: String) {
        #expect(Words.for(.en).compass[MessageComposer.compassIndex(degrees)] == point)
    }
}
