// SPDX-License-Identifier: Apache-2.0
/// Splits a modem's byte stream into lines and the SMS prompt (`> `, which has no line ending).
/// Noise on the line (bytes that are not text) is reported and dropped, never passed on as a line.
package struct ATLineReader: Sendable {
    package enum Item: Equatable, Sendable {
        case line(String)
        case prompt
        /// Bytes that were not a text line (noise, a baud-rate mismatch); how many.
        case garbage(Int)
    }

    package static let maximumLine = 1024
    private var buffer: [UInt8] = []

    package init() {}

    package mutating func feed(_ bytes: some Sequence<UInt8>) -> [Item] {
        var items: [Item] = []
        for byte in bytes {
            if byte == 0x0D || byte == 0x0A {
                flush(into: &items)
                continue
            }
            buffer.append(byte)
            if buffer == [0x3E, 0x20] {         // "> " at the start of a line
                buffer.removeAll(keepingCapacity: true)
                items.append(.prompt)
            } else if buffer.count > Self.maximumLine {
                items.append(.garbage(buffer.count))
                buffer.removeAll(keepingCapacity: true)
            }
        }
        return items
    }

    private mutating func flush(into items: inout [Item]) {
        defer { buffer.removeAll(keepingCapacity: true) }
        guard !buffer.isEmpty else { return }
        let text = buffer.allSatisfy { ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x09 }
        guard text, let line = String(validating: buffer, as: UTF8.self) else {
            items.append(.garbage(buffer.count))
            return
        }
        let trimmed = line.trimmingSpaces()
        if !trimmed.isEmpty { items.append(.line(String(trimmed))) }
    }
}

/// How a command ended.
package enum ATFinal: Equatable, Sendable {
    case ok
    case error
    case cmeError(Int)
    case cmsError(Int)
    /// A vendor's own final word: `COMMAND NOT SUPPORT` (Huawei), `TOO MANY PARAMETERS`, `NO CARRIER`.
    case other(String)

    package init?(line: String) {
        switch line {
        case "OK": self = .ok
        case "ERROR": self = .error
        case "COMMAND NOT SUPPORT", "TOO MANY PARAMETERS", "ABORT": self = .other(line)
        case _ where ATFinal.callProgress.contains(line): self = .other(line)
        default:
            if let code = ATFinal.code(line, prefix: "+CME ERROR:") { self = .cmeError(code) }
            else if let code = ATFinal.code(line, prefix: "+CMS ERROR:") { self = .cmsError(code) }
            else { return nil }
        }
    }

    /// V.250's words for how a call attempt ended: the final result of a dial (`ATD`) or an answer
    /// (`ATA`); after any other command, a call's news (the voice call `ATD…;` started has ended).
    package static let callProgress: Set<String> = ["NO CARRIER", "BUSY", "NO ANSWER", "NO DIALTONE"]

    package var isCallProgress: Bool {
        if case .other(let word) = self { return Self.callProgress.contains(word) }
        return false
    }

    private static func code(_ line: String, prefix: String) -> Int? {
        guard line.hasPrefix(prefix) else { return nil }
        let rest = line.dropFirst(prefix.count).trimmingSpaces()
        return Int(rest) ?? -1     // verbose text errors (CMEE=2) keep the prefix's meaning
    }
}

