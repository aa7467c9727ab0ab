// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import Glibc
import Logging
import RideGuardAgent
import RideGuardCore
import SerialModem
import Storage
import SystemCalls
import RideGuardLog
import SystemTime

/// The serial options shared by the modem commands.
struct ModemOptions: ParsableArguments {
    @Option(help: "The modem's AT port, e.g. /dev/rideguard-modem-at or /dev/ttyUSB2.")
    var device: String

    @Option(help: "Serial speed: \(SerialPort.supportedBauds.map(String.init).joined(separator: ", ")).")
    var baud = 115_200

    @Option(help: "The SIM's PIN, entered once if the SIM asks for it.")
    var pin: String?

    @Flag(help: "Show what the modem says.")
    var verbose = false

    func validate() throws {
        guard SerialPort.supportedBauds.contains(baud) else {
            throw ValidationError("--baud \(baud) is not a supported speed (\(SerialPort.supportedBauds.map(String.init).joined(separator: ", ")))")
        }
        if let pin, !(4...8).contains(pin.count) || !pin.allSatisfy(\.isNumber) {
            throw ValidationError("--pin must be 4 to 8 digits")
        }
    }

    func modem() -> Modem {
        Modem(configuration: ModemConfiguration(device: device, baud: baud, pin: pin), clock: SystemServiceClock(),
              logger: verbose ? AgentLogHandler.errorOutput() : .silent)
    }
}

struct SMS: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sms",
        abstract: "Send SMS through the modem, via the durable outbox.",
        subcommands: [Send.self, Flush.self]
    )

    struct Send: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send one message: written to the outbox first, then sent; exits 0 when every part was accepted.")

        @OptionGroup var modem: ModemOptions

        @Option(help: "The recipient, with its country code (+33 6 12 34 56 78).")
        var to: String

        @Option(help: "The text (GSM 7-bit when it can be, UCS2 otherwise; long texts go in several parts).")
        var text: String

        @OptionGroup var db: DatabaseOption

        @Option(help: "Give up after this many seconds (the message stays in the outbox, pending).")
        var timeout: Double = 300

        func validate() throws {
            do { _ = try PhoneNumber(to) } catch { throw ValidationError("--to: \(error.reason)") }
            guard !text.isEmpty else { throw ValidationError("--text is empty") }
        }

        func run() async throws {
            let number = try PhoneNumber(to)
            let clock = SystemServiceClock()
            let outbox = try db.open().outbox
            let message = try outbox.enqueue(recipient: number.e164, kind: .manual, body: text, now: clock.now())
            let sender = OutboxSender(outbox: outbox, modem: modem.modem(), clock: clock, logger: AgentLogHandler.errorOutput())
            _ = try await sender.flush(until: clock.now() + timeout)
            let final = try outbox.message(message.id!)!
            switch final.status {
            case .sent:
                Output.line("sent to \(number.masked): references \(final.references ?? "")")
            case .failed:
                Output.error("not sent to \(number.masked): \(final.lastError ?? "unknown reason")")
                throw ExitCode(1)
            case .pending, .sending:
                Output.error("not sent yet after \(Int(timeout)) s: \(final.lastError ?? "no answer"); it stays in the outbox (rideguard sms flush)")
                throw ExitCode(3)
            }
        }
    }

    struct Flush: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send everything pending in the outbox, including messages a crash interrupted.")

        @OptionGroup var modem: ModemOptions

        @OptionGroup var db: DatabaseOption

        @Option(help: "Give up after this many seconds.")
        var timeout: Double = 300

        func run() async throws {
            let clock = SystemServiceClock()
            let outbox = try db.open().outbox
            let sender = OutboxSender(outbox: outbox, modem: modem.modem(), clock: clock, logger: AgentLogHandler.errorOutput())
            let resumed = try await sender.resume()
            if resumed > 0 { Output.error("\(resumed) message(s) were interrupted mid-send: sending them again") }
            let left = try await sender.flush(until: clock.now() + timeout)
            let sent = try outbox.all().filter { $0.status == .sent }.count
            Output.line("outbox: \(sent) sent, \(left) still pending")
            if left > 0 { throw ExitCode(3) }
        }
    }
}

struct ModemCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "modem", abstract: "Check the modem.", subcommands: [Status.self])

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Bring the modem up and print its health.")

        @OptionGroup var modem: ModemOptions

        @Flag(help: "Print JSON.")
        var json = false

        func run() async throws {
            let modem = self.modem.modem()
            let health = await modem.checkHealth()
            await modem.close()
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                Output.line(String(decoding: try encoder.encode(health), as: UTF8.self))
            } else {
                Output.line("connected: \(health.connected ? "yes" : "no")")
                Output.line("SIM: \(health.sim ?? "unknown")")
                Output.line("signal: \(health.signalDBm.map { "\($0) dBm" } ?? "unknown")")
                Output.line("network: \(health.registration ?? .unknown)")
                Output.line("SMS centre: \(health.serviceCentre.map(PhoneNumber.mask) ?? "unknown")")
                Output.line("voice calls: \(health.voice.map { $0 ? "yes" : "no (the contacts get SMS only)" } ?? "unknown")")
                Output.line("SMS storage read: \(health.messageStorage ?? "unknown")")
                if let problem = health.problem { Output.line("problem: \(problem)") }
            }
            if !health.connected || health.problem != nil { throw ExitCode(1) }
        }
    }
}
