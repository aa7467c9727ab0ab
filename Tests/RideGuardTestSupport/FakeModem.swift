// SPDX-License-Identifier: Apache-2.0
import Foundation
import RideGuardCore
import Synchronization

/// A scripted modem on a pseudo-terminal, behind a stable symlink (like udev's
/// /dev/rideguard-modem-at), so that it can vanish and come back as a USB modem re-enumerating.
package final class FakeModem: @unchecked Sendable {
    /// What to do with the next AT+CMGS.
    package enum Outcome: Sendable {
        case accept
        /// `+CMS ERROR: code`; `report`: what AT+CEER answers after it, as the modem writes it
        /// after "+CEER: " (nil: "No error", as a modem with nothing to add says).
        case cmsError(Int, report: String? = nil)
        /// Take the message and say nothing (the sender will time out, or be killed).
        case silence
        /// Take the message and disappear (the device node goes away).
        case vanish
    }

    /// How the phone at a dialled number behaves. The network's side of a voice call as a modem
    /// reports it (27.007 §7.18 +CLCC, V.250 result codes): dialling (stat 2) for half a second,
    /// then alerting (3) while it rings, active (0) once picked up; BUSY or NO CARRIER when the
    /// call ends without us.
    package enum Phone: Sendable {
        /// Rings until we hang up.
        case rings
        /// Picked up this many seconds after the call was placed.
        case answers(after: Double)
        /// The callee presses "decline" this many seconds after: NO CARRIER.
        case declines(after: Double)
        case busy
        /// Switched off: straight to voicemail, active without ever ringing.
        case voicemail(after: Double)
        /// Picked up `after` seconds after the call was placed, and hung up by the callee `for`
        /// seconds later: between two polls of the list when short.
        case picksUpBriefly(after: Double, for: Double)

        /// When the call becomes active, if it does.
        package var pickUp: Double? {
            switch self {
            case .answers(let after), .voicemail(let after), .picksUpBriefly(let after, _): after
            case .rings, .declines, .busy: nil
            }
        }
    }

    package struct Script: Sendable {
        package var echo = true
        /// By number; a number not here rings until hung up.
        package var phones: [String: Phone] = [:]
        /// false: a data-only modem, which answers COMMAND NOT SUPPORT to AT+CLCC=? and ATD (Huawei E1752
        /// answers that to what it lacks: python-gsmmodem's fakemodems.py).
        package var voice = true
        /// Commands get no answer for this long after the first byte (booting), then RDY and friends.
        package var bootSeconds = 0.0
        package var bootURCs = ["RDY", "+CPIN: READY", "SMS Ready"]
        /// This many registration queries answer "searching" first.
        package var searchingQueries = 0
        /// Commands like AT+CMGS answer +CMS ERROR: 331 until then.
        package var networkDownUntil: Date?
        package var outcomes: [Outcome] = []
        package var urcBeforePrompt = false
        package var urcInsideResponses = false
        package var noiseBeforeAnswers = false
        package var pin: String?
        /// Whether a SIM is in the modem: without one, every SIM command is answered `+CME ERROR: 10`
        /// (27.007 §9.2.1, as SIM800 and SIM7600 answer AT+CPIN? with no card).
        package var simInserted = true
        /// PIN attempts the SIM has left; at 0 it wants its PUK (`+CPIN: SIM PUK`, `+CME ERROR: 12`).
        package var pinAttemptsLeft = 3
        /// How the modem tells the attempts left: 27.007's AT+CPINR (Quectel EC2x, u-blox), Quectel's
        /// AT+QPINC?, Huawei's AT^CPIN?, SIMCom's AT+SPIC; nil: it does not (every one answers ERROR).
        package var attemptsQuery: String? = "AT+CPINR=\"SIM PIN\""
        /// The network refuses the SIM (+CREG stat 3, registration denied).
        package var registrationDenied = false
        /// Answer AT+CPIN? with `+CPIN: READY` and no final result code (Wavecom M1306, Sierra
        /// SL8084TR: python-gsmmodem issue 19, gammu pull request 422).
        package var cpinWithoutFinal = false
        /// Send AT+CPIN?'s `OK` this long after its answer line (a slow modem), seconds.
        package var cpinLateFinal: Double?
        /// The preferred message storages (27.005 §3.2.2 +CPMS): <mem1> read and delete (+CMGL,
        /// +CMGD), <mem2> write and send, <mem3> where received messages are stored and what +CMTI
        /// names. Cinterion modules ship with "ME","ME","SM": a new SMS lands on the SIM while
        /// +CMGL lists the phone's memory.
        package var memories = ["SM", "SM", "SM"]
        /// Every other command is answered this long after it arrives, seconds.
        package var answerDelay = 0.0
        /// `AT+CLCC=1` is understood (SIMCom, Quectel): the call list reported as it changes.
        package var callReports = true
        /// A message given to AT+CMGS is accepted this long after its PDU arrives (a slow network), seconds.
        package var sendSeconds = 0.0
        /// Commands answered `ERROR`, as a module that lacks them does (a Telit or a u-blox refusing
        /// `AT+CNMI=2,…` modes it does not have, an old one without `AT+CMEE`).
        package var refused: Set<String> = []

        package init() {}
    }

    package struct Received: Sendable {
        package var decoded: SMSPDU.Decoded
        package var at: Date
    }

    private struct State {
        var script: Script
        var master: Int32 = -1
        var slave: Int32 = -1
        var running = true
        var firstByte: Date?
        var booted = false
        var received: [Received] = []
        var commands: [String] = []
        var pinAttempts = 0
        /// What AT+CEER reports: the last failed send's cause.
        var lastReport: String?
        var unlocked = false
        var reference = 40
        var registrationQueries = 0
        /// Received messages by storage ("SM", "ME"), then by index: their SMS-DELIVER PDUs.
        var storages: [String: [Int: String]] = [:]
        /// The storages now: the script's preferred ones until +CPMS sets others.
        var memories: [String] = []
        var nextIndex = 1
        var newMessageIndications = false
        var call: Call?
        var calls: [Call] = []
        /// `AT+CLCC=1`: the list reported unprompted as it changes (SIMCom, Quectel).
        var callReports = false

        /// The SIM's `+CPIN:` code; nil without a SIM.
        var simState: String? {
            guard script.simInserted else { return nil }
            guard script.pin != nil, !unlocked else { return "READY" }
            return script.pinAttemptsLeft > 0 ? "SIM PIN" : "SIM PUK"
        }

        /// The answer to a query of the PIN attempts left, in the form of the maker whose query it
        /// is: nil when `command` is none of them; .some(nil) when it is one this modem lacks (ERROR).
        func attemptsAnswer(_ command: String) -> String?? {
            let left = script.pinAttemptsLeft, puk = left > 0 ? 10 : 9
            let answers = [
                "AT+CPINR=\"SIM PIN\"": "+CPINR: SIM PIN,\(left),3",            // 27.007 §8.65
                "AT+QPINC?": "+QPINC: \"SC\",\(left),\(puk)",                    // Quectel
                "AT^CPIN?": "^CPIN: \(simState ?? "NOT INSERTED"),,\(puk),\(left),10,3",  // Huawei
                "AT+SPIC": "+SPIC: \(left),\(puk),3,10",                           // SIMCom
            ]
            guard let answer = answers[command] else { return nil }
            return .some(command == script.attemptsQuery ? answer : nil)
        }
    }

    /// A voice call this modem placed.
    package struct Call: Sendable {
        package var number: String
        package var placed: Date
        package var phone: Phone
        /// When it was hung up by us (AT+CHUP/ATH), or ended by the other side.
        package var ended: Date?
        package var answered = false

        /// 27.007 <stat> at `now`, or nil when the other side has ended it, with its result code.
        package func state(at now: Date) -> (stat: Int?, ending: String?) {
            let t = now.timeIntervalSince(placed)
            switch phone {
            case .rings: return (t < 0.5 ? 2 : 3, nil)
            case .answers(let after): return (t < 0.5 ? 2 : t < after ? 3 : 0, nil)
            case .declines(let after): return t < after ? (t < 0.5 ? 2 : 3, nil) : (nil, "NO CARRIER")
            case .busy: return t < 0.5 ? (2, nil) : (nil, "BUSY")
            case .voicemail(let after): return (t < after ? 2 : 0, nil)
            case .picksUpBriefly(let after, let length):
                return t < after + length ? (t < 0.5 ? 2 : t < after ? 3 : 0, nil) : (nil, "NO CARRIER")
            }
        }
    }

    package let link: String
    private let state: Mutex<State>
    /// The fake's time: the wall clock, or the test's manual clock. On that one its delays and its
    /// phones' timelines pass as the test moves the clock (its own threads wait for it), as the
    /// modem code's timeouts and polls do.
    private let clock: ManualClock?
    /// Reads and writes so far: changes while the fake is at work.
    private let io = Atomic<Int>(0)

    package init(script: Script = Script(), link: String? = nil, clock: ManualClock? = nil) throws {
        self.link = link ?? Scratch.path("rideguard-modem").path
        self.clock = clock
        var initial = State(script: script)
        initial.memories = script.memories
        state = Mutex(initial)
        clock?.watch { [weak self] in self?.io.load(ordering: .relaxed) ?? 0 }
        try plugIn()
    }

    package var received: [Received] { state.withLock { $0.received } }
    /// Every call placed, the one in progress last.
    package var calls: [Call] { state.withLock { s in s.calls + (s.call.map { [$0] } ?? []) } }
    package var commands: [String] { state.withLock { $0.commands } }
    package var pinAttempts: Int { state.withLock { $0.pinAttempts } }
    package func update(_ change: @Sendable (inout Script) -> Void) { state.withLock { change(&$0.script) } }

    /// A complete message: its recipient, how many SMS parts carried it, its text (parts joined).
    package struct Delivered: Sendable {
        package var number: String
        package var parts: Int
        package var text: String
    }

    /// Complete messages (concatenated parts joined), in order of their last part.
    package var delivered: [Delivered] {
        var partial: [Int: [Int: String]] = [:]
        var out: [Delivered] = []
        for r in received {
            if let c = r.decoded.concatenation {
                partial[c.reference, default: [:]][c.sequence] = r.decoded.text
                if partial[c.reference]!.count == c.total {
                    out.append(Delivered(number: r.decoded.number, parts: c.total, text: (1...c.total).map { partial[c.reference]![$0] ?? "" }.joined()))
                    partial[c.reference] = nil
                }
            } else {
                out.append(Delivered(number: r.decoded.number, parts: 1, text: r.decoded.text))
            }
        }
        return out
    }

    /// Texts of complete messages, in order of their last part.
    package var messages: [String] { delivered.map(\.text) }

    /// A new pty behind the link: the modem (re)appears.
    package func plugIn() throws {
        var master: Int32 = 0, slave: Int32 = 0
        guard openpty(&master, &slave, nil, nil, nil) == 0 else { throw SpawnError(program: "openpty", code: errno) }
        var options = termios()
        tcgetattr(slave, &options)
        cfmakeraw(&options)
        tcsetattr(slave, TCSANOW, &options)
        let path = try pseudoTerminalPath(slave)
        unlink(link)
        symlink(path, link)
        state.withLock { s in
            s.master = master
            s.slave = slave
            s.running = true
            s.firstByte = nil
            s.booted = s.script.bootSeconds == 0
            s.script.echo = true
        }
        let fd = master
        let thread = Thread { [self] in serve(fd) }
        thread.start()
    }

    /// The modem disappears: the link and the pty go away; readers get an error or end of file.
    package func unplug() {
        state.withLock { s in
            s.running = false
            close(s.master)
            close(s.slave)
            s.master = -1
        }
        unlink(link)
    }

    deinit { unplug() }

    private func serve(_ master: Int32) {
        var line: [UInt8] = []
        var inPDU = false
        var buffer = [UInt8](repeating: 0, count: 1024)
        while state.withLock({ $0.running && $0.master == master }) {
            var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 100) > 0 else {
                bootIfDue(master)
                callProgress(master)
                continue
            }
            let n = read(master, &buffer, buffer.count)
            guard n > 0 else {
                usleep(20_000)
                continue
            }
            io.add(1, ordering: .relaxed)
            let first = now()
            state.withLock { if $0.firstByte == nil { $0.firstByte = first } }
            bootIfDue(master)
            for byte in buffer[0..<n] {
                if inPDU {
                    if byte == 0x1A {
                        inPDU = false
                        pduReceived(String(decoding: line, as: UTF8.self), master)
                        line = []
                    } else if byte == 0x1B {
                        inPDU = false
                        line = []
                    } else {
                        line.append(byte)
                    }
                } else if byte == 0x0D {
                    let command = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespaces)
                    line = []
                    if !command.isEmpty { inPDU = handle(command, master) }
                } else if byte != 0x0A {
                    line.append(byte)
                }
            }
        }
    }

    private func now() -> Date { clock.map { Date(timeIntervalSince1970: $0.now()) } ?? Date() }

    /// Holds the fake's own thread for `seconds` of its time.
    private func pause(_ seconds: Double) {
        guard let clock else {
            usleep(useconds_t(seconds * 1e6))
            return
        }
        let due = clock.now() + seconds
        while clock.now() < due, state.withLock({ $0.running }) { usleep(200) }
    }

    /// Runs `body` after `seconds` of the fake's time, on a thread of its own.
    private func after(_ seconds: Double, _ body: @escaping @Sendable () -> Void) {
        guard clock != nil else { return DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: body) }
        Thread.detachNewThread {
            self.pause(seconds)
            body()
        }
    }

    private func bootIfDue(_ master: Int32) {
        let now = now()
        let urcs: [String]? = state.withLock { s in
            guard !s.booted, let first = s.firstByte, now.timeIntervalSince(first) >= s.script.bootSeconds else { return nil }
            s.booted = true
            return s.script.bootURCs
        }
        for urc in urcs ?? [] { write(master, "\r\n\(urc)\r\n") }
    }

    private func write(_ master: Int32, _ text: String) {
        io.add(1, ordering: .relaxed)
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(master, $0.baseAddress, $0.count) }
    }

    private func reply(_ master: Int32, _ lines: [String], final: String = "OK") {
        let (urcInside, noise) = state.withLock { ($0.script.urcInsideResponses, $0.script.noiseBeforeAnswers) }
        if noise { _ = [UInt8]([0x00, 0xFF, 0x13, 0xFE, 0x0D, 0x0A]).withUnsafeBytes { Glibc.write(master, $0.baseAddress, $0.count) } }
        var text = ""
        for (i, line) in lines.enumerated() {
            text += "\r\n\(line)\r\n"
            if urcInside && i == 0 { text += "\r\n+CMTI: \"SM\",2\r\n" }
        }
        if urcInside && lines.isEmpty { text += "\r\n^RSSI: 15\r\n" }
        write(master, text + "\r\n\(final)\r\n")
    }

    /// Returns true when the modem now waits for a PDU.
    private func handle(_ command: String, _ master: Int32) -> Bool {
        let (booted, echo) = state.withLock { s -> (Bool, Bool) in
            s.commands.append(command)
            return (s.booted, s.script.echo)
        }
        guard booted else { return false }          // still booting: silence
        if echo { write(master, command + "\r") }
        let delay = state.withLock { $0.script.answerDelay }
        if delay > 0 && command != "AT+CPIN?" { pause(delay) }
        if state.withLock({ $0.script.refused.contains(command) }) {
            reply(master, [], final: "ERROR")
            return false
        }
        switch command {
        case "AT", "AT+CMEE=1", "AT+CMGF=0", "AT+COLP=0":
            reply(master, [])
        case "AT+CLCC=1":
            let understood = state.withLock { s in
                s.callReports = s.script.callReports
                return s.script.callReports
            }
            reply(master, [], final: understood ? "OK" : "ERROR")
        case "AT+CLCC=?":
            reply(master, [], final: state.withLock { $0.script.voice } ? "OK" : "COMMAND NOT SUPPORT")
        case "AT+CLCC":
            callProgress(master)
            let now = now()
            let line = state.withLock { s -> String? in
                guard let call = s.call, let stat = call.state(at: now).stat else { return nil }
                if stat == 0 { s.call?.answered = true }
                // SIMCom's form, with the alpha field: +CLCC: 1,0,3,0,0,"+33612345678",145,""
                return "+CLCC: 1,0,\(stat),0,0,\"\(call.number)\",145,\"\""
            }
            reply(master, line.map { [$0] } ?? [])
        case "AT+CHUP", "ATH":
            let ended = now()
            state.withLock { s in
                if var call = s.call {
                    call.ended = ended
                    s.calls.append(call)
                    s.call = nil
                }
            }
            reply(master, [])
        case "ATE0":
            state.withLock { $0.script.echo = false }
            reply(master, [])
        case "AT+CPIN?":
            let (sim, withoutFinal, late) = state.withLock { s in (s.simState, s.script.cpinWithoutFinal, s.script.cpinLateFinal) }
            guard let sim else {
                reply(master, [], final: "+CME ERROR: 10")
                return false
            }
            let answer = "+CPIN: " + sim
            if withoutFinal || late != nil {
                write(master, "\r\n\(answer)\r\n")
                if let late { after(late) { self.write(master, "\r\nOK\r\n") } }
            } else {
                reply(master, [answer])
            }
        case "AT+CSQ":
            reply(master, ["+CSQ: 20,99"])
        case "AT+CEER":
            reply(master, ["+CEER: " + (state.withLock { $0.lastReport } ?? "No error")])
        case "AT+CSCA?":
            reply(master, ["+CSCA: \"+33609001390\",145"])
        case "AT+CREG?", "AT+CEREG?":
            let searching = state.withLock { s -> Bool in
                if command == "AT+CREG?" { s.registrationQueries += 1 }
                return s.registrationQueries <= s.script.searchingQueries
            }
            let denied = state.withLock { $0.script.registrationDenied }
            if command == "AT+CEREG?" {
                reply(master, [], final: "ERROR")     // a 2G modem: no LTE registration to report
            } else {
                reply(master, [denied ? "+CREG: 0,3" : searching ? "+CREG: 0,2" : "+CREG: 0,1"])
            }
        default:
            if command.hasPrefix("AT+CPIN=\"") {
                // 27.007 §9.2.1: 16 incorrect password; 12 SIM PUK required once none is left.
                let final = state.withLock { s -> String in
                    s.pinAttempts += 1
                    guard s.script.simInserted else { return "+CME ERROR: 10" }
                    guard s.script.pinAttemptsLeft > 0 else { return "+CME ERROR: 12" }
                    if command == "AT+CPIN=\"\(s.script.pin ?? "")\"" {
                        s.unlocked = true
                        s.script.pinAttemptsLeft = 3
                        return "OK"
                    }
                    s.script.pinAttemptsLeft -= 1
                    return s.script.pinAttemptsLeft == 0 ? "+CME ERROR: 12" : "+CME ERROR: 16"
                }
                reply(master, [], final: final)
            } else if let answer = state.withLock({ $0.attemptsAnswer(command) }) {
                reply(master, answer.map { [$0] } ?? [], final: answer == nil ? "ERROR" : "OK")
            } else if command.hasPrefix("ATD") && command.hasSuffix(";") {
                // A voice call: OK at once (COLP off), the call's progress in AT+CLCC and result codes.
                let now = now()
                let placed = state.withLock { s -> Bool in
                    guard s.script.voice, s.call == nil else { return false }
                    let number = String(command.dropFirst(3).dropLast())
                    s.call = Call(number: number, placed: now, phone: s.script.phones[number] ?? .rings)
                    return true
                }
                reply(master, [], final: placed ? "OK" : state.withLock { $0.script.voice } ? "+CME ERROR: 3" : "COMMAND NOT SUPPORT")
                if placed { announceProgress(master) }
            } else if command.hasPrefix("AT+CMGS=") {
                let urc = state.withLock { $0.script.urcBeforePrompt }
                write(master, (urc ? "\r\n+CMTI: \"SM\",1\r\n" : "") + "\r\n> ")
                return true
            } else if command == "AT+CNMI=2,1,0,0,0" {
                state.withLock { $0.newMessageIndications = true }
                reply(master, [])
            } else if command == "AT+CMGL=4" {
                // Every message in <mem1>: `+CMGL: <index>,<stat>,,<TPDU length>` then its PDU (27.005 §3.4.2).
                let stored = state.withLock { s in s.storages[s.memories[0], default: [:]].sorted { $0.key < $1.key } }
                reply(master, stored.flatMap { index, pdu in ["+CMGL: \(index),0,,\(pdu.count / 2 - 1)", pdu] })
            } else if command.hasPrefix("AT+CMGD="), let index = Int(command.dropFirst(8)) {
                let existed = state.withLock { s in s.storages[s.memories[0]]?.removeValue(forKey: index) != nil }
                reply(master, [], final: existed ? "OK" : "+CMS ERROR: 321")     // 321: invalid memory index
            } else if command == "AT+CPMS?" {
                // +CPMS: <mem1>,<used1>,<total1>,<mem2>,<used2>,<total2>,<mem3>,<used3>,<total3>
                reply(master, [state.withLock { s in "+CPMS: " + s.memories.map { "\"\($0)\",\(s.storages[$0]?.count ?? 0),30" }.joined(separator: ",") }])
            } else if command.hasPrefix("AT+CPMS=") {
                // +CPMS=<mem1>[,<mem2>[,<mem3>]]: each one "SM" or "ME", else +CMS ERROR: 302 (not allowed).
                let asked = command.dropFirst(8).split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
                guard !asked.isEmpty, asked.count <= 3, asked.allSatisfy({ ["SM", "ME"].contains($0) }) else {
                    reply(master, [], final: "+CMS ERROR: 302")
                    return true
                }
                let answer = state.withLock { s -> String in
                    for (i, memory) in asked.enumerated() { s.memories[i] = memory }
                    return "+CPMS: " + s.memories.map { "\(s.storages[$0]?.count ?? 0),30" }.joined(separator: ",")
                }
                reply(master, [answer])
            } else {
                reply(master, [], final: "ERROR")
            }
        }
        return false
    }

    /// The other side ends the call (declined, busy): the call goes, and its result code comes
    /// unsolicited, whatever command runs.
    private func callProgress(_ master: Int32) {
        let now = now()
        let ending = state.withLock { s -> String? in
            guard var call = s.call, let ending = call.state(at: now).ending else { return nil }
            call.ended = now
            s.calls.append(call)
            s.call = nil
            return ending
        }
        if let ending { write(master, "\r\n\(ending)\r\n") }
    }

    /// What SIMCom modules say unprompted of a call (SIM7600 series AT manual, and transcripts such
    /// as `VOICE CALL: BEGIN` / `NO CARRIER` / `VOICE CALL: END: 000001`): `+CLCC` reports when
    /// asked (`AT+CLCC=1`) as the call rings and is picked up, `VOICE CALL: BEGIN` at the pick-up,
    /// and, when the callee hangs up, `NO CARRIER` then `VOICE CALL: END: <hhmmss>`.
    private func announceProgress(_ master: Int32) {
        guard let call = state.withLock({ $0.call }) else { return }
        let placed = call.placed, number = call.number
        func later(_ seconds: Double, _ lines: @escaping @Sendable (inout State) -> [String]) {
            after(seconds) {
                let said = self.state.withLock { s -> [String] in
                    guard s.call?.placed == placed else { return [] }     // over, or another call
                    return lines(&s)
                }
                for line in said { self.write(master, "\r\n\(line)\r\n") }
            }
        }
        let report = { @Sendable (stat: Int) in "+CLCC: 1,0,\(stat),0,0,\"\(number)\",145,\"\"" }
        later(0.5) { s in s.callReports && call.state(at: self.now()).stat == 3 ? [report(3)] : [] }
        if let pickUp = call.phone.pickUp {
            later(pickUp) { s in (s.callReports ? [report(0)] : []) + ["VOICE CALL: BEGIN"] }
        }
        if case .picksUpBriefly(let after, let length) = call.phone {
            later(after + length) { s in
                s.call?.ended = self.now()
                s.calls.append(s.call!)
                s.call = nil
                return (s.callReports ? [report(6)] : []) + ["NO CARRIER", String(format: "VOICE CALL: END: 0000%02d", Int(length.rounded(.up)))]
            }
        }
    }

    /// The modem says `line` unprompted.
    package func announce(_ line: String) {
        let master = state.withLock { $0.master }
        if master >= 0 { write(master, "\r\n\(line)\r\n") }
    }

    /// New messages are stored in `storage` from now on (<mem3>, as the modem's own settings may change it).
    package func setReceiveStorage(_ storage: String) {
        state.withLock { $0.memories[2] = storage }
    }

    /// Messages still stored on the fake SIM.
    /// Messages stored, in every storage.
    package var stored: Int { state.withLock { $0.storages.values.reduce(0) { $0 + $1.count } } }

    /// An SMS arrives from `number`: stored as SMS-DELIVER PDUs (3GPP TS 23.040 §9.2.2.1), in
    /// `parts` parts when more than one (UDH with a 16-bit reference), each announced with
    /// `+CMTI: "<mem3>",<index>` when the host asked for it (AT+CNMI). GSM 7-bit for ASCII, else UCS2.
    /// `only`: the parts (1-based) that arrive now, the others later with the same `reference`.
    package func deliver(from number: String, _ text: String, parts: Int = 1, only: Set<Int>? = nil, reference: Int = Int.random(in: 0...0xFFFF)) {
        let pdus = Self.pdus(from: number, text, parts: parts, only: only, reference: reference)
        let (indexes, memory, master, announce) = state.withLock { s -> ([Int], String, Int32, Bool) in
            var indexes: [Int] = []
            let memory = s.memories[2]
            for pdu in pdus {
                s.storages[memory, default: [:]][s.nextIndex] = pdu
                indexes.append(s.nextIndex)
                s.nextIndex += 1
            }
            return (indexes, memory, s.master, s.newMessageIndications)
        }
        guard announce, master >= 0 else { return }
        for index in indexes { write(master, "\r\n+CMTI: \"\(memory)\",\(index)\r\n") }
    }

    /// An SMS from `number` delivered directly, never stored (27.005 §3.4.1, +CNMI <mt>=2 in PDU
    /// mode): `+CMT: ,<TPDU length>` then the PDU, unsolicited, whatever command runs.
    package func deliverDirectly(from number: String, _ text: String) {
        let master = state.withLock { $0.master }
        guard master >= 0 else { return }
        for pdu in Self.pdus(from: number, text, parts: 1, only: nil, reference: 0) {
            write(master, "\r\n+CMT: ,\(pdu.count / 2 - 1)\r\n\(pdu)\r\n")
        }
    }

    /// SMS-DELIVER PDUs, with an empty SMSC address first as modems list them.
    package static func pdus(from number: String, _ text: String, parts: Int, only: Set<Int>?, reference: Int) -> [String] {
        let ucs2 = !text.allSatisfy { $0.isASCII && $0 != "`" && $0 != "^" && $0 != "{" && $0 != "}" && $0 != "[" && $0 != "]" && $0 != "~" && $0 != "\\" && $0 != "|" && $0 != "_" && $0 != "$" && $0 != "@" }
        let units = Array(text.utf16)
        let size = (units.count + parts - 1) / parts
        var pdus: [String] = []
        for part in 0..<parts where only?.contains(part + 1) ?? true {
            let slice = Array(units[min(units.count, part * size)..<min(units.count, (part + 1) * size)])
            let header: [UInt8] = parts > 1 ? [0x06, 0x08, 0x04, UInt8(reference >> 8), UInt8(reference & 0xFF), UInt8(parts), UInt8(part + 1)] : []
            var tpdu: [UInt8] = [parts > 1 ? 0x44 : 0x04]                  // SMS-DELIVER, no more messages, UDHI
            let international = number.hasPrefix("+")
            let digits = number.filter(\.isNumber).compactMap { $0.wholeNumberValue }.map(UInt8.init)
            tpdu += [UInt8(digits.count), international ? 0x91 : 0x81]
            for i in stride(from: 0, to: digits.count, by: 2) { tpdu.append((i + 1 < digits.count ? digits[i + 1] : 0x0F) << 4 | digits[i]) }
            tpdu += [0x00, ucs2 ? 0x08 : 0x00]                                 // PID, DCS
            tpdu += [0x62, 0x11, 0x32, 0x81, 0x54, 0x00, 0x40]                 // 2026-11-23 18:45:00 +01:00
            if ucs2 {
                let payload = slice.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
                tpdu += [UInt8(header.count + payload.count)] + header + payload
            } else {
                // Septets packed from the least significant bit, after fill bits up to a septet boundary.
                let fill = header.isEmpty ? 0 : (7 - (header.count * 8) % 7) % 7
                let headerSeptets = (header.count * 8 + fill) / 7
                var bits: [Bool] = Array(repeating: false, count: fill)
                for unit in slice { for b in 0..<7 { bits.append(unit >> b & 1 == 1) } }
                var packed: [UInt8] = []
                for start in stride(from: 0, to: bits.count, by: 8) {
                    var octet: UInt8 = 0
                    for (b, bit) in bits[start..<min(bits.count, start + 8)].enumerated() where bit { octet |= 1 << b }
                    packed.append(octet)
                }
                tpdu += [UInt8(headerSeptets + slice.count)] + header + packed
            }
            pdus.append("00" + tpdu.map { String(format: "%02X", $0) }.joined())
        }
        return pdus
    }

    private func pduReceived(_ hex: String, _ master: Int32) {
        guard let decoded = SMSPDU.decode(hex), decoded.kind == .submit else {
            reply(master, [], final: "+CMS ERROR: 304")
            return
        }
        let now = now()
        let outcome = state.withLock { s -> (Outcome, Int) in
            s.received.append(Received(decoded: decoded, at: now))
            if let down = s.script.networkDownUntil, now < down { return (.cmsError(331), 0) }
            s.lastReport = nil
            let next = s.script.outcomes.isEmpty ? .accept : s.script.outcomes.removeFirst()
            s.reference += 1
            return (next, s.reference)
        }
        let slow = state.withLock { $0.script.sendSeconds }
        if slow > 0 { pause(slow) }
        switch outcome.0 {
        case .accept: reply(master, ["+CMGS: \(outcome.1)"])
        case .cmsError(let code, let report):
            state.withLock { $0.lastReport = report }
            reply(master, [], final: "+CMS ERROR: \(code)")
        case .silence: break
        case .vanish: DispatchQueue.global().async { self.unplug() }
        }
    }
}
