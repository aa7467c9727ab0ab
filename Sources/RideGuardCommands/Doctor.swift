// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import Glibc
import RideGuardAgent
import RideGuardCore
import RideGuardDoctor
import DoctorHardware

struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check the installation in boot order: configuration, database, IMU, GPIO, gpsd, modem, contacts.",
        discussion: """
            Keep the bike still while it runs (the IMU must read about 1 g at rest). Each line is ✓ (works), \
            ! (works, degraded) or ✗ (the agent cannot protect the rider), with what to do.
            Exit code 0 when the agent can protect the rider, 1 when something must be fixed.
            """)

    @OptionGroup var file: ConfigurationOption

    @Option(help: "Seconds to wait for a GPS fix.")
    var gpsWait: Double = 5

    @Option(help: "Seconds to wait for the modem to answer and register.")
    var modemWait: Double = 30

    @Flag(help: "Print JSON Lines, one per check.")
    var json = false

    func validate() throws {
        guard gpsWait >= 0 && gpsWait <= 600 else { throw ValidationError("--gps-wait must be 0...600 seconds") }
        guard modemWait >= 1 && modemWait <= 600 else { throw ValidationError("--modem-wait must be 1...600 seconds") }
    }

    func run() async throws {
        var doctor = Doctor(configurationPath: file.config, hardware: LocalHardware())
        doctor.fixWait = gpsWait
        doctor.modemWait = modemWait
        let json = self.json
        // The checks are reported from the doctor's own threads: the lines go where this task's go.
        let capture = Output.capture
        let canProtect = await doctor.run { check in Output.$capture.withValue(capture) {
            if json {
                var line = JSONLine()
                line.add("part", check.part)
                line.add("outcome", ["✓": "ok", "!": "warning", "✗": "failed"][check.outcome.rawValue] ?? "")
                line.add("detail", check.detail)
                if let fix = check.fix { line.add("fix", fix) }
                Output.line(line.text)
            } else {
                Output.line("\(check.outcome.rawValue) \(check.part): \(check.detail)")
                if let fix = check.fix, check.outcome != .ok { Output.line("    → \(fix)") }
            }
            Output.flush()
        } }
        if !json {
            Output.line(canProtect ? "RideGuard can protect the rider." : "RideGuard cannot protect the rider yet: fix each ✗ above.")
        }
        if !canProtect { throw ExitCode(1) }
    }
}
