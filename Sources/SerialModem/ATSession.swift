// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import RideGuardCore

/// Why an AT command did not complete.
package enum ATError: Error, Equatable, CustomStringConvertible, Sendable {
    case timeout(command: String, seconds: Double)
    case failed(command: String, final: ATFinal)
    case disconnected(String)
    case busy

    package var description: String {
        switch self {
        case .timeout(let command, let seconds): "\(command): no answer within \(DecimalFormat.string(seconds, decimals: 0)) s"
        case .failed(let command, let final): "\(command): \(final)"
        case .disconnected(let reason): "modem disconnected: \(reason)"
        case .busy: "another command is running"
        }
    }
}

/// One conversation with a modem over a serial port: one command at a time, each with its own
/// timeout on the agent's clock (cancelled when the command ends); unsolicited lines go to
/// `onUnsolicited` whenever they come.
package actor ATSession {
    private let port: SerialPort
    private let clock: any ServiceClock
    /// The current command's one timer: its timeout, its prompt's, or its answer's grace.
    private var timer: Task<Void, Never>?
    private var reader = ATLineReader()
    private var current: (id: Int, exchange: ATExchange, continuation: CheckedContinuation<[String], any Error>)?
    private var promptWaiter: (id: Int, continuation: CheckedContinuation<Void, any Error>)?
    private var nextID = 0
    private var gone: String?
    private let onUnsolicited: @Sendable (String) -> Void
    /// Noise seen on the line, in bytes (a wrong baud rate shows here).
    package private(set) var garbageBytes = 0
    /// How long a query's answer line waits for its final result code before it is taken as the
    /// answer (modems that send `+CPIN: READY` and no `OK`).
    private let answerGrace = 0.3
    /// After a query was answered without its final result code, the next command waits this long:
    /// a late final then arrives while no command runs, and is dropped, never taken as the next
    /// command's.
    private let strayFinalQuiet = 1.0
    private var quietUntil = -Double.infinity
    /// A `+CMT:` header (27.005 §3.4.1, a message delivered directly, not stored) came: its PDU is
    /// the next line, and goes with it to `onUnsolicited`, never into a command's answer.
    private var directMessageHeader: String?

    package init(port: SerialPort, clock: any ServiceClock, onUnsolicited: @escaping @Sendable (String) -> Void) {
        self.port = port
        self.clock = clock
        self.onUnsolicited = onUnsolicited
    }

    /// Starts reading: bytes are fed to the session in order through one stream.
    package func start() {
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        port.startReading(onBytes: { continuation.yield($0) }, onGone: { reason in
            continuation.yield([])
            continuation.finish()
            Task { await self.lost(reason) }
        })
        Task {
            for await bytes in stream where !bytes.isEmpty { self.received(bytes) }
        }
    }

    package var isConnected: Bool { gone == nil }

    /// Sends `command` and returns its information lines; throws on ERROR, a timeout or a lost port.
    @discardableResult
    package func run(_ command: String, timeout: Double = 5) async throws -> [String] {
        try await send(command, suffix: "\r", timeout: timeout)
    }

    /// `AT+CMGS=<length>`, waits for the prompt, sends the PDU and Ctrl-Z; returns the reference.
    package func submit(_ part: SMSPDU.Part, promptTimeout: Double = 10, timeout: Double = 120) async throws -> Int {
        let command = "AT+CMGS=\(part.tpduLength)"
        if let gone { throw ATError.disconnected(gone) }
        guard current == nil else { throw ATError.busy }
        nextID += 1
        let id = nextID
        let lines: [String] = try await withCheckedThrowingContinuation { continuation in
            current = (id, ATExchange(command: command), continuation)
            Task {
                do {
                    try self.write(command + "\r")
                    try await self.waitForPrompt(id: id, timeout: promptTimeout)
                    try self.write(part.hex + "\u{1A}")
                    self.armTimeout(id: id, command: command, seconds: timeout)
                } catch {
                    self.fail(id: id, error)
                }
            }
        }
        guard let reference = lines.compactMap(ATParse.messageReference).first else {
            throw ATError.failed(command: command, final: .other("no +CMGS reference"))
        }
        return reference
    }

    private func send(_ command: String, suffix: String, timeout: Double) async throws -> [String] {
        if let gone { throw ATError.disconnected(gone) }
        guard current == nil else { throw ATError.busy }
        if quietUntil > clock.now() {
            try await clock.sleep(until: quietUntil)
            if let gone { throw ATError.disconnected(gone) }
            guard current == nil else { throw ATError.busy }
        }
        nextID += 1
        let id = nextID
        return try await withCheckedThrowingContinuation { continuation in
            current = (id, ATExchange(command: command), continuation)
            do {
                try write(command + suffix)
                armTimeout(id: id, command: command, seconds: timeout)
            } catch {
                fail(id: id, error)
            }
        }
    }

    private func write(_ text: String) throws {
        do { try port.write(Array(text.utf8)) } catch { throw ATError.disconnected(error.description) }
    }

    private func waitForPrompt(id: Int, timeout: Double) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            promptWaiter = (id, continuation)
            after(timeout) { $0.promptTimedOut(id: id, seconds: timeout) }
        }
    }

    /// Replaces the current command's timer: `fire` runs `seconds` from now unless the command
    /// ends first (its timer is then cancelled).
    private func after(_ seconds: Double, _ fire: @escaping @Sendable (isolated ATSession) -> Void) {
        timer?.cancel()
        let deadline = clock.now() + seconds
        timer = Task { [clock] in
            do { try await clock.sleep(until: deadline) } catch { return }
            await self.fired(fire)
        }
    }

    private func fired(_ fire: @Sendable (isolated ATSession) -> Void) {
        guard !Task.isCancelled else { return }
        fire(self)
    }

    /// The command is over (answered, failed, timed out or the port lost): its timer goes with it.
    private func end() -> (id: Int, exchange: ATExchange, continuation: CheckedContinuation<[String], any Error>)? {
        let pending = current
        current = nil
        timer?.cancel()
        timer = nil
        return pending
    }

    private func promptTimedOut(id: Int, seconds: Double) {
        guard let waiter = promptWaiter, waiter.id == id else { return }
        promptWaiter = nil
        _ = try? port.write([0x1B])   // ESC: abandon the message on the modem's side
        waiter.continuation.resume(throwing: ATError.timeout(command: "prompt for the message", seconds: seconds))
    }

    private func armTimeout(id: Int, command: String, seconds: Double) {
        after(seconds) { $0.fail(id: id, ATError.timeout(command: command, seconds: seconds)) }
    }

    /// The query has its answer line: without a final result code within the grace period, the
    /// answer stands, and the next command waits for a late final to pass.
    private func armAnswerGrace(id: Int) {
        after(answerGrace) { session in
            guard let pending = session.current, pending.id == id, pending.exchange.hasQueryAnswer else { return }
            _ = session.end()
            session.quietUntil = session.clock.now() + session.strayFinalQuiet
            pending.continuation.resume(returning: pending.exchange.information)
        }
    }

    private func fail(id: Int, _ error: any Error) {
        guard let pending = current, pending.id == id else { return }
        _ = end()
        if let waiter = promptWaiter, waiter.id == id {
            promptWaiter = nil
            waiter.continuation.resume(throwing: error)
        }
        pending.continuation.resume(throwing: error)
    }

    private func received(_ bytes: [UInt8]) {
        for item in reader.feed(bytes) {
            if case .garbage(let count) = item { garbageBytes += count }
            if case .line(let line) = item {
                // Only a PDU (hex) is taken with the header: garbage after a `+CMT:` never swallows a
                // command's answer or final result code.
                if let header = directMessageHeader {
                    directMessageHeader = nil
                    if !line.isEmpty && line.allSatisfy(\.isHexDigit) {
                        onUnsolicited(header + "\n" + line)
                        continue
                    }
                    onUnsolicited(header)
                }
                if line.hasPrefix("+CMT:") {
                    directMessageHeader = line
                    continue
                }
            }
            guard var pending = current else {
                if case .line(let line) = item {
                    // A late OK/ERROR belongs to no command; NO CARRIER, BUSY… also announce calls.
                    switch ATFinal(line: line) {
                    case .ok, .error, .cmeError, .cmsError: break
                    case .other, nil: onUnsolicited(line)
                    }
                }
                continue
            }
            let outcome = pending.exchange.consume(item)
            current = pending
            switch outcome {
            case .unsolicited(let line): onUnsolicited(line)
            case .prompt:
                if let waiter = promptWaiter, waiter.id == pending.id {
                    promptWaiter = nil
                    waiter.continuation.resume()
                }
            case .finished(let final, let information):
                _ = end()
                if let waiter = promptWaiter, waiter.id == pending.id {
                    promptWaiter = nil
                    waiter.continuation.resume(throwing: ATError.failed(command: pending.exchange.command, final: final))
                    pending.continuation.resume(throwing: ATError.failed(command: pending.exchange.command, final: final))
                } else if final == .ok {
                    pending.continuation.resume(returning: information)
                } else {
                    pending.continuation.resume(throwing: ATError.failed(command: pending.exchange.command, final: final))
                }
            case .information:
                if pending.exchange.hasQueryAnswer { armAnswerGrace(id: pending.id) }
            case .pending, .echo:
                break
            }
        }
    }

    private func lost(_ reason: String) {
        gone = reason
        if let pending = end() {
            if let waiter = promptWaiter {
                promptWaiter = nil
                waiter.continuation.resume(throwing: ATError.disconnected(reason))
            }
            pending.continuation.resume(throwing: ATError.disconnected(reason))
        }
    }

    package func close() {
        port.close()
    }
}
