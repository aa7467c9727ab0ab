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

    /// Every template in every language stays in the GSM 7-bit alphabet, and this many SMS parts:
    /// alert 2 (rider's message of 55 characters, fix, facts), update 1, all-clear 1.
    @Test(arguments: MessageLanguage.allCases)
    func everyLanguageStaysGSM7AndShort(language: MessageLanguage) {
        for fixCase in [fix, nil] as [Fix?] {
            for age in [5.0, 600] {
                let c = context(language, fix: fixCase, age: age)
                let alert = SMSText(MessageComposer.alert(c))
                #expect(alert.encoding == .gsm7, "\(language) alert: \(MessageComposer.alert(c))")
                #expect(alert.parts.count <= 2, "\(language) alert takes \(alert.parts.count) parts")
                let update = SMSText(MessageComposer.locationUpdate(c))
                #expect(update.encoding == .gsm7)
                #expect(update.parts.count == 1, "\(language) update: \(MessageComposer.locationUpdate(c))")
            }
            for state in WorkflowState.allCases {
                let reply = MessageComposer.whereReply(context(language, fix: fixCase, age: 600), state: state, protection: state == .armed ? .protecting : .notProtecting)
                #expect(SMSText(reply).encoding == .gsm7 && SMSText(reply).parts.count == 1, "\(language) WHERE reply: \(reply)")
                if fixCase != nil { #expect(reply.contains("48.85837,2.29448"), "the reply carries the position: \(reply)") }
            }
            for rate in [200.0, nil] as [Double?] {
                let reply = MessageComposer.statusReply(context(language, fix: fixCase, age: 600), state: .armed, protection: .protecting, sensorRateHz: rate, waiting: 12)
                #expect(SMSText(reply).encoding == .gsm7 && SMSText(reply).parts.count == 1, "\(language) STATUS reply, \(reply.count) characters: \(reply)")
                #expect(reply.contains("12") && reply.contains(rate == nil ? ":" : "200 Hz"), "\(reply)")
                if fixCase != nil { #expect(reply.contains("48.85837,2.29448"), "the reply carries the position: \(reply)") }
            }
            for byRider in [true, false] {
                let clear = SMSText(MessageComposer.allClear(context(language, fix: fixCase), byRider: byRider))
                #expect(clear.encoding == .gsm7)
                #expect(clear.parts.count == 1)
            }
        }
        // Setup's test SMS and its suggested message: one part each, and the test says it is one.
        let test = MessageComposer.test(riderName: "Alexandra", language: language)
        #expect(SMSText(test).encoding == .gsm7 && SMSText(test).parts.count == 1, "\(test)")
        #expect(test.contains("TEST"))
        let suggested = MessageComposer.suggestedMessage(language)
        #expect(SMSText(suggested).encoding == .gsm7 && suggested.count <= 110, "\(suggested)")
        // Asking a contact: one SMS with a rider's name of 20 characters, or none given; it says
        // how to answer with the words the inbox reads.
        for name in ["Alexandra Martinelli", nil] as [String?] {
            let ask = MessageComposer.confirmationRequest(riderName: name, language: language)
            #expect(SMSText(ask).encoding == .gsm7 && SMSText(ask).parts.count == 1, "\(ask.count) characters: \(ask)")
            #expect(ask.contains(" OK ") && ask.contains("STOP") && SMSCommand("OK") == .acknowledge && SMSCommand("STOP") == .stop)
        }
        // The self-test: one SMS for a rider protecting with a fix, a sensor and no crash; two at
        // most with a long reason and a crash.
        let plain = SelfTestReport(protection: Protection(.protecting), contacts: 3, confirmed: 2, modem: "home, -71 dBm",
                                   fixAge: 180, sensorRateHz: 200, lastCrash: nil)
        let test1 = MessageComposer.selfTest(plain, language: language, crashDate: { _ in "2026-11-02" })
        #expect(SMSText(test1).encoding == .gsm7 && SMSText(test1).parts.count == 1, "\(test1.count) characters: \(test1)")
        #expect(test1.contains(" 2/3.") && test1.contains("-71 dBm") && test1.contains("200 Hz"))
        var worst = plain
        worst.protection = Protection(.notProtecting, reasons: ["the SIM cannot send SMS: the SIM may not send SMS (no credit, or SMS not in its plan): top it up"])
        worst.lastCrash = 1_762_000_000
        let test2 = MessageComposer.selfTest(worst, language: language, crashDate: { _ in "2026-11-02" })
        #expect(SMSText(test2).encoding == .gsm7 && SMSText(test2).parts.count <= 2 && test2.contains("2026-11-02"), "\(test2)")
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
        #expect(text.contains("Medico: diabetic, allergic to penicillin"))
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
