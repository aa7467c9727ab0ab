import ArgumentParser
import Foundation
import RideGuardAgent
import RideGuardCore

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
        let answer: String
        do { answer = try ControlClient.request(#"{"cmd":"status"}"#, path: try control.path) } catch {
            Output.error("\(error)")
            throw ExitCode(2)
        }
        if json {
            print(answer)
            return
        }
        guard let status = (try? JSONSerialization.jsonObject(with: Data(answer.utf8))) as? [String: Any] else {
            print(answer)
            return
        }
        let sensor = status["sensor"] as? [String: Any] ?? [:]
        let blind = ((sensor["last_sample_age_s"] as? Double) ?? .infinity) > 1
        print("state: \(status["state"] ?? "?")" + ((status["countdown_s"] as? Double).map { " (\(Int($0)) s left)" } ?? "")
              + (blind && status["state"] as? String == "armed" ? ", but the IMU sends no sample: crashes cannot be detected" : ""))
        print("sensor: \(sensor["rate_hz"] ?? 0) Hz, last sample \(sensor["last_sample_age_s"] ?? "?") s ago"
              + ((sensor["gravity_g"] as? Double).map { ", \($0) g" } ?? "") + ((sensor["last_fault"] as? String).map { ", last fault: \($0)" } ?? ""))
        if let problem = (status["gpio"] as? [String: Any])?["problem"] as? String { print("gpio: \(problem)") }
        if let fix = status["fix"] as? [String: Any] {
            print("position: \(fix["lat"] ?? ""), \(fix["lon"] ?? ""), \(fix["age_s"] ?? "?") s old")
        } else {
            print("position: no fix yet")
        }
        if let modem = status["modem"] as? [String: Any] {
            print("modem: \((modem["connected"] as? Bool) == true ? "connected" : "not connected"), network \(modem["registration"] ?? "unknown")"
                  + ((modem["signal_dbm"] as? Int).map { ", \($0) dBm" } ?? "") + ((modem["problem"] as? String).map { " (\($0))" } ?? ""))
        } else {
            print("modem: \(status["modem"] ?? "?")")
        }
        print("outbox: \(status["pending_messages"] ?? 0) pending; contacts: \(status["contacts"] ?? 0)")
    }
}

struct Ctl: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Drive a running agent: the simulated button, recordings.",
                                                    subcommands: [Press.self, RecordIMU.self])

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
            var request = JSONLine()
            request.add("cmd", "record")
            if stop { request.add("stop", true) } else {
                request.add("name", name ?? "")
                request.add("seconds", duration, decimals: 1)
            }
            let answer: String
            do { answer = try ControlClient.request(request.text, path: try control.path) } catch {
                Output.error("\(error)")
                throw ExitCode(2)
            }
            let reply = (try? JSONSerialization.jsonObject(with: Data(answer.utf8))) as? [String: Any] ?? [:]
            if let error = reply["error"] as? String {
                Output.error(error)
                throw ExitCode(1)
            }
            print(stop ? "recording saved: \(reply["path"] ?? "")" : "recording \(Int(duration)) s to \(reply["path"] ?? "") (rideguard ctl record --stop ends it sooner)")
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
            let answer: String
            do { answer = try ControlClient.request(#"{"cmd":"press","hold":\#(hold)}"#, path: try control.path) } catch {
                Output.error("\(error)")
                throw ExitCode(2)
            }
            if answer.contains("\"error\"") {
                Output.error(answer)
                throw ExitCode(1)
            }
            print("pressed for \(DecimalFormat.string(hold, decimals: 1)) s")
        }
    }
}
