// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import Glibc
import SystemCalls
import RideGuardAgent
import RideGuardCore
import AgentControl
import SystemTime

/// `--socket`, shared by the commands that talk to a running agent; by default the configuration's.
struct SocketOption: ParsableArguments {
    @Option(help: "The agent's control socket (default: the configuration's `control_socket`).")
    var socket: String?

    @OptionGroup var configuration: ConfigurationOption

    var path: String {
        get throws { try socket ?? configuration.load().controlSocket }
    }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "What the running agent is doing: state, sensor, fix, modem, outbox.")

    @OptionGroup var control: SocketOption
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        let path = try control.path
        let reply: ControlReply
        do { reply = try ControlClient.send(.status, path: path) } catch {
            Output.error("\(error)")
            throw ExitCode(2)
        }
        guard let status = reply.status else {
            Output.error("control socket \(path): \(reply.error ?? "the agent sent no status")")
            throw ExitCode(2)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            Output.line(String(decoding: try encoder.encode(reply), as: UTF8.self))
            return
        }
        let d = { (value: Double, decimals: Int) in DecimalFormat.string(value, decimals: decimals) }
        let sensor = status.sensor
        if let protection = status.protection { Output.line(protection.summary.prefix(1).uppercased() + protection.summary.dropFirst()) }
        Output.line("state: \(status.state.rawValue)" + (status.countdownSeconds.map { " (\(Int($0)) s left)" } ?? ""))
        Output.line("sensor: \(d(sensor.rateHz, 1)) Hz, last sample " + (sensor.lastSampleAgeSeconds.map { "\(d($0, 2)) s ago" } ?? "never")
              + (sensor.gravityG.map { ", \(d($0, 2)) g" } ?? "") + (sensor.lastFault.map { ", last fault: \($0)" } ?? "")
              + ((sensor.rejectedSamples ?? 0) > 0 ? ", \(sensor.rejectedSamples!) non-physical samples dropped" : ""))
        if let device = sensor.device { Output.line("IMU: \(device)" + (sensor.readMode.map { ", \($0)" } ?? "")) }
        if let problem = status.gpio.problem { Output.line("gpio: \(problem)") }
        if let problem = status.storageProblem { Output.line("storage: \(problem)") }
        if let bike = status.bike {
            Output.line("bike: \(bike.context)" + (bike.ignition.map { ", ignition \($0)" } ?? "")
                  + (bike.underVoltage == true ? ", supply UNDER-VOLTAGE (the Pi's 5 V input sagged)" : ""))
            if let fall = bike.lastParkedFall {
                let time = Times.localHourMinute(fall)
                Output.line("parked bike fell over at \(time) (nobody riding: no countdown; the rider's phone was texted)")
            }
        }
        if let fix = status.fix {
            Output.line("position: \(d(fix.latitude, 6)), \(d(fix.longitude, 6)), \(d(fix.ageSeconds, 1)) s old")
        } else {
            Output.line("position: no fix yet")
        }
        let modem = status.modem
        if modem.real {
            if let problem = modem.simProblem {
                // The SIM lets no alert leave: what is wrong, and what to do.
                let (what, advice) = SIMState.parts(of: problem)
                Output.line("modem: SIM \(modem.sim ?? "?"): \(what): no alert can be sent" + (advice.isEmpty ? "" : "; \(advice)"))
            } else {
                Output.line("modem: \(modem.connected ? "connected" : "not connected")" + (modem.sim.map { ", SIM \($0)" } ?? "")
                      + ", network \(modem.registration ?? "unknown")"
                      + (modem.signalDBm.map { ", \($0) dBm" } ?? "") + (modem.problem.map { " (\($0))" } ?? ""))
            }
        } else {
            Output.line("modem: simulated")
        }
        if modem.voice == false { Output.line("voice calls: the modem cannot make them (the contacts get SMS only)") }
        for limitation in modem.limitations ?? [] { Output.line("modem without \(limitation)") }
        if let calls = status.calls { Output.line("calls: \(calls)") }
        if let acknowledgement = status.acknowledgement {
            let time = Times.localHourMinute(acknowledgement.time)
            Output.line("acknowledged: by \(acknowledgement.who), \(acknowledgement.channel.how) at \(time)")
        }
        Output.line("outbox: \(status.pendingMessages) pending; contacts: \(status.contacts)")
        for contact in status.contactLines ?? [] {
            Output.line("contact \(DisplayText.neutralised(contact.name, lineBreaks: false)): \(contact.summary)")
        }
        if let fleet = status.fleet {
            let since = fleet.since.map { " since \(Times.localHourMinute($0))" } ?? ""
            Output.line("mqtt: \(fleet.device) on \(fleet.broker), " + (fleet.connected ? "connected\(since)" : "NOT connected\(since) (no IP link, or the broker is away: SMS alerts are not affected)")
                  + (fleet.backlog > 0 ? ", \(fleet.backlog) event(s) waiting" : "") + (fleet.problem.map { "; \($0)" } ?? ""))
            for member in fleet.group ?? [] {
                Output.line("riding group: \(member.device) NEEDS HELP since \(Times.localHourMinute(member.since))" + (member.place.map { ", \($0)" } ?? ""))
            }
        }
    }
}

