// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import Glibc
import SystemCalls
import GPIOLines
import Logging
import RideGuardAgent
import RideGuardCore
import SerialModem
import Storage
import Synchronization
import RideGuardConfig
import RideGuardDoctor
import DoctorHardware
import AgentControl
import RideGuardLog
import SystemTime

extension MessageLanguage: ExpressibleByArgument {}

struct Setup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "First-time setup over SSH: language, rider, contacts, message, a hardware check, a test SMS.",
        discussion: """
            Run it with sudo: it writes into the database (left owned by the service user). Every answer can be given as a flag instead; with \
            --no-input nothing is asked, for scripted installs.
            """)

    @OptionGroup var file: ConfigurationOption
    var config: String { file.config }

    @Option(help: "Language of the alerts: \(MessageLanguage.allCases.map(\.rawValue).joined(separator: ", ")).")
    var language: MessageLanguage?

    @Option(help: "The rider's name, as the alerts sign it.")
    var name: String?

    @Option(help: "A medical note for rescuers (blood group, allergies).")
    var medical: String?

    @Option(name: .customLong("contact"), help: "An emergency contact as NAME=NUMBER (repeat for several).")
    var contacts: [String] = []

    @Option(help: "The alert message, first in every alert.")
    var message: String?

    @Flag(help: "Ask nothing: take the answers from the flags (and what the database already holds).")
    var noInput = false

    @Flag(help: "Skip the button and buzzer check.")
    var skipHardware = false

    @Flag(help: "With --no-input: send the test SMS to the first contact.")
    var testSms = false

    @Option(help: "Seconds to wait for the test SMS to go out.")
    var smsTimeout: Double = 180

    @Option(help: "With --no-input: write the rescue card for the helmet (SVG) here.")
    var card: String?

    func validate() throws {
        for contact in contacts {
            guard let (_, number) = Self.split(contact) else {
                throw ValidationError("--contact \(contact): expected NAME=NUMBER, e.g. \"Sam=+33 6 12 34 56 78\"")
            }
            do { _ = try PhoneNumber(number) } catch { throw ValidationError("--contact \(contact): \(error.reason)") }
        }
        if let message {
            do { try MessageComposer.validateRiderMessage(message) } catch { throw ValidationError("--message: \(error.reason)") }
        }
        guard smsTimeout > 0 && smsTimeout <= 3600 else { throw ValidationError("--sms-timeout must be 1...3600 seconds") }
    }

    static func split(_ contact: String) -> (name: String, number: String)? {
        guard let equals = contact.firstIndex(of: "=") else { return nil }
        let name = contact[..<equals].trimmed()
        let number = contact[contact.index(after: equals)...].trimmed()
        return name.isEmpty || number.isEmpty ? nil : (name, number)
    }

    func run() async throws {
        var configuration = try file.loadRequired()
        let database: RideGuardDatabase
        do { database = try RideGuardDatabase(path: configuration.database) } catch {
            Output.error("cannot open the database \(configuration.database): \(error) (run setup with sudo)")
            throw ExitCode(2)
        }
        Output.line("RideGuard setup: \(config), \(configuration.database)")

        // 1. Language, the rider's (the configuration's messages.language until chosen): asked in
        // it, and every question after it in the one chosen.
        let spoken = try database.profile().language ?? configuration.messages.language
        var ask = Prompter(interactive: !noInput, text: ScreenText(spoken))
        let chosen = try language ?? ask.choice(ask.text(.setupLanguageQuestion), MessageLanguage.allCases.map(\.rawValue),
                                               default: spoken.rawValue).flatMap(MessageLanguage.init) ?? spoken
        try refusing { try database.setLanguage(chosen) }
        configuration.messages.language = chosen
        ask.text = ScreenText(chosen)
        let t = ask.text
        Output.line(t(.setupLanguageChosen, chosen.rawValue))

        // 2. The rider.
        let profile = try database.profile()
        let riderName = try name ?? ask.answer(t(.setupRiderName), default: profile.name) ?? profile.name
        let note = try medical ?? ask.answer(t(.setupMedicalNote), default: profile.medicalNote)
        try refusing {
            if let riderName { try database.setRiderName(riderName) }
            if let note { try database.setMedicalNote(note == "-" ? "" : note) }
        }

        // 3. Contacts.
        for contact in contacts {
            let (contactName, number) = Self.split(contact)!
            try addContact(contactName, number, to: database, language: chosen, t)
        }
        if ask.interactive && contacts.isEmpty {
            let existing = try database.contacts()
            if !existing.isEmpty { Output.line(t(.setupContacts, existing.map { "\($0.name) \($0.number)" }.joined(separator: ", "))) }
            while true {
                let have = try database.contacts().count
                guard let contactName = try ask.answer(t(have == 0 ? .setupContactName : .setupAnotherContact), default: nil) else {
                    if have > 0 { break }
                    Output.line(t(.setupNeedsAContact))
                    continue
                }
                while true {
                    guard let number = try ask.answer(t(.setupNumber, contactName), default: nil) else { continue }
                    do {
                        let added = try database.addContact(name: contactName, number: number, now: Date().timeIntervalSince1970)
                        Output.line(t(.setupAdded, added.name, added.number))
                        try database.askContact(added.number, language: chosen, now: Date().timeIntervalSince1970)
                        Output.line(t(.setupAsked))
                        break
                    } catch let error as RecordError {
                        Output.line("✗ " + error.said(t))
                    }
                }
            }
        }
        guard try !database.contacts().isEmpty else {
            Output.error(t(.setupNoContact))
            throw ExitCode(1)
        }

        // 4. The alert message.
        let current = try database.profile().message
        var text = message
        while text == nil {
            guard ask.interactive else { break }
            let answer = try ask.answer(t(.setupAlertMessage), default: current ?? MessageComposer.suggestedMessage(chosen))
            do {
                try MessageComposer.validateRiderMessage(answer ?? "")
                text = answer
            } catch {
                Output.line("✗ " + t(.messageTooShort))
            }
        }
        if let text { try refusing { try database.setMessage(text) } }
        guard try database.profile().message != nil else {
            Output.error(t(.setupNoMessage))
            throw ExitCode(1)
        }

        // 5. Button and buzzer.
        if ask.interactive && !skipHardware {
            try checkHardware(configuration, ask)
        }

        // 6. A test SMS to the first contact.
        let first = try database.contacts()[0]
        let sendTest = ask.interactive
            ? try ask.yes(t(.setupSendTest, first.forLogs), default: false)
            : testSms
        if sendTest {
            let body = MessageComposer.test(riderName: try database.profile().name ?? t(.setupRider), language: chosen)
            try await sendTestSMS(body, to: first, configuration, database, t)
        }

        // 7. The rescue card for the helmet.
        let cardPath: String? = ask.interactive
            ? try ask.yes(t(.setupWriteCard), default: true)
                ? try ask.answer(t(.setupCardFile), default: "rescue-card.svg") : nil
            : card
        if let cardPath {
            let rescueCard = try Card.card(database, language: chosen)
            try Card.write(rescueCard, try Card.qr(rescueCard), to: cardPath)
        }

        Output.line(t(.setupDone, String(try database.contacts().count), chosen.rawValue))
        Output.line(t(.setupNext, config))
    }

    func addContact(_ name: String, _ number: String, to database: RideGuardDatabase, language: MessageLanguage, _ t: ScreenText) throws {
        if try database.contacts().contains(where: { (try? PhoneNumber(number))?.e164 == $0.number }) {
            Output.line(t(.setupAlreadyAContact, name))
            return
        }
        let added = try refusing { try database.addContact(name: name, number: number, now: Date().timeIntervalSince1970) }
        Output.line(t(.setupAdded, added.name, added.number))
        try refusing { try database.askContact(added.number, language: language, now: Date().timeIntervalSince1970) }
        Output.line(t(.setupAsked))
    }

    // MARK: - Hardware

    func checkHardware(_ configuration: AgentConfiguration, _ ask: Prompter) throws {
        let t = ask.text
        if case .running = ControlClient.agentStatus(configuration.controlSocket) {
            Output.line(t(.setupHardwareSkipped))
            return
        }
        if configuration.gpio.simulated {
            _ = try ask.answer(t(.setupPressSimulated), default: "")
            Output.line(t(.setupButtonPressed))
            Output.line(t(.setupBuzzerSimulated))
        } else {
            let pressed = waitForPress(configuration.gpio, seconds: 20, t)
            switch pressed {
            case .success(true): Output.line(t(.setupButtonPressed))
            case .success(false): Output.line(t(.setupNoPress, "20", configuration.gpio.button))
            case .failure(let error): Output.line(t(.setupButtonFailed, configuration.gpio.button, "\(error)"))
            }
            beep(configuration.gpio.buzzer)
        }
        if try !ask.yes(t(.setupHeardBuzzer), default: true) {
            Output.line(t(.setupCheckBuzzer, configuration.gpio.buzzer))
        }
        // The IMU, as doctor reads it: where none is found, which chip answers on the I²C bus,
        // whether this kernel has its driver, and the config.txt line or the module it needs.
        let imu = LocalHardware().imu(configuration.imu)
        Output.line(t(.setupIMU, "\(imu.outcome.rawValue) \(imu.detail)"))
        if let fix = imu.fix, imu.outcome != .ok { Output.line(t(.setupIMUFix, fix)) }
    }

    func waitForPress(_ gpio: AgentConfiguration.GPIO, seconds: Double, _ t: ScreenText) -> Result<Bool, GPIOError> {
        Output.line(t(.setupPressNow, String(Int(seconds))))
        Output.flush()
        let seen = Mutex<Result<Bool, GPIOError>?>(nil)
        let address = GPIOLineAddress(gpio.button)
        let watcher = ButtonWatcher(open: { () throws(GPIOError) -> GPIOLine in
            try GPIOLine.input(address, consumer: "rideguard-setup", activeLow: gpio.buttonActiveLow)
        }, onEdge: { edge in
            if edge.pressed { seen.withLock { $0 = $0 ?? .success(true) } }
        }, onEvent: { event in
            if case .failed(let error, _) = event { seen.withLock { $0 = $0 ?? .failure(error) } }
        })
        defer { watcher.stop() }
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, seen.withLock({ $0 }) == nil {
            usleep(50_000)
        }
        return seen.withLock { $0 } ?? .success(false)
    }

    func beep(_ buzzer: String) {
        do {
            let line = try GPIOLine.output(GPIOLineAddress(buzzer), consumer: "rideguard-setup")
            for _ in 0..<3 {
                try line.set(true)
                usleep(200_000)
                try line.set(false)
                usleep(200_000)
            }
        } catch {
            Output.line("✗ buzzer \(buzzer): \(error)")
        }
    }

    // MARK: - Test SMS

    /// Through the outbox, like every message: the running agent sends it if there is one,
    /// otherwise setup brings the modem up itself.
    func sendTestSMS(_ body: String, to contact: Contact, _ configuration: AgentConfiguration, _ database: RideGuardDatabase,
                     _ t: ScreenText) async throws {
        let who = contact.forLogs
        if configuration.modem.simulated {
            Output.line(t(.setupSMSSimulated, who) + "\n" + body)
            return
        }
        let clock = SystemServiceClock()
        let queued = try database.outbox.enqueue(recipient: contact.number, kind: .test, body: body, now: clock.now())
        let deadline = clock.now() + smsTimeout
        if case .running = ControlClient.agentStatus(configuration.controlSocket) {
            Output.line(t(.setupTestHanded))
            while clock.now() < deadline, let status = try database.outbox.message(queued.id!)?.status, status == .pending || status == .sending {
                try await Task.sleep(for: .milliseconds(500))
            }
        } else {
            Output.line(t(.setupSendingTest, who, configuration.modem.device))
            Output.flush()
            let modem = Modem(configuration: ModemConfiguration(configuration.modem), clock: clock, logger: .silent)
            let sender = OutboxSender(outbox: database.outbox, modem: modem, clock: clock, logger: .silent)
            _ = try await sender.flush(until: deadline)
            await modem.close()
        }
        let final = try database.outbox.message(queued.id!)
        switch final?.status {
        case .sent:
            Output.line(t(.setupTestSent, who))
        case .failed:
            Output.line(t(.setupTestNotSent, final?.lastError ?? t(.setupNoAnswer)))
        default:
            // Not sent in time: it must not go out later, out of the blue.
            _ = try? database.outbox.cancelPending(kind: .test, now: clock.now())
            Output.line(t(.setupTestNotSentIn, String(Int(smsTimeout)), final?.lastError ?? t(.setupNoAnswer)))
        }
    }
}

