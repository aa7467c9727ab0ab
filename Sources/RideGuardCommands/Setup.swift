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
import RideGuardDoctor
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
        let ask = Prompter(interactive: !noInput)
        Output.line("RideGuard setup: \(config), \(configuration.database)")

        // 1. Language, the rider's (the configuration's messages.language until chosen).
        let spoken = try database.profile().language ?? configuration.messages.language
        let chosen = try language ?? ask.choice("Language of the alerts", MessageLanguage.allCases.map(\.rawValue),
                                               default: spoken.rawValue).flatMap(MessageLanguage.init) ?? spoken
        try refusing { try database.setLanguage(chosen) }
        configuration.messages.language = chosen
        Output.line("language: \(chosen.rawValue)")

        // 2. The rider.
        let profile = try database.profile()
        let riderName = try name ?? ask.text("Rider's name, as the alerts sign it", default: profile.name) ?? profile.name
        let note = try medical ?? ask.text("Medical note for rescuers, e.g. blood group, allergies (- for none)", default: profile.medicalNote)
        try refusing {
            if let riderName { try database.setRiderName(riderName) }
            if let note { try database.setMedicalNote(note == "-" ? "" : note) }
        }

        // 3. Contacts.
        for contact in contacts {
            let (contactName, number) = Self.split(contact)!
            try addContact(contactName, number, to: database, language: chosen)
        }
        if ask.interactive && contacts.isEmpty {
            let existing = try database.contacts()
            if !existing.isEmpty { Output.line("contacts: " + existing.map { "\($0.name) \($0.number)" }.joined(separator: ", ")) }
            while true {
                let have = try database.contacts().count
                let prompt = have == 0 ? "Emergency contact's name" : "Another contact's name (empty when done)"
                guard let contactName = try ask.text(prompt, default: nil) else {
                    if have > 0 { break }
                    Output.line("RideGuard needs at least one contact to alert.")
                    continue
                }
                while true {
                    guard let number = try ask.text("\(contactName)'s mobile number, with its country code (+33 6 12 34 56 78)", default: nil) else { continue }
                    do {
                        let added = try database.addContact(name: contactName, number: number, now: Date().timeIntervalSince1970)
                        Output.line("added \(added.name) \(added.number)")
                        try database.askContact(added.number, language: chosen, now: Date().timeIntervalSince1970)
                        Output.line(Contacts.asked)
                        break
                    } catch let error as RecordError {
                        Output.line("✗ \(error.reason)")
                    }
                }
            }
        }
        guard try !database.contacts().isEmpty else {
            Output.error("no emergency contact: give --contact NAME=NUMBER")
            throw ExitCode(1)
        }

        // 4. The alert message.
        let current = try database.profile().message
        var text = message
        while text == nil {
            guard ask.interactive else { break }
            let answer = try ask.text("Alert message, first in every alert", default: current ?? MessageComposer.suggestedMessage(chosen))
            do {
                try MessageComposer.validateRiderMessage(answer ?? "")
                text = answer
            } catch {
                Output.line("✗ \(error.reason)")
            }
        }
        if let text { try refusing { try database.setMessage(text) } }
        guard try database.profile().message != nil else {
            Output.error("no alert message: give --message \"...\"")
            throw ExitCode(1)
        }

        // 5. Button and buzzer.
        if ask.interactive && !skipHardware {
            try checkHardware(configuration, ask)
        }

        // 6. A test SMS to the first contact.
        let first = try database.contacts()[0]
        let sendTest = ask.interactive
            ? try ask.yes("Send a test SMS to \(first.forLogs)?", default: false)
            : testSms
        if sendTest {
            let body = MessageComposer.test(riderName: try database.profile().name ?? "the rider", language: chosen)
            try await sendTestSMS(body, to: first, configuration, database)
        }

        // 7. The rescue card for the helmet.
        let cardPath: String? = ask.interactive
            ? try ask.yes("Write a rescue card for the helmet (name, medical note, contacts, QR code)?", default: true)
                ? try ask.text("Card file", default: "rescue-card.svg") : nil
            : card
        if let cardPath {
            let rescueCard = try Card.card(database, language: chosen)
            try Card.write(rescueCard, try Card.qr(rescueCard), to: cardPath)
        }

        Output.line("""
            setup done: \(try database.contacts().count) contact(s), message set, alerts in \(chosen.rawValue).
            next: rideguard doctor --config \(config)    (checks every part; keep the bike still)
                  sudo systemctl enable --now rideguard   (a running agent arms by itself within 10 s)
            """)
    }

    func addContact(_ name: String, _ number: String, to database: RideGuardDatabase, language: MessageLanguage) throws {
        if try database.contacts().contains(where: { (try? PhoneNumber(number))?.e164 == $0.number }) {
            Output.line("\(name) is already a contact")
            return
        }
        let added = try refusing { try database.addContact(name: name, number: number, now: Date().timeIntervalSince1970) }
        Output.line("added \(added.name) \(added.number)")
        try refusing { try database.askContact(added.number, language: language, now: Date().timeIntervalSince1970) }
        Output.line(Contacts.asked)
    }

    // MARK: - Hardware

    func checkHardware(_ configuration: AgentConfiguration, _ ask: Prompter) throws {
        if case .running = Doctor.agentStatus(configuration.controlSocket) {
            Output.line("hardware check skipped: the running agent holds the button and the buzzer (sudo systemctl stop rideguard, then setup again)")
            return
        }
        if configuration.gpio.simulated {
            _ = try ask.text("Press the button now (simulated GPIO: press Enter)", default: "")
            Output.line("✓ button pressed")
            Output.line("buzzer: beep beep beep (simulated)")
        } else {
            let pressed = waitForPress(configuration.gpio, seconds: 20)
            switch pressed {
            case .success(true): Output.line("✓ button pressed")
            case .success(false): Output.line("✗ no press in 20 s: the button goes between \(configuration.gpio.button) and ground")
            case .failure(let error): Output.line("✗ button \(configuration.gpio.button): \(error)")
            }
            beep(configuration.gpio.buzzer)
        }
        if try !ask.yes("Did you hear the buzzer?", default: true) {
            Output.line("✗ check the buzzer: its + to 5 V, its − to the transistor's collector, the emitter to ground, the base to \(configuration.gpio.buzzer) through 1 kΩ (boards/wiring.md)")
        }
    }

    func waitForPress(_ gpio: AgentConfiguration.GPIO, seconds: Double) -> Result<Bool, GPIOError> {
        Output.line("Press the button now (\(Int(seconds)) s)…")
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
    func sendTestSMS(_ body: String, to contact: Contact, _ configuration: AgentConfiguration, _ database: RideGuardDatabase) async throws {
        let who = contact.forLogs
        if configuration.modem.simulated {
            Output.line("SMS to \(who) (simulated modem):\n\(body)")
            return
        }
        let clock = SystemServiceClock()
        let queued = try database.outbox.enqueue(recipient: contact.number, kind: .test, body: body, now: clock.now())
        let deadline = clock.now() + smsTimeout
        if case .running = Doctor.agentStatus(configuration.controlSocket) {
            Output.line("test SMS handed to the running agent…")
            while clock.now() < deadline, let status = try database.outbox.message(queued.id!)?.status, status == .pending || status == .sending {
                try await Task.sleep(for: .milliseconds(500))
            }
        } else {
            Output.line("sending the test SMS to \(who) through \(configuration.modem.device)…")
            Output.flush()
            let modem = Modem(configuration: ModemConfiguration(configuration.modem), clock: clock, logger: .silent)
            let sender = OutboxSender(outbox: database.outbox, modem: modem, clock: clock, logger: .silent)
            _ = try await sender.flush(until: deadline)
            await modem.close()
        }
        let final = try database.outbox.message(queued.id!)
        switch final?.status {
        case .sent:
            Output.line("✓ test SMS sent to \(who): ask them whether it arrived")
        case .failed:
            Output.line("✗ test SMS not sent: \(final?.lastError ?? "unknown reason") (rideguard doctor checks the modem)")
        default:
            // Not sent in time: it must not go out later, out of the blue.
            _ = try? database.outbox.cancelPending(kind: .test, now: clock.now())
            Output.line("✗ test SMS not sent in \(Int(smsTimeout)) s: \(final?.lastError ?? "no answer") (rideguard doctor checks the modem)")
        }
    }
}

