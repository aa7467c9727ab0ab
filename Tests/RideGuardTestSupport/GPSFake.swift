// SPDX-License-Identifier: Apache-2.0
import Foundation
import GPSDClient

/// NMEA 0183 sentences written by our own code for gpsfake: a rider moving in a straight line, or a
/// receiver without a fix.
package enum NMEALog {
    /// `seconds` of GGA + RMC at 1 Hz from (lat, lon) heading `course`° at `speed` m/s, starting now.
    package static func movingRider(latitude: Double, longitude: Double, speed: Double, course: Double, seconds: Int) -> String {
        var lines = ["# rideguard test log: a rider at \(speed) m/s heading \(course)°"]
        let start = Date()
        for i in 0..<seconds {
            let distance = speed * Double(i)
            let lat = latitude + distance * cos(course * .pi / 180) / 111_320
            let lon = longitude + distance * sin(course * .pi / 180) / (111_320 * cos(latitude * .pi / 180))
            let time = start.addingTimeInterval(Double(i))
            lines.append(sentence("GPGGA,\(hms(time)),\(coordinate(lat, degreesWidth: 2)),\(lat >= 0 ? "N" : "S"),\(coordinate(lon, degreesWidth: 3)),\(lon >= 0 ? "E" : "W"),1,09,0.9,120.0,M,47.0,M,,"))
            lines.append(sentence("GPRMC,\(hms(time)),A,\(coordinate(lat, degreesWidth: 2)),\(lat >= 0 ? "N" : "S"),\(coordinate(lon, degreesWidth: 3)),\(lon >= 0 ? "E" : "W"),\(String(format: "%.1f", speed / 0.514444)),\(String(format: "%.1f", course)),\(dmy(time)),,,A"))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// A rider at `speed` m/s for `before` fixes, then stopped dead (0 m/s) for `after` fixes: what
    /// GPS shows of a collision.
    package static func stoppedDead(latitude: Double, longitude: Double, speed: Double, before: Int, after: Int) -> String {
        let moving = movingRider(latitude: latitude, longitude: longitude, speed: speed, course: 0, seconds: before)
        let stopped = movingRider(latitude: latitude + speed * Double(before) / 111_320, longitude: longitude, speed: 0, course: 0, seconds: after)
        return moving + stopped.split(separator: "\r\n").dropFirst().joined(separator: "\r\n") + "\r\n"
    }

    /// A receiver that reports the time but no fix (antenna covered).
    package static func noFix(seconds: Int) -> String {
        var lines = ["# rideguard test log: no fix"]
        let start = Date()
        for i in 0..<seconds {
            let time = start.addingTimeInterval(Double(i))
            lines.append(sentence("GPGGA,\(hms(time)),,,,,0,00,99.9,,M,,M,,"))
            lines.append(sentence("GPRMC,\(hms(time)),V,,,,,,,\(dmy(time)),,,N"))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    package static func sentence(_ body: String) -> String {
        let checksum = body.utf8.reduce(UInt8(0)) { $0 ^ $1 }
        return "$" + body + "*" + String(format: "%02X", checksum)
    }

    package static func coordinate(_ value: Double, degreesWidth: Int) -> String {
        let a = abs(value)
        let degrees = Int(a)
        let minutes = (a - Double(degrees)) * 60
        return String(format: "%0\(degreesWidth)d%07.4f", degrees, minutes)
    }

    package static func hms(_ date: Date) -> String {
        let c = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: date)
        return String(format: "%02d%02d%02d.00", c.hour!, c.minute!, c.second!)
    }

    package static func dmy(_ date: Date) -> String {
        let c = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: date)
        return String(format: "%02d%02d%02d", c.day!, c.month!, c.year! % 100)
    }
}

/// A real gpsd, started by gpsfake on a free port and fed a log in a loop. Its own process group,
/// so that stopping it takes gpsd down too (gpsfake alone leaves it running). The port is drawn
/// below Linux's ephemeral range (32768–60999), where a connection's own port, or one in
/// TIME_WAIT, could already hold it.
package final class GPSFake {
    package let port: Int
    private let process: Spawned

    /// `cycle`: seconds between two sentences (a fix is two: GGA and RMC).
    package init(log: String, port: Int = Int.random(in: 20_000...25_999), cycle: Double = 0.1) throws {
        self.port = port
        let file = try Rideguard.temporaryFile("gpsfake-\(UUID().uuidString).nmea", contents: Data(log.utf8))
        // -q quiet, -P our port (2947 may be a system gpsd), -c delay between sentences, looping.
        process = try Spawned(["/usr/bin/gpsfake", "-q", "-P", String(port), "-c", String(cycle), file.path])
    }

    /// A gpsfake whose gpsd has served a fix. About one start in twenty to thirty here gives a gpsd
    /// that answers and never serves one (seen with gpspipe too): that is gpsfake's start, not what a
    /// test checks, so a start without a fix in 20 s is replaced by a fresh one, at most three
    /// times, and the error lists what each start said. On `port` where given (a gpsd restarted
    /// where a client waits for it), else each on a port of its own.
    package static func serving(log: String, port: Int? = nil, cycle: Double = 0.1) throws -> GPSFake {
        var tries: [String] = []
        for _ in 0..<3 {
            let candidate = try port.map { try GPSFake(log: log, port: $0, cycle: cycle) } ?? GPSFake(log: log, cycle: cycle)
            let ready = GPSDWatcher.probe(host: "127.0.0.1", port: String(candidate.port), seconds: 20)
            if ready.fix != nil {
                if !tries.isEmpty { print("GPSFake: restarted after starts without a fix: \(tries)") }
                return candidate
            }
            tries.append("port \(candidate.port): connected \(ready.connected), \(ready.problem ?? "no problem said")")
            candidate.stop()
        }
        throw NoFix(tries: tries)
    }

    package struct NoFix: Error, CustomStringConvertible {
        let tries: [String]
        package var description: String { "gpsd under gpsfake gave no fix in three starts: \(tries)" }
    }

    /// gpsfake and its gpsd (one process group) killed at once: gpsfake takes 5 s over a SIGTERM.
    package func stop() {
        process.kill(SIGKILL)
    }
}
