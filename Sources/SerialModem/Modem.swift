// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import Logging
import RideGuardCore
import Synchronization

package struct ModemConfiguration: Codable, Equatable, Sendable {
    package var device: String
    package var baud = 115_200
    /// Entered when the SIM asks for it and it can be right: never a PIN the SIM refused before
    /// (`PINRefusals`), never with fewer than two attempts left (three wrong PINs lock the SIM).
    package var pin: String?
    /// How long a send waits for network registration, seconds.
    package var registrationTimeout = 60.0
    /// How long the network may take to accept one part (SIM800 manual: up to 60 s), seconds.
    package var sendTimeout = 120.0

    package init(device: String, baud: Int = 115_200, pin: String? = nil) {
        self.device = device
        self.baud = baud
        self.pin = pin
    }

    /// As the configuration file's `modem:` section says.
    package init(_ settings: AgentConfiguration.Modem) {
        self.init(device: settings.device, baud: settings.baud, pin: settings.pin)
    }
}

/// A cellular modem over AT commands: opened on demand, brought up, reopened after it disappears.
/// One operation at a time: a health check never runs between the commands of a send.
package actor Modem: SMSTransport, VoiceCaller {
    package let configuration: ModemConfiguration
    private let clock: any ServiceClock
    private let logger: Logger
    private var session: ATSession?
    /// Where a PIN the SIM refused is remembered across restarts (the agent's database), and in
    /// this process whatever that store does.
    private let pinRefusals: (any PINRefusals)?
    private let refusedHere = RefusedPINsInMemory()
    private var nextReference: UInt8 = UInt8.random(in: 0...255)
    package private(set) var health = ModemHealth()
    private var busy = false
    private var waitingTurns: [CheckedContinuation<Void, Never>] = []
    /// The call in progress, if one is.
    private var callProgress: CallProgress?

    /// `logger` hears what the modem says unprompted (numbers masked) and when it is reopened.
    /// Handles each SMS received (SMS-DELIVER, one part at a time, in the store's order); once it
    /// returns true (the part is kept where a restart finds it, or its message is complete), the
    /// message is deleted from the SIM; false leaves it there to be read again. nil: received
    /// messages are left alone (the one-off commands: `sms send`, `doctor`).
    private let onMessage: (@Sendable (SMSPDU.Decoded) async -> Bool)?
    /// Storages with a read queued: a +CMTI for one of them queues nothing more (a flood of notices
    /// is one read, not a task each: 1000 a second grew memory from 24 to 62 MB).
    private let readsQueued = QueuedReads()
    /// Unsolicited lines logged: the same kind at most 3 times in 10 s, then a count.
    private let unsolicitedLog = RepeatedLines(perWindow: 3, windowSeconds: 10)

    /// `pinRefusals`: where a refused PIN is remembered across restarts; nil: for this process only.
    package init(configuration: ModemConfiguration, clock: any ServiceClock, logger: Logger,
                pinRefusals: (any PINRefusals)? = nil,
                onMessage: (@Sendable (SMSPDU.Decoded) async -> Bool)? = nil) {
        self.configuration = configuration
        self.pinRefusals = pinRefusals
        self.clock = clock
        var logger = logger
        logger[metadataKey: "modem"] = "\(configuration.device)"
        self.logger = logger
        self.onMessage = onMessage
    }

    /// Waits for the other operation, if any, to end; `endTurn()` hands the modem to the next.
    private func takeTurn() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waitingTurns.append($0) }   // handed over with `busy` still set
    }

    private func endTurn() {
        if waitingTurns.isEmpty { busy = false } else { waitingTurns.removeFirst().resume() }
    }

    /// Connects and brings the modem up if needed, then refreshes and returns its health.
    package func checkHealth() async -> ModemHealth {
        await takeTurn()
        defer { endTurn() }
        do {
            let session = try await connected()
            if let line = try? await session.run("AT+CSQ").first { health.signalDBm = ATParse.signal(line) }
            await refreshRegistration(session)
            health.problem = nil
            // Without new-SMS notices, a contact's OK is read here, every minute.
            if reads && !announcesNewMessages { Task { await self.readMessages() } }
        } catch {
            health.problem = "\(error)"
        }
        return health
    }

    /// The health as the last command left it, without asking the modem.
    package var lastHealth: ModemHealth { health }

    /// Sends `text` to `number`; returns the references of its parts. Throws `SendError`.
    package func send(_ text: String, to number: String) async throws(SendError) -> [Int] {
        await takeTurn()
        defer { endTurn() }
        let session: ATSession
        do { session = try await connected() } catch {
            // A SIM that is missing or locked holds the message until it is ready: never given up.
            throw SendError(permanent: false, reason: error.reason, acceptedParts: 0, cause: nil)
        }
        let deadline = clock.now() + configuration.registrationTimeout
        while true {
            await refreshRegistration(session)
            if health.registered { break }
            if clock.now() > deadline || health.registration == .denied {
                throw SendError(permanent: false, reason: health.simProblem ?? "not registered on a network (\(health.registration ?? .unknown))",
                                acceptedParts: 0)
            }
            try? await clock.sleep(until: clock.now() + 2)
        }
        nextReference &+= 1
        let parts = SMSPDU.encode(text, to: number, reference: nextReference)
        var references: [Int] = []
        for part in parts {
            do {
                references.append(try await session.submit(part, timeout: configuration.sendTimeout))
            } catch let error as ATError {
                switch error {
                case .failed(_, let final):
                    let failure = SendFailure.classify(final, report: await extendedReport(session))
                    throw SendError(permanent: failure.permanent, reason: failure.reason, acceptedParts: references.count, cause: failure.cause)
                case .disconnected, .timeout, .busy:
                    drop(session, because: error.description)
                    throw SendError(permanent: false, reason: error.description, acceptedParts: references.count)
                }
            } catch {
                throw SendError(permanent: false, reason: "\(error)", acceptedParts: references.count)
            }
        }
        return references
    }

    /// The modem's own words for the last failure (AT+CEER, 27.007 §6.10), one line of printable
    /// text at most 120 characters; nil where it has none worth telling ("No error", numbers only
    /// such as "0,0", or no answer).
    private func extendedReport(_ session: ATSession) async -> String? {
        guard let line = try? await session.run("AT+CEER", timeout: 3).first(where: { $0.hasPrefix("+CEER:") }) else { return nil }
        let kept = String(line.dropFirst("+CEER:".count).filter { $0.isASCII && $0 != "\"" && ($0 == " " || $0.isLetter || $0.isNumber || $0.isPunctuation) })
        let text = String(kept.trimmingSpaces().prefix(120))
        let lower = text.lowercased()
        let empty = ["no error", "normal, unspecified", "no cause information available"]
        guard text.contains(where: { $0.isLetter }), !empty.contains(where: { lower.hasPrefix($0) }) else { return nil }
        return text
    }

    package func close() async {
        if let session { await session.close() }
        session = nil
        health.connected = false
    }

    // MARK: - Connection and bring-up

    struct BringUpError: Error, CustomStringConvertible {
        var reason: String
        /// The SIM is the trouble (missing, locked, refused), not the modem.
        var simFault = false
        var description: String { reason }
    }

    private func drop(_ session: ATSession, because reason: String) {
        logger.info("modem: \(reason); reopening on the next attempt")
        Task { await session.close() }
        if self.session === session { self.session = nil }
        health.connected = false
    }

    private func connected() async throws(BringUpError) -> ATSession {
        if let session, await session.isConnected { return session }
        if let session { await session.close() }
        session = nil
        health.connected = false
        let port: SerialPort
        do {
            port = try SerialPort(device: configuration.device, baud: configuration.baud)
        } catch {
            throw BringUpError(reason: error.description)
        }
        let logger = self.logger
        // Unsolicited lines can carry numbers (a contact calling back: +CLIP, an SMS: +CMT).
        let reading = onMessage != nil
        let clock = self.clock, unsolicitedLog = self.unsolicitedLog, readsQueued = self.readsQueued
        let session = ATSession(port: port, clock: clock) { [weak self] line in
            let kind = String(line.prefix { $0 != ":" }.prefix(16))
            switch unsolicitedLog.admit(kind, at: clock.now()) {
            case .log(let heldBack):
                let more = heldBack > 0 ? " (and \(heldBack) more '\(kind)' lines in the last 10 s)" : ""
                // The first line only: a +CMT's PDU carries the sender's number.
                logger.info("modem says: \(PhoneNumber.maskNumbers(in: String(line.prefix { $0 != "\n" })))\(more)")
            case .heldBack:
                break
            }
            if ATFinal.callProgress.contains(line) || ATParse.callEvent(line) != nil, let self { Task { await self.callSaid(line) } }
            // A message delivered directly (+CMT, when a modem's +CNMI ends up there): handled as
            // it comes; it was never stored, so there is nothing to delete.
            if reading, let pdu = ATParse.directMessage(line), let self {
                if let decoded = SMSPDU.decode(pdu), decoded.kind == .deliver {
                    Task { _ = await self.onMessage?(decoded) }
                } else {
                    logger.warning("modem: a message delivered directly (+CMT) is not an SMS-DELIVER PDU we read")
                }
            }
            // A new message stored (+CMTI: "SM",3): read that storage when the modem is free.
            if reading, let stored = ATParse.newMessage(line), let self,
               readsQueued.queue(stored.storage) {
                Task { await self.readMessages(from: stored.storage) }
            }
        }
        await session.start()
        do {
            try await bringUp(session)
        } catch let error as BringUpError {
            await session.close()
            health.problem = error.reason
            throw error
        } catch {
            await session.close()
            health.problem = "bring-up failed: \(error)"
            throw BringUpError(reason: "bring-up failed: \(error)")
        }
        self.session = session
        health.connected = true
        health.problem = nil
        // Messages that came while nobody listened (the agent stopped, the modem unplugged).
        if reading { Task { await self.readMessages() } }
        return session
    }

    /// Reads every stored message (`AT+CMGL=4`, PDU mode), has each SMS-DELIVER handled, then
    /// deletes it (`AT+CMGD`) so the SIM never fills up. Handled before it is deleted: a crash in
    /// between reads it again rather than losing it. A PDU that does not decode is deleted too,
    /// and said.
    /// `storage`: the one a +CMTI named, read from instead when it is not the current one.
    func readMessages(from storage: String? = nil) async {
        guard let onMessage else { return }
        await takeTurn()
        defer { endTurn() }
        // From here, a new notice queues another read: what it announces may come after this list.
        if let storage { readsQueued.started(storage) }
        guard let session, await session.isConnected else { return }
        if let storage, storage != health.messageStorage {
            guard (try? await session.run("AT+CPMS=\"\(storage)\"")) != nil else {
                logger.warning("modem: a new message is in storage \(storage), which the modem will not read from (AT+CPMS)")
                return
            }
            health.messageStorage = storage
        }
        guard let lines = try? await session.run("AT+CMGL=4", timeout: 10) else { return }
        var index: Int?
        for line in lines {
            if line.hasPrefix("+CMGL:") {
                index = Int(line.dropFirst(6).prefix { $0 != "," }.trimmed())
                continue
            }
            guard let stored = index else { continue }
            index = nil
            if let decoded = SMSPDU.decode(line), decoded.kind == .deliver {
                guard await onMessage(decoded) else { continue }      // kept on the SIM: read again next time
            } else {
                logger.warning("modem: message \(stored) on the SIM is not an SMS-DELIVER PDU we read; deleting it")
            }
            _ = try? await session.run("AT+CMGD=\(stored)")
        }
    }

    // MARK: - Voice calls

    /// Whether the modem can make voice calls: nil until brought up.
    package var canCall: Bool? { health.voice }

    /// Rings `number` for at most `ringSeconds` and hangs up: once it is answered, when it rang
    /// out, or when the calling task is cancelled. The call's progress is `CallProgress`'s to
    /// decide; this runs it over AT. Each command takes its own turn of the modem, so a send
    /// waiting for it goes between two of them: a call never holds the port while a message
    /// waits, only for the one command in flight. A task cancelled while it waited for its turn
    /// never dials.
    package func call(_ number: String, ringSeconds: Double) async -> CallReport {
        var port = PortTime()
        func ended(_ outcome: CallReport.Outcome) -> CallReport {
            callProgress = nil
            return CallReport(outcome, portSeconds: port.seconds, commands: port.commands)
        }
        guard !Task.isCancelled else { return ended(.stopped) }

        await takeTurn()
        // Stopped while waiting for the modem (a contact's OK read just before): never dialled.
        guard !Task.isCancelled else {
            endTurn()
            return ended(.stopped)
        }
        let session: ATSession
        do { session = try await connected() } catch {
            endTurn()
            return ended(.failed(error.reason))
        }
        guard health.voice != false else {
            endTurn()
            return ended(.noVoice)
        }
        var start = clock.now()
        await refreshRegistration(session)
        port.add(since: start, until: clock.now(), commands: 2)
        guard health.registered else {
            endTurn()
            return ended(.failed("not registered on a network (\(health.registration ?? .unknown))"))
        }
        callProgress = CallProgress(ringSeconds: ringSeconds)
        // With +COLP on, some modems answer a voice dial only once it is picked up: off, OK comes at once.
        start = clock.now()
        _ = try? await session.run("AT+COLP=0")
        let dialled: Result<Void, ATError>
        do {
            try await session.run("ATD\(number);", timeout: 10)
            dialled = .success(())
        } catch let error as ATError {
            dialled = .failure(error)
        } catch {
            dialled = .failure(.disconnected("\(error)"))
        }
        port.add(since: start, until: clock.now(), commands: 2)
        endTurn()
        switch dialled {
        case .success: break
        case .failure(.failed(_, let final)) where final.isCallProgress:
            return ended(CallProgress.refused("\(final)"))
        case .failure(.failed(_, .cmeError(4))), .failure(.failed(_, .other("COMMAND NOT SUPPORT"))):
            health.voice = false   // "operation not supported": a data-only modem
            return ended(.noVoice)
        case .failure(.disconnected(let reason)):
            drop(session, because: reason)
            return ended(.failed("ATD: modem disconnected: \(reason)"))
        case .failure(let error):
            // A dial that timed out may still be ringing on the modem's side.
            if case .timeout = error { await hangUp(session, &port) }
            return ended(.failed("ATD: \(error)"))
        }

        callProgress?.dialled(at: clock.now())
        while let progress = callProgress {
            do { try await clock.sleep(until: progress.nextLook(after: clock.now())) } catch {
                await hangUp(session, &port)
                return ended(.stopped)
            }
            var decision = progress.woke(at: clock.now())     // the deadline: set at the dial
            if decision == .look {
                await takeTurn()
                start = clock.now()
                let lines = try? await session.run("AT+CLCC")
                port.add(since: start, until: clock.now())
                endTurn()
                decision = callProgress?.listed(lines.map { $0.compactMap(ATParse.call) }) ?? .wait
            }
            switch decision {
            case .look, .wait: continue
            case .ended(let outcome): return ended(outcome)
            case .hangUp(let outcome):
                await hangUp(session, &port)
                return ended(outcome)
            }
        }
        return ended(.stopped)
    }

    /// What the modem said unprompted of the call in progress, if one is.
    private func callSaid(_ line: String) {
        if ATFinal.callProgress.contains(line) { callProgress?.said(line) }
        if let event = ATParse.callEvent(line) { callProgress?.said(event) }
    }

    /// `AT+CHUP` (27.007), or V.250's `ATH` on modems without it. Never cancelled half-way.
    private func hangUp(_ session: ATSession, _ port: inout PortTime) async {
        await takeTurn()
        defer { endTurn() }
        // In a task of its own: the calling task may be cancelled, and the hang-up must go out all the same.
        let start = clock.now()
        let hungUp = await Task { (try? await session.run("AT+CHUP", timeout: 10)) != nil }.value
        if !hungUp { _ = await Task { try? await session.run("ATH", timeout: 10) }.value }
        port.add(since: start, until: clock.now(), commands: hungUp ? 1 : 2)
    }

    /// One step of bringing a modem up, as ModemManager's AT sequences are: what it does, whether
    /// the modem is of no use without it, and what is done instead when an optional one fails
    /// (said in the log and in `status`, never swallowed).
    struct BringUpStep: Sendable {
        var name: String
        var required: Bool
        /// What the agent does without it.
        var fallback: String
        var run: @Sendable (Modem, ATSession) async throws -> Void
    }

    /// In order; a required step that fails fails the bring-up (tried again at the next use).
    static let bringUpSteps: [BringUpStep] = [
        BringUpStep(name: "ATE0 (no echo)", required: true, fallback: "") { _, session in try await session.run("ATE0") },
        BringUpStep(name: "AT+CMEE=1 (numbered errors)", required: false,
                    fallback: "errors come as a bare ERROR: a refused number cannot be told from a passing fault, so it is retried") { _, session in
            try await session.run("AT+CMEE=1")
        },
        BringUpStep(name: "the SIM unlocked (AT+CPIN)", required: true, fallback: "") { modem, session in try await modem.unlockSIM(session) },
        BringUpStep(name: "AT+CMGF=0 (PDU mode)", required: true, fallback: "") { _, session in try await session.run("AT+CMGF=0") },
        // New messages announced by index (+CMTI), buffered while a command runs (mode 2).
        BringUpStep(name: "AT+CNMI=2,1,0,0,0 (new SMS announced)", required: false,
                    fallback: "received SMS are read at each health check (every minute) instead of as they come") { modem, session in
            guard await modem.reads else { return }
            try await session.run("AT+CNMI=2,1,0,0,0")
            await modem.noteNewMessagesAnnounced()
        },
        BringUpStep(name: "AT+CPMS (where SMS are read)", required: false, fallback: "received SMS are read from the modem's own storage") { modem, session in
            try await modem.chooseMessageStorage(session)
        },
        BringUpStep(name: "AT+CSCA? (service centre)", required: false, fallback: "the SIM's own service centre is used, unread") { modem, session in
            guard let line = try await session.run("AT+CSCA?").first else { return }
            await modem.noteServiceCentre(ATParse.serviceCentre(line))
        },
        // Voice calls: a data-only modem answers ERROR or +CME ERROR to the list of calls. Not a
        // limitation of the bring-up: `voice` says it, and the contacts get SMS only.
        BringUpStep(name: "AT+CLCC=? (voice calls)", required: true, fallback: "") { modem, session in
            let voice = (try? await session.run("AT+CLCC=?")) != nil
            await modem.noteVoice(voice)
            // The call list reported as it changes, where the modem can (a short pick-up between two polls).
            if voice { _ = try? await session.run("AT+CLCC=1") }
        },
    ]

    private func bringUp(_ session: ATSession) async throws {
        // A modem that is still booting answers nothing for a few seconds.
        var awake = false
        for _ in 0..<5 where !awake {
            awake = (try? await session.run("AT", timeout: 2)) != nil
        }
        guard awake else { throw BringUpError(reason: "\(configuration.device): no answer to AT") }
        var without: [String] = []
        announcesNewMessages = false
        for step in Self.bringUpSteps {
            do {
                try await step.run(self, session)
            } catch let error as BringUpError {
                throw error
            } catch {
                if step.required { throw BringUpError(reason: "bring-up: \(step.name) failed: \(error)") }
                logger.warning("modem: \(step.name) failed (\(error)): \(step.fallback)")
                without.append("\(step.name): \(step.fallback)")
            }
        }
        health.limitations = without.isEmpty ? nil : without
    }

    private var reads: Bool { onMessage != nil }
    /// The modem says when an SMS arrives (+CMTI, as `AT+CNMI` asked): else the SIM is read at each health check.
    private var announcesNewMessages = false
    private func noteNewMessagesAnnounced() { announcesNewMessages = true }
    private func noteServiceCentre(_ centre: String?) { health.serviceCentre = centre }
    private func noteVoice(_ voice: Bool) { health.voice = voice }

    /// Received messages are read where the modem stores them: a modem whose preferred storages are
    /// "ME","ME","SM" (Cinterion) lists the phone's memory while new SMS land on the SIM, so <mem1>
    /// is set to <mem3> (`AT+CPMS="SM"`). A modem that answers neither keeps its own.
    private func chooseMessageStorage(_ session: ATSession) async throws {
        guard let line = try await session.run("AT+CPMS?").first(where: { $0.hasPrefix("+CPMS:") }),
              let storages = ATParse.messageStorages(line), storages.count == 3 else { return }
        if storages[0] != storages[2] {
            guard (try? await session.run("AT+CPMS=\"\(storages[2])\"")) != nil else {
                logger.warning("modem: new messages are stored in \(storages[2]) but read from \(storages[0]), and AT+CPMS cannot change it")
                health.messageStorage = storages[0]
                return
            }
        }
        health.messageStorage = storages[2]
    }

    /// Asks the SIM's state (`AT+CPIN?`), waiting while it starts, and enters the configured PIN
    /// only when it can be right (`PINDecision`). A SIM that is not ready fails the bring-up with
    /// what the rider does about it; the health check asks again, so a SIM inserted or unlocked
    /// while the agent runs is found.
    private func unlockSIM(_ session: ATSession) async throws {
        var sim = try await askSIM(session)
        if sim == .pin { sim = try await enterPIN(session) }
        health.sim = sim.name
        health.simFault = nil
        guard sim == .ready else {
            let problem = sim.problem(pin: pinDecision) ?? sim.name
            health.simFault = problem
            throw BringUpError(reason: problem, simFault: true)
        }
    }

    /// What enterPIN decided last, for the words of the SIM's problem.
    private var pinDecision: PINDecision?

    /// The SIM's state; a SIM still starting (`+CME ERROR: 14`, or no answer yet) is asked again
    /// for up to 10 s.
    private func askSIM(_ session: ATSession) async throws -> SIMState {
        var sim: SIMState?
        for attempt in 0..<10 {
            do {
                sim = try await session.run("AT+CPIN?", timeout: 5).compactMap { ATParse.simState($0).flatMap(SIMState.init(cpin:)) }.first
            } catch ATError.failed(_, .cmeError(let code)) {
                sim = SIMState(cmeError: code)
            } catch {
                sim = nil
            }
            if let sim, sim != .busy { return sim }
            if attempt < 9 { try await clock.sleep(until: clock.now() + 1) }
        }
        guard let sim else { throw BringUpError(reason: "the modem does not say the SIM's state (AT+CPIN? has no answer)") }
        return sim
    }

    /// Enters the configured PIN if it can be right, and returns the SIM's state after.
    private func enterPIN(_ session: ATSession) async throws -> SIMState {
        guard let pin = configuration.pin else {
            pinDecision = .noneConfigured
            return .pin
        }
        guard !refusedHere.wasRefused(pin), pinRefusals?.wasRefused(pin) != true else {
            pinDecision = .refusedBefore
            return .pin
        }
        guard let left = await attemptsLeft(session) else {
            pinDecision = .attemptsUnknown
            logger.warning("modem: the SIM wants its PIN, and the modem does not say how many attempts are left (\(PINAttempts.queries.joined(separator: ", "))): not entered")
            return .pin
        }
        guard left >= 2 else {
            pinDecision = .tooFewAttempts(left)
            logger.warning("modem: the SIM wants its PIN with \(left) attempt(s) left: not entered")
            return .pin
        }
        // Whatever the answer (an OK, +CME ERROR: 16, a timeout), the SIM's state after it decides.
        _ = try? await session.run("AT+CPIN=\"\(pin)\"", timeout: 10)
        var after = SIMState.busy
        for attempt in 0..<5 {
            after = (try? await askSIM(session)) ?? .busy
            if after != .busy { break }
            if attempt < 4 { try await clock.sleep(until: clock.now() + 1) }
        }
        if after == .pin || after == .puk {
            refusedHere.noteRefused(pin)
            do { try pinRefusals?.noteRefused(pin) } catch {
                logger.error("modem: the SIM refused the configured PIN, and that cannot be kept (\(error)): after a restart it may be entered once more, if the modem says two attempts are left")
            }
            let now = after == .puk ? 0 : await attemptsLeft(session)
            pinDecision = .refusedNow(attemptsLeft: now)
            logger.warning("modem: the SIM refused the configured PIN\(now.map { " (\($0) attempt(s) left)" } ?? ""); it will not be entered again until modem.pin changes")
        } else {
            pinDecision = nil
        }
        return after
    }

    /// The PIN attempts left, where the modem says (`PINAttempts.queries`, the first that answers).
    private func attemptsLeft(_ session: ATSession) async -> Int? {
        for query in PINAttempts.queries {
            if let lines = try? await session.run(query, timeout: 5), let left = lines.compactMap(PINAttempts.parse).first { return left }
        }
        return nil
    }

    private func refreshRegistration(_ session: ATSession) async {
        var best: Int?
        for command in ["AT+CREG?", "AT+CEREG?"] {
            guard let lines = try? await session.run(command) else { continue }
            if let status = lines.compactMap(ATParse.registration).first {
                // On LTE-only networks the CS registration stays at 0 while EPS says home.
                if best == nil || [1, 5, 6, 7].contains(status) { best = status }
            }
        }
        health.registration = best.map(Registration.init(status:)) ?? .unknown
    }
}

