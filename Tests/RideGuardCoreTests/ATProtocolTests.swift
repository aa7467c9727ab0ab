// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import RideGuardCore

func items(_ text: String, chunk: Int = 1000) -> [ATLineReader.Item] {
    var reader = ATLineReader()
    let bytes = Array(text.utf8)
    var out: [ATLineReader.Item] = []
    var i = 0
    while i < bytes.count {
        out += reader.feed(bytes[i..<min(bytes.count, i + chunk)])
        i += chunk
    }
    return out
}

func exchange(_ command: String, _ transcript: String) -> (outcomes: [ATExchange.Outcome], exchange: ATExchange) {
    var ex = ATExchange(command: command)
    return (items(transcript).map { ex.consume($0) }, ex)
}

@Suite struct ATProtocolTests {
    @Test(arguments: [1, 2, 5, 100])
    func linesAndThePromptWhateverTheChunks(chunk: Int) {
        #expect(items("\r\n+CSQ: 18,99\r\n\r\nOK\r\n", chunk: chunk) == [.line("+CSQ: 18,99"), .line("OK")])
        #expect(items("\r\n> ", chunk: chunk) == [.prompt])
        #expect(items("\r\n+CMTI: \"SM\",3\r\n\r\n> ", chunk: chunk) == [.line("+CMTI: \"SM\",3"), .prompt])
    }

    @Test func echoIsRecognised() {
        let (outcomes, ex) = exchange("AT+CSQ", "AT+CSQ\r\r\n+CSQ: 20,0\r\n\r\nOK\r\n")
        #expect(outcomes == [.echo, .information("+CSQ: 20,0"), .finished(.ok, information: ["+CSQ: 20,0"])])
        #expect(ex.final == .ok)
    }

