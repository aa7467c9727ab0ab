import Foundation
import GPSDClient
import RideGuardCore
import Synchronization
import Testing

/// gpsd fed by gpsfake with our own NMEA: the adapter, the store and `rideguard location`.
@Suite(.serialized) struct LocationTests {
    @Test func locationCommandPrintsTheRidersFix() throws {
        let gps = try GPSFake(log: NMEALog.movingRider(latitude: 45.76, longitude: 4.84, speed: 15, course: 45, seconds: 60))
        defer { gps.stop() }
        let result = try Rideguard.run(["location", "--gpsd", "127.0.0.1:\(gps.port)", "--json", "--wait", "20"])
        #expect(result.status == 0, "\(result.stderr)")
        let fix = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let lat = try #require(fix["lat"] as? Double), lon = try #require(fix["lon"] as? Double)
        #expect(abs(lat - 45.76) < 0.01 && abs(lon - 4.84) < 0.01)
        #expect(fix["time"] is String)
        #expect(fix["age_s"] is Double)
        if let speed = fix["speed_mps"] as? Double { #expect(abs(speed - 15) < 0.5) }
    }

    @Test func locationCommandSaysWhenThereIsNoFix() throws {
        let gps = try GPSFake(log: NMEALog.noFix(seconds: 30))
        defer { gps.stop() }
        let result = try Rideguard.run(["location", "--gpsd", "127.0.0.1:\(gps.port)", "--wait", "4"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("no GPS fix yet from gpsd at 127.0.0.1:\(gps.port)"))
    }

    @Test func locationCommandSaysWhenGpsdIsAbsent() throws {
        let result = try Rideguard.run(["location", "--gpsd", "127.0.0.1:9", "--wait", "1"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("cannot reach gpsd at 127.0.0.1:9"))
    }

    /// The watcher fills the store, notices gpsd going away, and comes back when it restarts.
    @Test func watcherSurvivesAGpsdRestart() throws {
        let log = NMEALog.movingRider(latitude: 48.0, longitude: 7.8, speed: 20, course: 90, seconds: 120)
        var gps: GPSFake? = try GPSFake(log: log)
        let port = gps!.port
        struct Seen: Sendable {
            var store = LocationStore()
            var fixes = 0
            var connects = 0
            var disconnects = 0
        }
        let seen = Mutex(Seen())
        let watcher = GPSDWatcher(host: "127.0.0.1", port: String(port), maximumBackoff: 1) { event in
            seen.withLock { s in
                switch event {
                case .fix(let fix):
                    s.store.update(fix)
                    s.fixes += 1
                case .connected: s.connects += 1
                case .disconnected: s.disconnects += 1
                }
            }
        }
        defer { watcher.stop() }
        try waitFor(20) { seen.withLock { $0.fixes >= 5 } }
        let before = seen.withLock { $0 }
        let motion = try #require(before.store.motion(before: before.store.lastFix!.time))
        #expect(abs(motion.speed - 20) < 0.5)
        #expect(abs((motion.heading ?? 0) - 90) < 5)
        #expect(abs(before.store.lastFix!.latitude - 48.0) < 0.01)

        gps?.stop()
        gps = nil
        try waitFor(10) { seen.withLock { $0.disconnects >= 1 } }
        let fixesWhileDown = seen.withLock { $0.fixes }
        gps = try GPSFake(log: log, port: port)
        defer { gps?.stop() }
        try waitFor(20) { seen.withLock { $0.fixes > fixesWhileDown + 3 } }
        #expect(seen.withLock { $0.connects } >= 2)
    }

    @Test func storeKeepsTheLastGoodFixAndAShortTrack() {
        var store = LocationStore(trackSeconds: 60)
        store.update(Fix(time: 100, latitude: 1, longitude: 1, speed: 10, track: 10))
        store.update(Fix(time: 90, latitude: 9, longitude: 9))            // late: ignored
        store.update(Fix(time: 130, latitude: .nan, longitude: 1))        // not a position: ignored
        store.update(Fix(time: 170, latitude: 1.001, longitude: 1, speed: 2, track: 180))
        #expect(store.lastFix?.time == 170)
        #expect(store.track.count == 1)                                   // 100 fell out of the 60 s window
        #expect(store.age(at: 175) == 5)
        #expect(store.motion(before: 171)?.speed == 2)
    }
}

func waitFor(_ seconds: Double, _ condition: () -> Bool) throws {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline { throw WaitTimeout(seconds: seconds) }
        usleep(50_000)
    }
}

struct WaitTimeout: Error, CustomStringConvertible {
    var seconds: Double
    var description: String { "condition not met within \(seconds) s" }
}
