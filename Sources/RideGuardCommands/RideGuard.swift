// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import RideGuardAgent
import RideGuardLog

package struct RideGuard: AsyncParsableCommand {
    /// The release: `rideguard --version`, and the version `make deb` gives the package.
    static let version = "0.2.0"

    package init() {}

    package static let configuration = CommandConfiguration(
        commandName: "rideguard",
        abstract: "Crash detection for motorbikes: detect a fall, count down, alert the rider's contacts.",
        version: version,
        subcommands: [Run.self, Demo.self, Status.self, Ctl.self, Config.self, Contacts.self, Message.self, Profile.self, Events.self, Card.self, Setup.self, DoctorCommand.self, SelfTestCommand.self, Replay.self, Record.self, Synth.self, Eval.self, Location.self, SMS.self, ModemCommand.self, Fleet.self, Web.self]
    )
}

extension RideGuard {
    /// The program: logging set up once, for every command, before the command line is parsed.
    package static func start() async {
        AgentLogHandler.bootstrap()
        await main()
    }
}

extension RideGuard {
    /// Runs a command line in this process, as `rideguard` would, its output kept in `capture`:
    /// the exit status (argument-parser's, a thrown `ExitCode`'s, 0 after success). Commands that
    /// run for long or are async (`run`, `demo`, `doctor`, `setup`, `sms`, `modem`) are the
    /// program's to run: they are refused here.
    package static func run(arguments: [String], capture: OutputCapture) -> Int32 {
        Output.$capture.withValue(capture) {
            do {
                var command = try parseAsRoot(arguments)
                guard !(command is AsyncParsableCommand) else {
                    Output.error("\(arguments.first ?? ""): runs in the program only")
                    return 2
                }
                try command.run()
                return 0
            } catch {
                let code = exitCode(for: error).rawValue
                let message = fullMessage(for: error)
                if !message.isEmpty { capture.add(message + "\n", error: code != 0) }
                return code
            }
        }
    }
}