    @Test func unsolicitedLinesInTheMiddleAreRoutedApart() {
        let (outcomes, _) = exchange("AT+CPIN?", "\r\nRDY\r\n+CREG: 2\r\n+CPIN: READY\r\n^RSSI: 14\r\n\r\nOK\r\n")
        #expect(outcomes == [.unsolicited("RDY"), .unsolicited("+CREG: 2"), .information("+CPIN: READY"),
                             .unsolicited("^RSSI: 14"), .finished(.ok, information: ["+CPIN: READY"])])
    }

    @Test(arguments: [
        ("\r\n+CMS ERROR: 331\r\n", ATFinal.cmsError(331)), ("\r\n+CME ERROR: 10\r\n", .cmeError(10)),
        ("\r\nERROR\r\n", .error), ("\r\nCOMMAND NOT SUPPORT\r\n", .other("COMMAND NOT SUPPORT")),
        ("\r\n+CME ERROR: SIM not inserted\r\n", .cmeError(-1)),
    ])
    func finalResults(transcript: String, final: ATFinal) {
        let (outcomes, _) = exchange("AT+CMGS=20", transcript)
        #expect(outcomes.last == .finished(final, information: []))
    }

    /// BUSY, NO CARRIER… end a dial; after any other command they are a call's news: a call
    /// ending while an SMS is sent must not fail the SMS.
    @Test func callProgressEndsADialButNotASend() {
        let (dial, _) = exchange("ATD+33612345678;", "\r\nBUSY\r\n")
        #expect(dial == [.finished(.other("BUSY"), information: [])])
        var send = ATExchange(command: "AT+CMGS=50")
        let during = items("\r\n> ").map { send.consume($0) } + items("\r\nNO CARRIER\r\n\r\n+CMGS: 7\r\n\r\nOK\r\n").map { send.consume($0) }
        #expect(during == [.prompt, .unsolicited("NO CARRIER"), .information("+CMGS: 7"), .finished(.ok, information: ["+CMGS: 7"])])
        let (query, _) = exchange("AT+CLCC", "\r\nNO ANSWER\r\n\r\nOK\r\n")
        #expect(query == [.unsolicited("NO ANSWER"), .finished(.ok, information: [])])
    }

    @Test(arguments: [
        (#"+CLCC: 1,0,3,0,0,"+33612345678",145,"""#, ATParse.Call(id: 1, outgoing: true, state: .alerting, voice: true)),
        ("+CLCC: 1,0,2,0,0", ATParse.Call(id: 1, outgoing: true, state: .dialing, voice: true)),
        ("+CLCC:2,0,0,0,0,15980856182,255", ATParse.Call(id: 2, outgoing: true, state: .active, voice: true)),
        (#"+CLCC: 1,1,4,0,0,"+4915112345678",145"#, ATParse.Call(id: 1, outgoing: false, state: .incoming, voice: true)),
        ("+CLCC: 3,0,0,1,0", ATParse.Call(id: 3, outgoing: true, state: .active, voice: false)),
    ])
    func callListLines(line: String, call: ATParse.Call) {
        #expect(ATParse.call(line) == call)
    }

    @Test func notACallListLine() {
        #expect(ATParse.call("+CLCC: 1,0") == nil)
        #expect(ATParse.call("+CLCC: 1,0,9,0,0") == nil)
        #expect(ATParse.call("+CSQ: 1,0,3,0,0") == nil)
    }

    @Test func sendingAMessage() {
        var ex = ATExchange(command: "AT+CMGS=50")
        let first = items("\r\n+CMTI: \"SM\",1\r\n\r\n> ").map { ex.consume($0) }
        #expect(first == [.unsolicited("+CMTI: \"SM\",1"), .prompt])
        let second = items("\r\n+CMGS: 123\r\n\r\nOK\r\n").map { ex.consume($0) }
        #expect(second.last == .finished(.ok, information: ["+CMGS: 123"]))
        #expect(ATParse.messageReference("+CMGS: 123") == 123)
        #expect(ATParse.messageReference("+CMGS: 7,\"22/11/26,10:00:00+04\"") == 7)
    }

    @Test(arguments: [
        ("+CREG: 0,1", 1), ("+CREG: 2,5,\"4CA\",\"81DE445\"", 5), ("+CEREG: 2,1, 1F00, 79D903 ,7", 1),
        ("+CREG: 1", 1), ("+CREG: 0,2", 2), ("+CGREG: 0,3", 3),
    ])
    func registrationReplies(line: String, status: Int) {
        #expect(ATParse.registration(line) == status)
    }

    @Test func otherReplies() {
        #expect(ATParse.signal("+CSQ: 18,99") == -77)
        #expect(ATParse.signal("+CSQ: 99,99") == nil)
        #expect(ATParse.simState("+CPIN: SIM PIN") == "SIM PIN")
        #expect(ATParse.serviceCentre("+CSCA: \"+33609001390\",145") == "+33609001390")
        #expect(ATParse.serviceCentre("+CSCA: \"\",129") == nil)
    }

    @Test func errorsAreClassifiedForRetrying() {
        #expect(SendFailure.classify(.cmsError(1)) == SendFailure(permanent: true, reason: "+CMS ERROR: 1 (unassigned number)", cause: .numberNotInService))
        #expect(SendFailure.classify(.cmsError(331)) == SendFailure(permanent: false, reason: "+CMS ERROR: 331 (no network service)", cause: .noNetwork))
        #expect(SendFailure.classify(.cmsError(500)) == SendFailure(permanent: false, reason: "+CMS ERROR: 500 (unknown error)", cause: .other))
        // A code that says nothing takes the cause the modem's report names in words.
        #expect(SendFailure.classify(.cmsError(500), report: "Requested facility not subscribed")
                == SendFailure(permanent: false, reason: "+CMS ERROR: 500 (unknown error); the modem's report: Requested facility not subscribed", cause: .notSubscribed))
    }

    @Test func garbageNeverBecomesALine() {
        #expect(items("\u{01}\u{02}\u{FF}x\r\nOK\r\n") == [.garbage(5), .line("OK")])
        #expect(items(String(repeating: "A", count: 2000)).first == .garbage(1025))
    }

    /// Random bytes: the reader never crashes, never reports a line with control characters, and an
    /// exchange never finishes on noise alone unless the noise spelled a final result.
    @Test func fuzzWithRandomBytes() {
        var rng = SplitMix64(seed: 99)
        for _ in 0..<300 {
            var reader = ATLineReader()
            var ex = ATExchange(command: "AT+CSQ")
            let count = Int(rng.next() % 600)
            var bytes: [UInt8] = (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            // Sprinkle line endings so that lines do form.
            for _ in 0..<(count / 20) { bytes[Int(rng.next() % UInt64(max(count, 1)))] = 0x0A }
            for item in reader.feed(bytes) {
                if case .line(let line) = item {
                    #expect(line.utf8.allSatisfy { ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x09 })
                    #expect(!line.isEmpty && line.utf8.count <= ATLineReader.maximumLine)
                }
                _ = ex.consume(item)
            }
        }
    }

    /// Real answers with URCs dropped in at random places: the answer and final result come out the
    /// same, and every URC is routed as unsolicited.
    @Test func fuzzWithURCsMixedIn() {
        let urcs = ["RDY", "+CPIN: READY", "SMS Ready", "+CMTI: \"SM\",4", "RING", "^RSSI: 12", "+CREG: 1", "+QIND: SMS DONE"]
        let answers = [("AT+CSQ", ["+CSQ: 17,99"]), ("AT+CSCA?", ["+CSCA: \"+33609001390\",145"]), ("ATE0", [])]
        var rng = SplitMix64(seed: 5)
        for _ in 0..<500 {
            let (command, information) = answers[Int(rng.next() % UInt64(answers.count))]
            var lines = information + ["OK"]
            var inserted: [String] = []
            for _ in 0..<Int(rng.next() % 4) {
                let urc = urcs[Int(rng.next() % UInt64(urcs.count))]
                guard !(command == "AT+CSCA?" && urc.hasPrefix("+CSCA")) else { continue }
                lines.insert(urc, at: Int(rng.next() % UInt64(lines.count)))
                inserted.append(urc)
            }
            let transcript = lines.map { "\r\n" + $0 + "\r\n" }.joined()
            let (outcomes, ex) = exchange(command, transcript)
            #expect(ex.information == information)
            #expect(ex.final == .ok)
            let unsolicited = outcomes.compactMap { if case .unsolicited(let l) = $0 { l } else { nil } }
            #expect(unsolicited.sorted() == inserted.sorted())
        }
    }
}

/// The SMS storages (27.005 §3.2.2, §3.4.1), as modems write them.
@Suite struct MessageStorageParsingTests {
    @Test func preferredStoragesAreRead() {
        #expect(ATParse.messageStorages(#"+CPMS: "ME",0,255,"ME",0,255,"SM",1,20"#) == ["ME", "ME", "SM"])
        #expect(ATParse.messageStorages(#"+CPMS: "SM",3,30,"SM",3,30,"SM",3,30"#) == ["SM", "SM", "SM"])
        #expect(ATParse.messageStorages("+CPMS: 1,30,1,30,1,30") == nil)      // the answer to a set, no names
        #expect(ATParse.messageStorages("+CSQ: 18,99") == nil)
    }

    @Test func aNewMessageNoticeNamesItsStorage() {
        #expect(ATParse.newMessage(#"+CMTI: "SM",3"#).map { "\($0.storage) \($0.index)" } == "SM 3")
        #expect(ATParse.newMessage(#"+CMTI: "ME", 12"#).map { "\($0.storage) \($0.index)" } == "ME 12")
        #expect(ATParse.newMessage(#"+CMTI: "SM""#) == nil)
    }
}