/// Questions on the terminal, with a default in brackets taken on an empty answer.
struct Prompter {
    var interactive: Bool

    struct NoAnswer: Error {}

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
    func text(_ question: String, default value: String?) throws -> String? {
        guard interactive else { return value }
        let answer = try read(question + (value.map { value in value.isEmpty ? ":" : " [\(value)]:" } ?? ":"))
        return answer.isEmpty ? value : answer
    }

    func choice(_ question: String, _ options: [String], default value: String) throws -> String? {
        guard interactive else { return value }
        while true {
            let answer = try read("\(question) (\(options.joined(separator: "/"))) [\(value)]:").lowercased()
            if answer.isEmpty { return value }
            if options.contains(answer) { return answer }
            Output.line("✗ '\(answer)' is not one of \(options.joined(separator: ", "))")
        }
    }

    func yes(_ question: String, default value: Bool) throws -> Bool {
        guard interactive else { return value }
        while true {
            let answer = try read(question + (value ? " [Y/n]:" : " [y/N]:")).lowercased()
            if answer.isEmpty { return value }
            if ["y", "yes", "o", "oui", "j", "ja", "s", "si", "sí"].contains(answer) { return true }
            if ["n", "no", "non", "nein"].contains(answer) { return false }
            Output.line("✗ answer y or n")
        }
    }
}
