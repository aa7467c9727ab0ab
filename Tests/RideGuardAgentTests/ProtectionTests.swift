// SPDX-License-Identifier: Apache-2.0
import Foundation
import RideGuardCore
@testable import Storage
import Logging
import ServiceLifecycle
import Synchronization
import AgentTestSupport
import RideGuardTestSupport
import Testing
@testable import WebUI
@testable import RideGuardAgent
import SystemCalls
import SystemTime

/// Issue 43, "said protecting, cannot alert": one owner for "are we protecting" (the workflow's
/// `protection`), which the buzzer, `status`, systemd, the page and the fleet read.
extension AgentTests {
    /// Point 1: the last contact removed while the agent protects (the page and the CLI remove it in
    /// the database, as a restore or sqlite3 would). Before, the agent stayed armed, silent, with
    /// "Protecting" beside "Contacts 0". Now within a second: disarmed, the fault pattern, the
    /// reason in `status` and the journal; the first contact added arms it again.
    @Test(.onOneThread) func theLastContactRemovedStopsTheProtectionAtOnce() async throws {
        let folder = try AgentInProcessTests.folder("last-contact")
        let agent = try InProcessAgent(InProcessAgent.configuration(in: folder, playback: 1))
        try await agent.advance(untilState: .armed, limit: 20)
        let armed = try #require(try await AgentTests.status(folder))
        #expect(armed.protection == Protection(.protecting))

        let database = try RideGuardDatabase(path: folder.appendingPathComponent("rideguard.sqlite").path)
        _ = try database.removeContact("Sam", now: 1)
        _ = try database.removeContact("Jo", now: 2)
        await agent.advance(by: 1.5)
        let unprotected = try #require(try await AgentTests.status(folder))
        #expect(unprotected.state == .disarmed)
        #expect(unprotected.buzzer == .fault)
        #expect(unprotected.contacts == 0)
        #expect(unprotected.protection?.level == .notProtecting)
        #expect(unprotected.protection?.reasons.first?.hasPrefix("no emergency contact") == true, "\(String(describing: unprotected.protection))")
        #expect(AgentInProcessTests.journal(folder, kind: .system).contains("not protecting: no emergency contact"))

        _ = try database.addConfirmedContact(name: "Sam", number: "+33612345678", now: 3)
        await agent.advance(by: 1.5)
        let back = try #require(try await AgentTests.status(folder))
        #expect(back.state == .armed && back.protection == Protection(.protecting) && back.buzzer != .fault)
        await agent.stop()
    }

    /// Point 2: the power was cut while the alert went out (its row says `sending`), and at the next
    /// boot the card is read-only (ext4 remounts so after the error a cut leaves). Resuming it needs
    /// a write; before, the failure was swallowed and the alert never went. Now it is put back in
    /// memory and sent.
    @Test(.enabled(if: geteuid() == 0, "mounts a tmpfs"), .onOneThread) func anAlertCutByAPowerFailureGoesOutFromAReadOnlyCard() async throws {
        let card = try Card(megabytes: 4)
        let modem = try FakeModem()
        let path = card.path + "/rideguard.sqlite"
        let folder = try AgentInProcessTests.folder("power-cut", database: path)
        var configuration = InProcessAgent.configuration(in: folder, playback: 1, modem: modem)
        configuration.database = path
        do {
            let database = try RideGuardDatabase(path: path)
            _ = try database.outbox.enqueue(recipient: "+33612345678", kind: .alert, body: "Interrupted alert", now: 1)
            let claimed = try #require(try database.outbox.claimNext(now: 2))
            #expect(claimed.status == .sending)
        }
        try card.remount(readOnly: true)
        let agent = try InProcessAgent(configuration)
        try await agent.advance(until: { modem.messages.contains { $0.hasPrefix("Interrupted alert") } }, limit: 20)
        #expect(agent.log.contains("interrupted while being sent"), "\(agent.log.text)")
        await agent.stop()
        try card.remount(readOnly: false)
    }

