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
    static let configuration = CommandConfiguration(abstract: "Drive a running agent (simulated hardware).", subcommands: [Press.self])

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