/// One command's exchange: which lines answer it, which are unsolicited (URCs) and arrived in the
/// middle, and when it is over. Pure; the session feeds it what the line reader produced.
package struct ATExchange: Sendable {
    package enum Outcome: Equatable, Sendable {
        case pending
        case echo
        case information(String)
        case unsolicited(String)
        case prompt
        case finished(ATFinal, information: [String])
    }

    package let command: String
    /// The prefix this command's answers carry (`+CSQ:` for `AT+CSQ`), when it has one.
    package let answerPrefix: String?
    package private(set) var information: [String] = []
    package private(set) var final: ATFinal?

    package init(command: String) {
        self.command = command
        answerPrefix = ATExchange.prefix(of: command)
        dials = command.hasPrefix("ATD") || command == "ATA"
    }

    /// A dial or an answer, which ends with a call-progress word (BUSY, NO CARRIER…) when it fails.
    private let dials: Bool

    /// A read query (`AT+CPIN?`) has its answer line (`+CPIN: READY`): some modems (Wavecom M1306,
    /// Sierra SL8084TR) send no final result code after it, so the session takes this as the
    /// answer once a short grace period passes without one.
    package var hasQueryAnswer: Bool {
        guard command.hasSuffix("?"), let answerPrefix else { return false }
        return information.contains { $0.hasPrefix(answerPrefix) }
    }

    package mutating func consume(_ item: ATLineReader.Item) -> Outcome {
        switch item {
        case .garbage: return .pending
        case .prompt: return .prompt
        case .line(let line):
            if line == command || line.hasPrefix(command + "\r") { return .echo }   // echo on (before ATE0)
            // A call ending while an SMS is being sent is the call's news, not the send's failure.
            if let result = ATFinal(line: line), !result.isCallProgress || dials {
                final = result
                return .finished(result, information: information)
            }
            if ATExchange.isUnsolicited(line, answering: answerPrefix) { return .unsolicited(line) }
            information.append(line)
            return .information(line)
        }
    }

    /// `AT+CSQ` → `+CSQ:`, `AT+CPIN?` → `+CPIN:`, `AT+CMGS=50` → `+CMGS:`; `ATE0`, `ATI` → nil.
    static func prefix(of command: String) -> String? {
        guard command.hasPrefix("AT+") || command.hasPrefix("AT^") else { return nil }
        let name = command.dropFirst(2).prefix { $0 != "=" && $0 != "?" }
        return name + ":"
    }

    static let unsolicitedWords = Set(["RDY", "SMS Ready", "Call Ready", "RING", "PB DONE", "READY"]).union(ATFinal.callProgress)

    /// A line is unsolicited when it is a known modem announcement, or a `+`/`^` line that is not
    /// this command's answer (`+CMTI:`, `+CREG:` while sending, `^RSSI:`…).
    static func isUnsolicited(_ line: String, answering prefix: String?) -> Bool {
        if unsolicitedWords.contains(line) { return true }
        guard line.hasPrefix("+") || line.hasPrefix("^") else { return false }
        if let prefix, line.hasPrefix(prefix) { return false }
        return true
    }
}