/// How long a call's commands held the AT port, and how many there were.
struct PortTime {
    private(set) var seconds = 0.0
    private(set) var commands = 0

    mutating func add(since start: Double, until end: Double, commands: Int = 1) {
        seconds += max(0, end - start)
        self.commands += commands
    }
}

/// Lets through the same kind of line a few times per window, then holds the rest back and says how
/// many when the next one is let through: a modem repeating a notice cannot fill the journal.
final class RepeatedLines: Sendable {
    enum Verdict: Equatable { case log(heldBack: Int), heldBack }

    private struct Window { var start: Double; var logged: Int; var heldBack: Int }
    private let windows = Mutex<[String: Window]>([:])
    private let perWindow: Int
    private let windowSeconds: Double

    init(perWindow: Int, windowSeconds: Double) {
        self.perWindow = perWindow
        self.windowSeconds = windowSeconds
    }

    func admit(_ kind: String, at now: Double) -> Verdict {
        windows.withLock { all in
            // Garbage on the line makes kinds without end: forget the ones whose window is over.
            if all[kind] == nil && all.count >= 64 { all = all.filter { now - $0.value.start < windowSeconds } }
            var window = all[kind] ?? Window(start: now, logged: 0, heldBack: 0)
            var held = 0
            if now - window.start >= windowSeconds {
                held = window.heldBack
                window = Window(start: now, logged: 0, heldBack: 0)
            }
            defer { all[kind] = window }
            guard window.logged < perWindow else {
                window.heldBack += 1
                return .heldBack
            }
            window.logged += 1
            return .log(heldBack: held)
        }
    }
}

/// The storages whose read is queued and not started yet.
final class QueuedReads: Sendable {
    private let storages = Mutex<Set<String>>([])

    /// True when no read of `storage` was queued yet: the caller queues one.
    func queue(_ storage: String) -> Bool { storages.withLock { $0.insert(storage).inserted } }

    func started(_ storage: String) { _ = storages.withLock { $0.remove(storage) } }
}
