import ArgumentParser

@main
struct RideGuard: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rideguard",
        abstract: "Crash detection for motorbikes: detect a fall, count down, alert the rider's contacts.",
        subcommands: [Run.self, Demo.self, Status.self, Ctl.self, Config.self, Contacts.self, Message.self, Profile.self, Events.self, Setup.self, DoctorCommand.self, Replay.self, Record.self, Synth.self, Eval.self, Location.self, SMS.self, ModemCommand.self]
    )
}