extension SocketOption {
    /// Asks the running agent: exit 2 when it cannot be reached, 1 with its reason when it refuses.
    func ask(_ request: ControlRequest, refusal prefix: String = "") throws -> ControlReply {
        let reply: ControlReply
        do { reply = try ControlClient.send(request, path: try path) } catch {
            Output.error("\(error)")
            throw ExitCode(2)
        }
        if let error = reply.error {
            Output.error(prefix + error)
            throw ExitCode(1)
        }
        return reply
    }
}

/// The SMS path proven now: the running agent sends the rider's own phone its report.
struct SelfTestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "selftest",
        abstract: "Send the self-test SMS to the rider's own phone now (the agent sends one every messages.self_test_days).",
        discussion: "Refused during an emergency, while one waits to be sent, or within a day of the last. `rideguard doctor` shows whether it went out.")
    @OptionGroup var control: SocketOption

    func run() throws {
        let reply = try control.ask(.selfTest, refusal: "self-test: ")
        Output.line("self-test: " + (reply.said ?? "queued"))
    }
}

struct Ctl: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Drive a running agent: the simulated button, recordings, the buzzer's check.",
                                                    subcommands: [Press.self, RecordIMU.self, Buzz.self])

    /// The buzzer's check (the phone's "sound the buzzer"): three short beeps; refused during an emergency.
    struct Buzz: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Sound the buzzer's check pattern (three short beeps); not during an emergency.")
        @OptionGroup var control: SocketOption

        func run() throws {
            _ = try control.ask(.buzz)
            Output.line("buzzer: three short beeps")
        }
    }

    /// The agent records while it protects: a test ride does not have to be an unprotected one.
    struct RecordIMU: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "record",
            abstract: "Have the running agent record the IMU (and GPS speed) to a trace while it goes on protecting.",
            discussion: "The trace goes to the recordings folder next to the database, e.g. /var/lib/rideguard/recordings/NAME.csv.")

        @Option(help: "The recording's name: letters, digits, '-', '_', '.'.") var name: String?
        @Option(help: "How long, seconds (up to 7200).") var duration: Double = 600
        @Flag(help: "Stop the running recording now.") var stop = false
        @OptionGroup var control: SocketOption

        func validate() throws {
            guard stop || name != nil else { throw ValidationError("give --name (or --stop)") }
        }

        func run() throws {
            let reply = try control.ask(stop ? .stopRecording : .record(name: name ?? "", seconds: duration))
            Output.line(stop ? "recording saved: \(reply.path ?? "")" : "recording \(Int(duration)) s to \(reply.path ?? "") (rideguard ctl record --stop ends it sooner)")
        }
    }

    struct Press: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Press the simulated button: --hold 1.5 says \"I'm fine\" during a countdown.")
        @Option(help: "How long to hold it, seconds.") var hold: Double = 0.3
        @OptionGroup var control: SocketOption

        func validate() throws {
            guard hold > 0 && hold <= 30 else { throw ValidationError("--hold must be above 0 and at most 30 s") }
        }

        func run() throws {
            _ = try control.ask(.press(hold: hold))
            Output.line("pressed for \(DecimalFormat.string(hold, decimals: 1)) s")
        }
    }
}
