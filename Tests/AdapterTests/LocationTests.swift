// SPDX-License-Identifier: Apache-2.0
import Foundation
import GPSDClient
import RideGuardCore
import Synchronization
import RideGuardTestSupport
import Testing

/// gpsd fed by gpsfake with our own NMEA: the adapter, the store and `rideguard location`.
@Suite(.serialized) struct LocationTests {
    @Test func locationCommandPrintsTheRidersFix() throws {
        let gps = try GPSFake.serving(log: NMEALog.movingRider(latitude: 45.76, longitude: 4.84, speed: 15, course: 45, seconds: 60))
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
        var gps: GPSFake? = try GPSFake.serving(log: log, cycle: 0.02)
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
        gps = try GPSFake.serving(log: log, port: port, cycle: 0.02)
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

/// gpsd lines that once stopped the position for good, from a fake gpsd speaking its protocol.
@Suite(.serialized) struct HostileGPSDTests {
    struct Seen: Sendable {
        var fixes: [Fix] = []
        var reasons: [String] = []
    }

    func watch(_ gpsd: FakeGPSD, until condition: @escaping @Sendable (Seen) -> Bool) throws -> Seen {
        let seen = Mutex(Seen())
        let watcher = GPSDWatcher(host: "127.0.0.1", port: String(gpsd.port), maximumBackoff: 0.5) { event in
            seen.withLock { s in
                switch event {
                case .fix(let fix): s.fixes.append(fix)
                case .disconnected(let reason, _): s.reasons.append(reason)
                case .connected: break
                }
            }
        }
        defer { watcher.stop() }
        try waitFor(15) { seen.withLock { condition($0) } }
        return seen.withLock { $0 }
    }

    /// `"class"` not first: libgps 3.22 loops forever inside `gps_read` on such a line (the thread
    /// spun at 100 % CPU, with no later fix and no reconnect). The agent reads the socket itself and
    /// drops what is not a report as gpsd writes it: the next fix comes on the same connection.
    @Test func aLineLibgpsCannotParseIsDroppedAndTheNextFixComes() throws {
        let gpsd = try FakeGPSD(linesPerConnection: [[
            #"{"devices":[],"class":"SKY"}"#, "not json at all", "",
            FakeGPSD.tpv(time: "2026-11-24T05:00:02.000Z", latitude: 45.2, longitude: 5.8),
        ]])
        defer { gpsd.stop() }
        let started = clock()
        let seen = try watch(gpsd) { $0.fixes.contains { $0.latitude == 45.2 } }
        #expect(gpsd.connections == 1 && seen.reasons.isEmpty, "\(seen.reasons)")
        let cpu = Double(clock() - started) / Double(CLOCKS_PER_SEC)
        #expect(cpu < 0.5, "the reader spun: \(cpu) s of CPU")
    }

    /// A receiver after a GPS week-number rollover dates its fixes 2999: the agent times fixes on
    /// arrival, so the next one is never taken for an older one.
    @Test func aFixDatedInTheFarFutureDoesNotFreezeThePosition() throws {
        let gpsd = try FakeGPSD(linesPerConnection: [[
            FakeGPSD.tpv(time: "2999-01-01T00:00:00.000Z", latitude: 45.1, longitude: 5.7),
            FakeGPSD.tpv(time: "2026-11-24T05:00:02.000Z", latitude: 45.2, longitude: 5.8),
        ]])
        defer { gpsd.stop() }
        let seen = try watch(gpsd) { $0.fixes.contains { $0.latitude == 45.2 } }
        var store = LocationStore()
        for var fix in seen.fixes {
            fix.time = Date().timeIntervalSince1970   // as LocationService stamps them: on arrival
            store.update(fix)
        }
        #expect(store.lastFix?.latitude == 45.2)
    }
}
