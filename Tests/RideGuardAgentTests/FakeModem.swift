import Foundation
import RideGuardCore
import Synchronization

/// A scripted modem on a pseudo-terminal, behind a stable symlink (like udev's
/// /dev/rideguard-modem-at), so that it can vanish and come back as a USB modem re-enumerating.
final class FakeModem: @unchecked Sendable {
    /// What to do with the next AT+CMGS.
    enum Outcome: Sendable {
        case accept
        case cmsError(Int)
        /// Take the message and say nothing (the sender will time out, or be killed).
        case silence
        /// Take the message and disappear (the device node goes away).
        case vanish
    }

    struct Script: Sendable {
        var echo = true
        /// Commands get no answer for this long after the first byte (booting), then RDY and friends.
        var bootSeconds = 0.0
        var bootURCs = ["RDY", "+CPIN: READY", "SMS Ready"]
        /// This many registration queries answer "searching" first.
        var searchingQueries = 0
        /// Commands like AT+CMGS answer +CMS ERROR: 331 until then.
        var networkDownUntil: Date?
        var outcomes: [Outcome] = []
        var urcBeforePrompt = false
        var urcInsideResponses = false
        var noiseBeforeAnswers = false
        var pin: String?
        /// Answer AT+CPIN? with `+CPIN: READY` and no final result code (Wavecom M1306, Sierra
        /// SL8084TR: python-gsmmodem issue 19, gammu pull request 422).
        var cpinWithoutFinal = false
        /// Send AT+CPIN?'s `OK` this long after its answer line (a slow modem), seconds.
        var cpinLateFinal: Double?
        /// Every other command is answered this long after it arrives, seconds.
        var answerDelay = 0.0
    }

    struct Received: Sendable {
        var decoded: SMSPDU.Decoded
        var at: Date
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
        var unlocked = false
        var reference = 40
        var registrationQueries = 0
    }

    let link: String
    private let state: Mutex<State>

    init(script: Script = Script(), link: String? = nil) throws {
        self.link = link ?? FileManager.default.temporaryDirectory.appendingPathComponent("rideguard-modem-\(UUID().uuidString)").path
        state = Mutex(State(script: script))
        try plugIn()
    }

    var received: [Received] { state.withLock { $0.received } }
    var commands: [String] { state.withLock { $0.commands } }
    var pinAttempts: Int { state.withLock { $0.pinAttempts } }
    func update(_ change: @Sendable (inout Script) -> Void) { state.withLock { change(&$0.script) } }

    /// Texts of complete messages (concatenated parts joined), in order of their last part.
    var messages: [String] {
        var partial: [UInt8: [UInt8: String]] = [:]
        var out: [String] = []
        for r in received {
            if let c = r.decoded.concatenation {
                partial[c.reference, default: [:]][c.sequence] = r.decoded.text
                if partial[c.reference]!.count == Int(c.total) {
                    out.append((1...c.total).map { partial[c.reference]![$0] ?? "" }.joined())
                    partial[c.reference] = nil
                }
            } else {
                out.append(r.decoded.text)
            }
        }
        return out
    }

    /// A new pty behind the link: the modem (re)appears.
    func plugIn() throws {
        var master: Int32 = 0, slave: Int32 = 0
        guard openpty(&master, &slave, nil, nil, nil) == 0 else { throw SpawnError(program: "openpty", code: errno) }
        var options = termios()
        tcgetattr(slave, &options)
        cfmakeraw(&options)
        tcsetattr(slave, TCSANOW, &options)
        let path = String(cString: ttyname(slave))
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
    func unplug() {
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
                continue
            }
            let n = read(master, &buffer, buffer.count)
            guard n > 0 else {
                usleep(20_000)
                continue
            }
            state.withLock { if $0.firstByte == nil { $0.firstByte = Date() } }
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

    private func bootIfDue(_ master: Int32) {
        let urcs: [String]? = state.withLock { s in
            guard !s.booted, let first = s.firstByte, Date().timeIntervalSince(first) >= s.script.bootSeconds else { return nil }
            s.booted = true
            return s.script.bootURCs
        }
        for urc in urcs ?? [] { write(master, "\r\n\(urc)\r\n") }
    }

    private func write(_ master: Int32, _ text: String) {
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
        if delay > 0 && command != "AT+CPIN?" { usleep(useconds_t(delay * 1e6)) }
        switch command {
        case "AT", "AT+CMEE=1", "AT+CMGF=0":
            reply(master, [])
        case "ATE0":
            state.withLock { $0.script.echo = false }
            reply(master, [])
        case "AT+CPIN?":
            let (locked, withoutFinal, late) = state.withLock { s in
                (s.script.pin != nil && !s.unlocked, s.script.cpinWithoutFinal, s.script.cpinLateFinal)
            }
            let answer = locked ? "+CPIN: SIM PIN" : "+CPIN: READY"
            if withoutFinal || late != nil {
                write(master, "\r\n\(answer)\r\n")
                if let late { DispatchQueue.global().asyncAfter(deadline: .now() + late) { self.write(master, "\r\nOK\r\n") } }
            } else {
                reply(master, [answer])
            }
        case "AT+CSQ":
            reply(master, ["+CSQ: 20,99"])
        case "AT+CSCA?":
            reply(master, ["+CSCA: \"+33609001390\",145"])
        case "AT+CREG?", "AT+CEREG?":
            let searching = state.withLock { s -> Bool in
                if command == "AT+CREG?" { s.registrationQueries += 1 }
                return s.registrationQueries <= s.script.searchingQueries
            }
            if command == "AT+CEREG?" {
                reply(master, [], final: "ERROR")     // a 2G modem: no LTE registration to report
            } else {
                reply(master, [searching ? "+CREG: 0,2" : "+CREG: 0,1"])
            }
        default:
            if command.hasPrefix("AT+CPIN=\"") {
                let correct = state.withLock { s -> Bool in
                    s.pinAttempts += 1
                    let ok = command == "AT+CPIN=\"\(s.script.pin ?? "")\""
                    if ok { s.unlocked = true }
                    return ok
                }
                reply(master, [], final: correct ? "OK" : "+CME ERROR: 16")
            } else if command.hasPrefix("AT+CMGS=") {
                let urc = state.withLock { $0.script.urcBeforePrompt }
                write(master, (urc ? "\r\n+CMTI: \"SM\",1\r\n" : "") + "\r\n> ")
                return true
            } else {
                reply(master, [], final: "ERROR")
            }
        }
        return false
    }

    private func pduReceived(_ hex: String, _ master: Int32) {
        guard let decoded = SMSPDU.decodeSubmit(hex) else {
            reply(master, [], final: "+CMS ERROR: 304")
            return
        }
        let outcome = state.withLock { s -> (Outcome, Int) in
            s.received.append(Received(decoded: decoded, at: Date()))
            if let down = s.script.networkDownUntil, Date() < down { return (.cmsError(331), 0) }
            let next = s.script.outcomes.isEmpty ? .accept : s.script.outcomes.removeFirst()
            s.reference += 1
            return (next, s.reference)
        }
        switch outcome.0 {
        case .accept: reply(master, ["+CMGS: \(outcome.1)"])
        case .cmsError(let code): reply(master, [], final: "+CMS ERROR: \(code)")
        case .silence: break
        case .vanish: DispatchQueue.global().async { self.unplug() }
        }
    }
}
