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
        subcommands: [Run.self, Demo.self, Status.self, Ctl.self, Config.self, Contacts.self, Message.self, Profile.self, Events.self, Card.self, Setup.self, DoctorCommand.self, Replay.self, Record.self, Synth.self, Eval.self, Location.self, SMS.self, ModemCommand.self, Fleet.self, Web.self]
    )
}

extension RideGuard {
    /// The program: logging set up once, for every command, before the command line is parsed.
    package static func start() async {
        AgentLogHandler.bootstrap()
        await main()
    }
}