    /// Point 3: a short gap in the samples (0.28 s) is journaled, and is no reason to say "NOT
    /// protecting": before, the fault pattern started and nothing cleared it while `status` said
    /// armed at full rate. Now the buzzer, `status` and the journal agree: protecting.
    @Test(.onOneThread) func aShortGapInTheSamplesNeverSaysNotProtecting() async throws {
        let folder = try AgentInProcessTests.folder("gap")
        let agent = try InProcessAgent(InProcessAgent.configuration(in: folder, trace: try Self.gapTrace(in: folder), playback: 1))
        try await agent.advance(untilState: .armed, limit: 20)
        try await agent.advance(until: { AgentInProcessTests.journal(folder, kind: .system).contains("sensor: ") }, limit: 20)
        await agent.advance(by: 2)
        let status = try #require(try await AgentTests.status(folder))
        #expect(status.protection == Protection(.protecting), "\(String(describing: status.protection))")
        #expect(status.buzzer != .fault)
        let journal = AgentInProcessTests.journal(folder, kind: .system)
        #expect(journal.contains("sensor: no samples for 0.2"), "\(journal)")
        #expect(!journal.contains("not protecting"), "\(journal)")
        await agent.stop()
    }

    /// An IMU that reads 0.3 g at rest (gravity mostly on a dead axis): the detector learns that
    /// reading as its upright, conservatively, and says the reading is implausible at the same
    /// instant. Protecting, degraded, and it stays so (before, the upright learned at that instant
    /// cleared the fault it came with, and nothing was said at all).
    @Test(.onOneThread) func anIMUReadingFarFrom1GAtRestIsDegradedAndStaysSo() async throws {
        let folder = try AgentInProcessTests.folder("low-g")
        let trace = folder.appendingPathComponent("low-g.csv")
        var text = "# rideguard-trace v1\n# rate_hz: 100\ntime_s,ax,ay,az,gx,gy,gz\n"
        for i in 0..<3_000 { text += "\(Double(i) / 100),0.0100,-0.0200,2.9400,0.00100,-0.00200,0.00000\n" }
        try Data(text.utf8).write(to: trace)
        let agent = try InProcessAgent(InProcessAgent.configuration(in: folder, trace: trace, playback: 1))
        try await agent.advance(until: { AgentInProcessTests.journal(folder, kind: .system).contains("imu_reading fault") }, limit: 30)
        await agent.advance(by: 3)
        let status = try #require(try await AgentTests.status(folder))
        #expect(status.protection?.level == .degraded, "\(String(describing: status.protection))")
        #expect(status.protection?.reasons.first?.contains("at rest") == true, "\(String(describing: status.protection))")
        #expect(status.buzzer == .degraded)
        #expect(!AgentInProcessTests.journal(folder, kind: .system).contains("imu_reading: "), "cleared by the upright learned with it")
        await agent.stop()
    }

    /// The example ride up to 20 s (before its crash), 0.28 s without a sample at 12 s.
    static func gapTrace(in folder: URL) throws -> URL {
        let source = try String(contentsOf: Rideguard.fixtures.appendingPathComponent("example-lowside.csv"), encoding: .utf8)
        var lines: [Substring] = []
        for line in source.split(separator: "\n") {
            guard let t = Double(line.prefix { $0 != "," }) else { lines.append(line); continue }
            if t > 20 { break }
            if t > 12 && t < 12.28 { continue }
            lines.append(line)
        }
        let trace = folder.appendingPathComponent("gap.csv")
        try (lines.joined(separator: "\n") + "\n").write(to: trace, atomically: true, encoding: .utf8)
        return trace
    }
}

/// Issue 43, point 4: a part that ends while the agent runs no longer ends the agent: it is started
/// again, each end journaled; the workflow's end stops the agent for systemd to restart it.
@Suite struct ServicePolicyTests {
    final class Flaky: Service, CustomStringConvertible, @unchecked Sendable {
        let runs = Mutex(0)
        var description: String { "flaky part" }
        func run() async throws {
            let run = runs.withLock { $0 += 1; return $0 }
            if run == 1 { return }
            if run == 2 { throw SupervisedEnd("its device went away") }
            try? await gracefulShutdown()
        }
    }