/// Questions on the terminal, with a default in brackets taken on an empty answer, and the refusals
/// of a wrong answer in the rider's language.
struct Prompter {
    var interactive: Bool
    var text: ScreenText

    struct NoAnswer: Error {}

    /// French puts a space before a colon.
    var colon: String { text.language == .fr ? " :" : ":" }

    func read(_ question: String) throws -> String {
        Output.line(question, terminator: " ")
        Output.flush()
        guard let line = readLine() else {
            Output.line("")
            Output.error("no answer (standard input closed): use --no-input and flags for a scripted install")
            throw ExitCode(1)
        }
        return line.trimmed()
    }

    /// The answer, the default on an empty answer, or nil when neither. Not interactive: the default.
    func answer(_ question: String, default value: String?) throws -> String? {
        guard interactive else { return value }
        let answer = try read(question + (value.map { value in value.isEmpty ? colon : " [\(value)]" + colon } ?? colon))
        return answer.isEmpty ? value : answer
    }

    func choice(_ question: String, _ options: [String], default value: String) throws -> String? {
        guard interactive else { return value }
        while true {
            let answer = try read("\(question) (\(options.joined(separator: "/"))) [\(value)]" + colon).lowercased()
            if answer.isEmpty { return value }
            if options.contains(answer) { return answer }
            Output.line(text(.setupNotOneOf, answer, options.joined(separator: ", ")))
        }
    }

    func yes(_ question: String, default value: Bool) throws -> Bool {
        guard interactive else { return value }
        while true {
            let answer = try read(question + text(value ? .setupYesByDefault : .setupNoByDefault)).lowercased()
            if answer.isEmpty { return value }
            if ["y", "yes", "o", "oui", "j", "ja", "s", "si", "sí", "sì"].contains(answer) { return true }
            if ["n", "no", "non", "nein"].contains(answer) { return false }
            Output.line(text(.setupAnswerYesOrNo))
        }
    }
}
