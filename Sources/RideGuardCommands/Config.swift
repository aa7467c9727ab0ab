// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import Glibc
import RideGuardAgent
import RideGuardCore
import RideGuardConfig

struct Config: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check the configuration file, or print an example.", subcommands: [Check.self, Example.self])

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Validate the configuration: every problem with its line and key.")

        @OptionGroup var file: ConfigurationOption
        var config: String { file.config }

        func run() throws {
            do {
                let c = try ConfigurationFile.load(path: config)
                Output.line("\(config): ok")
                Output.line("imu: \(c.imu.simulated ? "simulated (\(c.imu.trace ?? ""))" : "\(c.imu.uri) \(c.imu.device ?? "auto") at \(Int(c.imu.rateHz)) Hz")")
                Output.line("gpio: \(c.gpio.simulated ? "simulated" : "buzzer \(c.gpio.buzzer), button \(c.gpio.button)")")
                Output.line("gps: \(c.gps.simulated ? "simulated" : "gpsd at \(c.gps.gpsd)")")
                Output.line("modem: \(c.modem.simulated ? "simulated" : "\(c.modem.device) at \(c.modem.baud) baud")")
                Output.line("countdown: \(Int(c.workflow.countdownSeconds)) s; messages: \(c.messages.language.rawValue), \(c.messages.mapLink.rawValue) links")
                Output.line("database: \(c.database)")
                if let text = try? String(contentsOfFile: config, encoding: .utf8) {
                    for note in ConfigurationFile.notes(text, source: config) { Output.line("note: \(note)") }
                }
            } catch {
                Output.error(error.description)
                throw ExitCode(1)
            }
        }
    }

    struct Example: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a complete, commented configuration with every default.")

        func run() {
            Output.line(ConfigurationFile.example, terminator: "")
        }
    }
}

/// `--config`, the one declaration of it. The agent (`run`), `doctor` and `config check` need the
/// file (`loadRequired`); the commands whose defaults (database, control socket) come from it take
/// a missing file as every default (`load`); a broken file is an error for all.
struct ConfigurationOption: ParsableArguments {
    @Option(help: "The configuration file.")
    var config = ConfigurationFile.defaultPath

    func load() throws -> AgentConfiguration {
        guard FileManager.default.fileExists(atPath: config) else { return AgentConfiguration() }
        return try loadRequired()
    }

    func loadRequired() throws -> AgentConfiguration {
        do {
            return try ConfigurationFile.load(path: config)
        } catch {
            Output.error(error.description)
            throw ExitCode(1)
        }
    }
}