/// What a modem reports about itself, parsed from its answers.
package enum ATParse {
    /// `+CSQ: 18,99` → dBm (-113 + 2·rssi), nil for 99 (unknown).
    package static func signal(_ line: String) -> Int? {
        guard let values = numbers(after: "+CSQ:", in: line), let rssi = values.first, rssi != 99, (0...31).contains(rssi) else { return nil }
        return -113 + 2 * rssi
    }

    /// `+CREG: 0,1` / `+CEREG: 2,5,"1F00","79D903",7` / URC `+CREG: 1` → the registration status.
    package static func registration(_ line: String) -> Int? {
        for prefix in ["+CREG:", "+CEREG:", "+CGREG:"] where line.hasPrefix(prefix) {
            let fields = line.dropFirst(prefix.count).split(separator: ",").map { $0.trimmingSpaces() }
            // Answer to a query: n,stat[,…]; unsolicited: stat[,…]. A query's second field is the status.
            if fields.count >= 2, let stat = Int(fields[1]), !fields[1].contains("\"") { return stat }
            if let stat = fields.first.flatMap({ Int($0) }) { return stat }
        }
        return nil
    }

    /// `+CPMS: "ME",0,255,"ME",0,255,"SM",1,20` (27.005 §3.2.2) → ["ME", "ME", "SM"]: the storages
    /// read and deleted from, written to, and received into.
    package static func messageStorages(_ line: String) -> [String]? {
        guard line.hasPrefix("+CPMS:") else { return nil }
        let names = line.dropFirst(6).split(separator: ",").map { $0.trimmingSpaces() }
            .filter { $0.hasPrefix("\"") }.map { String($0.dropFirst().prefix { $0 != "\"" }) }
        return names.isEmpty ? nil : names
    }

    /// `+CMTI: "SM",3` (27.005 §3.4.1) → ("SM", 3): where the new message was stored.
    package static func newMessage(_ line: String) -> (storage: String, index: Int)? {
        guard line.hasPrefix("+CMTI:") else { return nil }
        let fields = line.dropFirst(6).split(separator: ",").map { $0.trimmingSpaces() }
        guard fields.count == 2, let index = Int(fields[1]) else { return nil }
        return (String(fields[0].filter { $0 != "\"" }), index)
    }

    /// A message delivered directly (`+CMT: [<alpha>],<length>` then its PDU, as the session joins
    /// them with a line feed) → the PDU.
    package static func directMessage(_ text: String) -> String? {
        guard text.hasPrefix("+CMT:"), let feed = text.firstIndex(of: "\n") else { return nil }
        return String(text[text.index(after: feed)...].trimmingSpaces())
    }

    /// `+CPIN: SIM PIN` → "SIM PIN".
    package static func simState(_ line: String) -> String? {
        guard line.hasPrefix("+CPIN:") else { return nil }
        return String(line.dropFirst(6).trimmingSpaces())
    }

    /// `+CMGS: 12` or `+CMGS: 12,"22/11/26,10:00:00+04"` → 12.
    package static func messageReference(_ line: String) -> Int? {
        numbers(after: "+CMGS:", in: line)?.first
    }

    /// What an unsolicited line says of the outgoing voice call in progress: 27.007's `+CLCC`
    /// reports (on with `AT+CLCC=1`: SIMCom, Quectel), `+COLP` (the connected line), V.250's bare
    /// `CONNECT`, and SIMCom's `VOICE CALL: BEGIN`, all said at the pick-up. (SIMCom's `VOICE CALL:
    /// END: <hhmmss>` is not one: it comes after the hang-up, when the next call may be dialled.)
    /// A pick-up and hang-up between two polls of the list is seen only here.
    package enum CallEvent: Equatable, Sendable {
        case ringing
        case pickedUp
    }

    package static func callEvent(_ line: String) -> CallEvent? {
        if let call = call(line) {
            guard call.outgoing && call.voice else { return nil }
            return call.state == .alerting ? .ringing : call.state == .active ? .pickedUp : nil
        }
        return line == "VOICE CALL: BEGIN" || line == "CONNECT" || line.hasPrefix("+COLP:") ? .pickedUp : nil
    }

    /// One call of `AT+CLCC`'s list (27.007 §7.18): `+CLCC: <id>,<dir>,<stat>,<mode>,<mpty>[,<number>,<type>[,<alpha>]]`.
    package struct Call: Equatable, Sendable {
        package enum State: Int, Sendable { case active = 0, held, dialing, alerting, incoming, waiting }
        package var id: Int
        /// Made by this modem (dir 0), not received.
        package var outgoing: Bool
        package var state: State
        package var voice: Bool
    }

    /// `+CLCC: 1,0,3,0,0,"+33612345678",145` → call 1, outgoing, alerting, voice. Spaces are
    /// optional (`+CLCC:2,0,0,0,0,15980856182,255`); the number, when there is one, is not needed.
    package static func call(_ line: String) -> Call? {
        guard line.hasPrefix("+CLCC:") else { return nil }
        let fields = line.dropFirst(6).split(separator: ",", omittingEmptySubsequences: false).prefix(5).map { Int($0.trimmingSpaces()) }
        guard fields.count == 5, let id = fields[0], let direction = fields[1], let stat = fields[2], let mode = fields[3],
              let state = Call.State(rawValue: stat) else { return nil }
        return Call(id: id, outgoing: direction == 0, state: state, voice: mode == 0)
    }

    /// `+CSCA: "+33609001390",145` → "+33609001390".
    package static func serviceCentre(_ line: String) -> String? {
        guard line.hasPrefix("+CSCA:"), let open = line.firstIndex(of: "\""),
              let close = line[line.index(after: open)...].firstIndex(of: "\"") else { return nil }
        let number = String(line[line.index(after: open)..<close])
        return number.isEmpty ? nil : number
    }

    static func numbers(after prefix: String, in line: String) -> [Int]? {
        guard line.hasPrefix(prefix) else { return nil }
        return line.dropFirst(prefix.count).split(separator: ",").compactMap { Int($0.trimmingSpaces()) }
    }
}
