// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import RideGuardAgent
import RideGuardCore
import Storage
import Synchronization

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Protect the rider: the agent, from boot to shutdown (SIGTERM or Ctrl-C stops it gracefully).")

    @OptionGroup var file: ConfigurationOption

    func run() async throws {
        let configuration = try file.loadRequired()
        StartupMemory.release()   // the command line and the configuration's parser are done with
        let logger = Logger(label: "rideguard")
        // Stopped (SIGTERM, Ctrl-C) while the database cannot be opened: exits at once.
        let stop = Atomic<Bool>(false)
        let signals = [SIGTERM, SIGINT].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler { stop.store(true, ordering: .releasing) }
            source.resume()
            return source
        }
        let opened = await Agent.openDatabase(configuration, logger: logger) { stop.load(ordering: .acquiring) }
        for source in signals { source.cancel() }
        guard let database = opened else { throw ExitCode(0) }
        let agent: Agent
        do { agent = try Agent(configuration: configuration, database: database, logger: logger) } catch {
            Output.error("cannot start: \(error)")
            throw ExitCode(2)
        }
        await agent.run(stopOnSignals: true)
    }
}

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The agent on simulated hardware: a recorded crash, the countdown, the SMS, the calls, the follow-up. Under a minute.")

    @Flag(help: "Press \"I'm fine\" during the countdown: nothing is sent.")
    var cancel = false

    @Option(help: "The crash trace to play (default: the repository's, else the installed one).")
    var trace = ["Tests/Fixtures/example-lowside.csv", "/usr/share/rideguard/example-lowside.csv"]
        .first { FileManager.default.fileExists(atPath: $0) } ?? "Tests/Fixtures/example-lowside.csv"

    @Option(help: "Play the trace this many times faster than real time.")
    var speed = 2.0

    func validate() throws {
        guard FileManager.default.fileExists(atPath: trace) else {
            throw ValidationError("no trace at \(trace): run the demo from the repository, or give --trace")
        }
    }

    func run() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rideguard-demo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var configuration = AgentConfiguration()
        configuration.database = folder.appendingPathComponent("rideguard.sqlite").path
        configuration.imu.simulated = true
        configuration.imu.trace = trace
        configuration.imu.speed = speed
        configuration.gpio.simulated = true
        configuration.gps.simulated = true
        configuration.gps.fixedPosition = [45.76420, 4.83566]
        configuration.modem.simulated = true
        configuration.workflow.countdownSeconds = 10
        // Shorter than a configuration file allows, so that the follow-up fits in the demo.
        configuration.workflow.locationUpdateIntervalSeconds = 5
        configuration.workflow.trackingDurationSeconds = 11
        // A call round that fits too: Sam's phone rings 4 s (a simulation answers no call), the
        // next round 6 s after the first began, until tracking ends.
        configuration.calls.ringSeconds = 4
        configuration.calls.intervalSeconds = 6
        let database = try RideGuardDatabase(path: configuration.database)
        try database.addContact(name: "Sam", number: "+33 6 12 34 56 78", now: Date().timeIntervalSince1970)
        // Sam knows (the demo has no phone to answer the SMS that asks).
        try database.confirmContactByHand("Sam", now: Date().timeIntervalSince1970)
        try database.setRiderName("Alex")
        try database.setMessage("This is Alex's RideGuard: I may have crashed. Please call me, and if I don't answer, call 112.")

        let console = Logger(label: "rideguard")
        console.info("demo: contact Sam (+33•••••5678), countdown 10 s, trace \(trace) at ×\(DecimalFormat.string(speed, decimals: 1))\(cancel ? ", the rider will say \"I'm fine\"" : "")")
        let agent = try Agent(configuration: configuration, logger: console)
        let running = Task { await agent.run() }
        let deadline = Date().addingTimeInterval(90)
        var pressed = false
        var countdownSeen: Date?
        while Date() < deadline {
            try await Task.sleep(for: .milliseconds(200))
            let state = await agent.state
            if state == .alertCountdown && countdownSeen == nil { countdownSeen = Date() }
            if cancel, !pressed, let seen = countdownSeen, Date().timeIntervalSince(seen) > 3 {
                pressed = true
                console.info("the rider holds the button for 1.5 s")
                await agent.press(hold: 1.5)
            }
            if state == .emergencyEnded { break }
            if cancel && pressed && state == .armed {
                try await Task.sleep(for: .seconds(1))
                break
            }
        }
        agent.stop()
        await running.value
        let sent = try database.outbox.all().filter { $0.status == .sent }
        console.info("demo over: \(sent.count) SMS sent (\(sent.map(\.kind.rawValue).joined(separator: ", ")))")
    }
}
