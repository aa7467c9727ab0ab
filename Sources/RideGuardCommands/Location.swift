// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import Glibc
import SystemCalls
import GPSDClient
import RideGuardCore
import Synchronization
import SystemTime

struct Location: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the current GPS fix from gpsd, or say that there is none yet.",
        discussion: "Exit code 0 with a fix, 1 when gpsd answers but has no fix yet, 2 when gpsd cannot be reached."
    )

    @Option(help: "gpsd's address.")
    var gpsd = "127.0.0.1:2947"

    @Flag(help: "Print JSON: lat, lon, time, speed_mps, track_deg, accuracy_m, age_s.")
    var json = false

    @Option(help: "Wait this many seconds for a fix.")
    var wait: Double = 5

    func validate() throws {
        guard GPSDAddress(gpsd) != nil else { throw ValidationError("--gpsd must be HOST:PORT, e.g. 127.0.0.1:2947") }
        guard wait >= 0 && wait <= 3600 else { throw ValidationError("--wait must be 0...3600 seconds") }
    }

    func run() throws {
        let address = GPSDAddress(gpsd)!          // validated
        let result = GPSDWatcher.probe(host: address.host, port: String(address.port), seconds: wait)
        guard let fix = result.fix else {
            if !result.connected {
                Output.error("cannot reach gpsd at \(gpsd): \(result.problem ?? "no answer")")
                throw ExitCode(2)
            }
            Output.error("no GPS fix yet from gpsd at \(gpsd) (waited \(DecimalFormat.string(wait, decimals: 0)) s): check the antenna's view of the sky")
            throw ExitCode(1)
        }
        let age = max(0, Date().timeIntervalSince1970 - fix.time)
        if json {
            var line = JSONLine()
            line.add("lat", fix.latitude, decimals: 7)
            line.add("lon", fix.longitude, decimals: 7)
            line.add("time", Times.iso8601(fix.time))
            line.add("speed_mps", fix.speed ?? .nan, decimals: 2)
            line.add("track_deg", fix.track ?? .nan, decimals: 1)
            line.add("accuracy_m", fix.accuracy ?? .nan, decimals: 1)
            line.add("age_s", age, decimals: 1)
            Output.line(line.text)
        } else {
            var text = "\(DecimalFormat.string(fix.latitude, decimals: 6)), \(DecimalFormat.string(fix.longitude, decimals: 6))"
            if let accuracy = fix.accuracy { text += " ±\(Int(accuracy.rounded())) m" }
            text += ", \(Int(age.rounded())) s old"
            if let speed = fix.speed { text += ", \(Int((speed * 3.6).rounded())) km/h" }
            if let track = fix.track { text += " heading \(Int(track.rounded()))°" }
            Output.line(text)
            Output.line(MapLinkStyle.google.link(fix))
        }
    }
}
