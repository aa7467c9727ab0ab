import ArgumentParser

@main
struct RideGuard: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rideguard",
        abstract: "Crash detection for motorbikes: detect a fall, count down, alert the rider's contacts.",
        subcommands: [Replay.self, Synth.self, Eval.self, Location.self]
    )
}