    final class Steady: Service, CustomStringConvertible, @unchecked Sendable {
        var description: String { "steady part" }
        func run() async throws { try? await gracefulShutdown() }
    }

    @Test func aPartThatEndsIsStartedAgainAndTheAgentGoesOn() async throws {
        let flaky = Flaky(), journal = Mutex<[String]>([])
        let supervised = Supervised(service: flaky, policy: .restart, clock: SystemServiceClock(), logger: Logger(label: "test"),
                                    journal: { text in journal.withLock { $0.append(text) } }, firstDelay: 0.01)
        let group = ServiceGroup(services: [Supervised(service: Steady(), policy: .restart, clock: SystemServiceClock(), logger: Logger(label: "test"),
                                                       journal: { _ in }), supervised], logger: Logger(label: "test"))
        let running = Task { try await group.run() }
        for _ in 0..<200 where flaky.runs.withLock({ $0 }) < 3 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(flaky.runs.withLock { $0 } == 3)
        #expect(journal.withLock { $0 } == ["flaky part ended while the agent runs: started again in 0 s",
                                            "flaky part failed (its device went away) while the agent runs: started again in 0 s"])
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(flaky.runs.withLock { $0 } == 3, "not started again during the stop")
    }

    @Test func theWorkflowsEndStopsTheAgentForSystemd() async throws {
        final class Ends: Service, CustomStringConvertible, @unchecked Sendable {
            var description: String { "emergency workflow" }
            func run() async throws {}
        }
        let journal = Mutex<[String]>([])
        let group = ServiceGroup(services: [Supervised(service: Ends(), policy: .restartAgent, clock: SystemServiceClock(), logger: Logger(label: "test"),
                                                       journal: { text in journal.withLock { $0.append(text) } })], logger: Logger(label: "test"))
        await #expect(throws: (any Error).self) { try await group.run() }
        #expect(journal.withLock { $0 }.first?.hasPrefix("emergency workflow ended while the agent runs: the agent stops so that systemd starts it again") == true)
    }
}

extension FleetTests {
    /// Issue 43, "Done when": `status`, the buzzer, the page and MQTT's state agree on "protecting"
    /// in each state: every part working; a short gap in the samples; no contact; the modem absent;
    /// the storage read-only.
    @Test(.enabled(if: geteuid() == 0, "mounts a tmpfs")) func everyWayOfShowingItAgreesOnProtection() async throws {
        let broker = try Mosquitto()
        try broker.start()
        let card = try Card(megabytes: 4)
        typealias Case = (name: String, level: Protection.Level, prepare: (inout AgentConfiguration, URL) throws -> Void)
        let cases: [Case] = [
            ("every part working", .protecting, { _, _ in }),
            ("a short gap in the samples", .protecting, { configuration, folder in
                configuration.imu.trace = try AgentTests.gapTrace(in: folder).path
                configuration.imu.speed = 4                 // the gap at 12 s of trace comes 3 s in
            }),
            ("no contact", .notProtecting, { configuration, folder in
                let database = try RideGuardDatabase(path: configuration.database)
                for contact in try database.contacts() { _ = try database.removeContact(contact.number, now: 1) }
            }),
            ("the modem absent", .notProtecting, { configuration, _ in
                configuration.modem.simulated = false
                configuration.modem.device = "/dev/rideguard-no-such-modem"
            }),
            ("the storage read-only", .degraded, { configuration, _ in
                configuration.database = card.path + "/rideguard.sqlite"
                do { _ = try RideGuardDatabase(path: configuration.database).addConfirmedContact(name: "Sam", number: "+33612345678", now: 1) }
                try card.remount(readOnly: true)        // with the database closed: the kernel refuses it otherwise
            }),
        ]
        for item in cases {
            let folder = try AgentInProcessTests.folder("agree")
            var configuration = InProcessAgent.configuration(in: folder, playback: 0.5)
            configuration.mqtt = try Self.mqtt(broker, in: folder)
            try item.prepare(&configuration, folder)
            let agent = try InProcessAgent(configuration)
            try await agent.advance(until: { (try? await AgentTests.status(folder))??.protection?.level == item.level }, limit: 90)
            if item.name.contains("gap") {
                try await agent.advance(until: { AgentInProcessTests.journal(folder, kind: .system).contains("sensor: no samples for") }, limit: 30)
            }
            await agent.advance(by: 2)
            let status = try #require(try await AgentTests.status(folder))
            let protection = try #require(status.protection)
            #expect(protection.level == item.level, "\(item.name): \(protection)")
            // The buzzer plays the protection's warning (or nothing of its own when protecting).
            #expect(protection.warning.map { $0 == status.buzzer } ?? (status.buzzer != .fault && status.buzzer != .degraded),
                    "\(item.name): buzzer \(status.buzzer) for \(protection)")
            // The page says the same.
            let page = Pages.status(.running(status), hasMessage: true, now: 0, ScreenText(.en))
            let said = switch item.level {
            case .protecting: ">Protecting<"
            case .degraded: "Protecting, degraded: "
            default: "NOT protecting: " + Markup.escaped(protection.reasons.joined(separator: "; "))
            }
            #expect(page.contains(said), "\(item.name): \(page.prefix(300))")
            // And the fleet's retained state.
            let state = try await offThread { try broker.subscribe("rideguard/bike1/state") }
            #expect(state.first?.contains("\"protection\":\"\(item.level.rawValue)\"") == true, "\(item.name): \(state)")
            await agent.stop()
            if item.level == .degraded { try card.remount(readOnly: false) }
        }
    }
}

extension FleetTests {
    /// Issue 43, point 13: a member's alert forged on this bike's own group topic (by another member,
    /// whose ACL lets it write the whole group) does not stay: the bike hears its own topic, says so
    /// and publishes its own report over it.
    @Test func aBikesOwnGroupReportCannotBeOverwrittenFromOutside() async throws {
        let broker = try Mosquitto()
        try broker.start()
        var sunday = AgentConfiguration.Group()
        sunday.name = "sunday"
        let folder = try AgentInProcessTests.folder("group-own")
        var configuration = InProcessAgent.configuration(in: folder, playback: 0.5)
        configuration.mqtt = try Self.mqtt(broker, in: folder)
        configuration.group = sunday
        let agent = try InProcessAgent(configuration)
        try await agent.advance(until: { await Self.fleet(agent)?.connected == true }, limit: 30)
        await agent.advance(by: 2)
        try await offThread { try broker.publish("rideguard/group/sunday/bike1", lines: [#"{"alert":true,"lat":45.1,"lon":5.7}"#], retain: true, as: "bike2") }
        try await agent.advance(until: { AgentInProcessTests.journal(folder).contains("someone else published on this bike's topic (alert true)") },
                                limit: 10, step: 0.05)
        await agent.advance(by: 2)
        let own = try await offThread { try broker.subscribe("rideguard/group/sunday/bike1") }
        #expect(own.first?.contains(#""alert":false"#) == true, "\(own)")
        // Garbage in its place (the others could no longer read this bike's state): put right too.
        try await offThread { try broker.publish("rideguard/group/sunday/bike1", lines: ["not a report"], retain: true, as: "bike2") }
        try await agent.advance(until: { AgentInProcessTests.journal(folder).contains("someone else published on this bike's topic (not a report)") },
                                limit: 10, step: 0.05)
        await agent.advance(by: 2)
        let again = try await offThread { try broker.subscribe("rideguard/group/sunday/bike1") }
        #expect(again.first?.contains(#""alert":false"#) == true, "\(again)")
        await agent.stop()
    }
}
