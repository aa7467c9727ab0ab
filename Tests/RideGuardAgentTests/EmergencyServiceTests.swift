// SPDX-License-Identifier: Apache-2.0
import Foundation
import RideGuardAgent
import RideGuardCore
import Storage
import Synchronization
import RideGuardTestSupport
import Testing

/// What the service asked the outside world to do.
final class Recorder: Sendable {
    let messages = Mutex<[(MessageKind, Recipients)]>([])
    let journal = Mutex<[JournalEntry]>([])

    var outputs: EmergencyService.Outputs {
        EmergencyService.Outputs(
            queueMessages: { request in
                self.messages.withLock { $0.append((request.kind, request.recipients)) }
                return QueueOutcome(queued: [])
            },
            journal: { entry in self.journal.withLock { $0.append(entry) } })
    }

    var kinds: [MessageKind] { messages.withLock { $0.map(\.0) } }
}

func temporaryStore() -> WorkflowStore {
    let path = Scratch.path("rideguard-workflow.sqlite").path
    return WorkflowStore(database: try! RideGuardDatabase(path: path))
}

@Suite(.serialized, .onOneThread) struct EmergencyServiceTests {
    func makeService(store: WorkflowStore, clock: ManualClock, recorder: Recorder, buzzer: SimulatedBuzzer = SimulatedBuzzer())
        -> (EmergencyService, BuzzerPlayer) {
        let player = BuzzerPlayer(output: buzzer, clock: clock)
        var configuration = WorkflowConfiguration()
        configuration.countdownSeconds = 30
        let service = EmergencyService(configuration: configuration, store: store, clock: clock, buzzer: player,
                                       outputs: recorder.outputs)
        Task { await service.run() }
        return (service, player)
    }

    /// A burst posted from another thread, as the sampler and the button watcher post: a crash, then
    /// fifty rounds of a sensor fault, a bouncing button and a stale timer, then a 1.5 s press. They
    /// reach the workflow in the order posted: every fault in turn, the press last ("I'm fine").
    @Test func aBurstOfInterleavedInputsReachesTheWorkflowInOrder() async {
        let clock = ManualClock(), recorder = Recorder()
        let (service, _) = makeService(store: temporaryStore(), clock: clock, recorder: recorder)
        await service.handle(.arm(at: clock.now(), problems: []))
        let t0 = clock.now()
        let poster = Thread {
            service.post(.event(.crashDetected(at: t0, summary: "bike down")))
            for i in 0..<50 {
                service.post(.event(.health(.button, problem: i.isMultiple(of: 2) ? "probe \(i)" : nil, at: t0)))
                service.post(.buttonEdge(pressed: true, at: t0 + 1 + Double(i) * 0.1))      // bounce: 4 ms down
                service.post(.buttonEdge(pressed: false, at: t0 + 1.004 + Double(i) * 0.1))
                service.post(.timer(.countdownStep))                                         // not due: ignored
            }
            service.post(.buttonEdge(pressed: true, at: t0 + 10))
            service.post(.buttonEdge(pressed: false, at: t0 + 11.5))
        }
        poster.start()
        while !recorder.journal.withLock({ $0.contains { $0.text.hasPrefix("rider is fine") } }) { await Task.yield() }
        await service.handle(.event(.messagesQueued(at: clock.now(), summary: "end of the burst")))
        let texts = recorder.journal.withLock { $0.map(\.text) }
        let probes = texts.filter { $0.hasPrefix("button fault: probe") || $0 == "button: the button works again" }
        #expect(probes == (0..<50).map { $0.isMultiple(of: 2) ? "button fault: probe \($0) (protecting, degraded)" : "button: the button works again" })
        let crash = texts.firstIndex { $0.hasPrefix("crash detected") } ?? .max
        let lastProbe = texts.lastIndex { $0.hasPrefix("button fault: probe") } ?? .max
        let fine = texts.firstIndex { $0.hasPrefix("rider is fine") } ?? -1
        #expect(crash < (texts.firstIndex { $0.hasPrefix("button fault: probe") } ?? -1) && lastProbe < fine, "\(texts)")
        #expect(texts.last == "end of the burst")
        #expect(await service.state == .armed && recorder.kinds.isEmpty)
        await service.shutdown()
    }

    /// The outbox's sender sleeps until a message is queued (or one falls due), instead of polling.
    @Test(.timeLimit(.minutes(1))) func theDoorbellWakesTheSenderOnlyWhenThereIsWork() async {
        let clock = ManualClock(), bell = Doorbell()
        bell.ring()
        await bell.wait(until: clock.now() + 60, clock: clock)              // rung before: at once
        let woke = Mutex(false)
        let waiter = Task {
            await bell.wait(until: clock.now() + 60, clock: clock)
            woke.withLock { $0 = true }
        }
        await clock.advance(by: 30)
        #expect(!woke.withLock { $0 }, "woke without a ring before its deadline")
        bell.ring()
        await waiter.value
        #expect(woke.withLock { $0 })
        let timed = Task { await bell.wait(until: clock.now() + 5, clock: clock) }
        await clock.advance(by: 5)
        await timed.value                                                    // its deadline
    }

    @Test func crashCountdownAlertsWithTheBuzzerEscalating() async {
        let clock = ManualClock(), recorder = Recorder(), buzzer = SimulatedBuzzer()
        let (service, player) = makeService(store: temporaryStore(), clock: clock, recorder: recorder, buzzer: buzzer)
        await service.handle(.arm(at: clock.now(), problems: []))
        await service.handle(.crashDetected(at: clock.now(), summary: "bike down"))
        await clock.advance(by: 29)
        #expect(await service.state == .alertCountdown)
        #expect(recorder.kinds.isEmpty)
        await clock.advance(by: 2)
        #expect(await service.state == .emergencySending)
        #expect(recorder.kinds == [.alert])
        #expect(await player.history == [.armed, .countdownSlow, .countdownFast, .countdownUrgent, .alarm])
        #expect(buzzer.beeps > 30)                       // it really beeped, faster and faster
        await service.shutdown()
    }

    /// Alerts that could not all be queued (the database failed) are said with the fault pattern,
    /// tried again 1 s, then 2 s later without queueing anyone twice, and the alarm comes back. Every
    /// number queued is handed to the workflow: the alert is out once both are delivered.
    @Test func alertsThatCannotBeQueuedAreTriedAgainAndAwaited() async {
        let clock = ManualClock(), journal = Mutex<[String]>([]), requests = Mutex<[MessageRequest]>([])
        let outputs = EmergencyService.Outputs(
            queueMessages: { request in
                switch requests.withLock({ $0.append(request); return $0.count }) {
                case 1: QueueOutcome(queued: ["+33611111111"], problem: "disk I/O error")
                case 2: QueueOutcome(queued: [], problem: "disk I/O error")
                default: QueueOutcome(queued: ["+33622222222"])
                }
            },
            journal: { entry in journal.withLock { $0.append(entry.text) } })
        let player = BuzzerPlayer(output: SimulatedBuzzer(), clock: clock)
        var configuration = WorkflowConfiguration()
        configuration.countdownSeconds = 30
        let service = EmergencyService(configuration: configuration, store: temporaryStore(), clock: clock, buzzer: player, outputs: outputs)
        Task { await service.run() }
        await service.handle(.arm(at: clock.now(), problems: []))
        await service.handle(.crashDetected(at: clock.now(), summary: "bike down"))
        await clock.advance(by: 30)
        #expect(requests.withLock { $0.count } == 1)
        #expect(journal.withLock { $0.contains("could not queue the alert: disk I/O error; retrying") })
        #expect(await player.history.last == .fault)
        #expect(await service.snapshot.alertsAwaited == ["+33611111111"])

        await clock.advance(by: 0.9)
        #expect(requests.withLock { $0.count } == 1, "tried again before 1 s")
        await clock.advance(by: 0.1)
        #expect(requests.withLock { $0.map(\.skipping) } == [[], ["+33611111111"]])
        await clock.advance(by: 1.9)
        #expect(requests.withLock { $0.count } == 2, "tried again before 2 s")
        await clock.advance(by: 0.1)
        #expect(requests.withLock { $0.map(\.skipping) } == [[], ["+33611111111"], ["+33611111111"]])
        #expect(journal.withLock { $0.contains("alert queued after 3 attempts") })
        #expect(await player.history.last == .alarm)
        #expect(await service.snapshot.alertsAwaited == ["+33611111111", "+33622222222"])

        await service.handle(.alertDelivered(contact: "+33611111111", at: clock.now()))
        #expect(await service.state == .emergencySending)
        await service.handle(.alertDelivered(contact: "+33622222222", at: clock.now()))
        #expect(await service.state == .emergencySent)
        await clock.advance(by: 60)
        #expect(requests.withLock { $0.count } == 3, "no retry after success")
        await service.shutdown()
    }

    /// A retry falls due after the rider ended the emergency: the alert is no longer wanted.
    @Test func aRetryNoLongerWantedIsNotQueued() async {
        let clock = ManualClock(), journal = Mutex<[String]>([]), requests = Mutex(0)
        let outputs = EmergencyService.Outputs(
            queueMessages: { _ in
                requests.withLock { $0 += 1 }
                return QueueOutcome(queued: [], problem: "disk I/O error")
            },
            journal: { entry in journal.withLock { $0.append(entry.text) } })
        let service = EmergencyService(configuration: WorkflowConfiguration(), store: temporaryStore(), clock: clock,
                                       buzzer: BuzzerPlayer(output: SimulatedBuzzer(), clock: clock), outputs: outputs)
        Task { await service.run() }
        await service.handle(.arm(at: clock.now(), problems: []))
        await service.handle(.gesture(.down(at: clock.now())))
        await service.handle(.gesture(.held(seconds: 3, at: clock.now() + 3)))           // manual SOS
        await service.handle(.gesture(.released(duration: 3.1, at: clock.now() + 3.1)))
        await clock.advance(by: 13.5)                   // the SOS's 10 s countdown, from the hold
        #expect(await service.state == .emergencySending && requests.withLock { $0 } == 1)
        await service.handle(.gesture(.down(at: clock.now())))                          // "I'm fine", held 3 s
        await service.handle(.gesture(.held(seconds: 3, at: clock.now() + 3)))
        await service.handle(.gesture(.released(duration: 3.1, at: clock.now() + 3.1)))
        #expect(await service.state == .emergencyEnded)
        await clock.advance(by: 1)
        #expect(requests.withLock { $0 } == 1)
        #expect(journal.withLock { $0.contains("alert no longer needed (emergencyEnded): not queued") }, "\(journal.withLock { $0 })")
        await service.shutdown()
    }

    @Test func holdingTheButtonCancelsTheCountdown() async {
        let clock = ManualClock(), recorder = Recorder()
        let (service, player) = makeService(store: temporaryStore(), clock: clock, recorder: recorder)
        await service.handle(.arm(at: clock.now(), problems: []))
        await service.handle(.crashDetected(at: clock.now(), summary: "bike down"))
        await clock.advance(by: 5)
        // A bouncy short press first: nothing.
        for (i, level) in [true, false, true, false].enumerated() {
            await service.handle(.buttonEdge(pressed: level, at: clock.now() + Double(i) * 0.004))
        }
        await clock.advance(by: 1)
        #expect(await service.state == .alertCountdown)
        // Then a real 1.5 s hold: acknowledged as soon as one second is reached, still held.
        await service.handle(.buttonEdge(pressed: true, at: clock.now()))
        await clock.advance(by: 1.1)
        #expect(await service.state == .armed)
        #expect(await player.history.last == .acknowledge)
        await clock.advance(by: 0.4)
        await service.handle(.buttonEdge(pressed: false, at: clock.now()))
        await clock.advance(by: 60)
        #expect(recorder.kinds.isEmpty)
        await service.shutdown()
    }

    @Test func anEmergencySurvivesARestart() async throws {
        let store = temporaryStore()
        let clock = ManualClock(), recorder = Recorder()
        let (first, _) = makeService(store: store, clock: clock, recorder: recorder)
        await first.handle(.arm(at: clock.now(), problems: []))
        await first.handle(.crashDetected(at: clock.now(), summary: "bike down"))
        await clock.advance(by: 10)
        await first.shutdown()                           // the agent dies during the countdown
        await clock.advance(by: 5)

        let again = Recorder()
        let (second, player) = makeService(store: store, clock: clock, recorder: again)
        #expect(await second.state == .alertCountdown)
        await second.resume()
        #expect(await player.history.first == .countdownSlow)
        await clock.advance(by: 16)
        #expect(await second.state == .emergencySending)
        #expect(again.kinds == [.alert])
        await second.shutdown()
    }

    @Test func aDamagedSavedEmergencyIsReportedAndSetAside() async throws {
        let store = temporaryStore()
        try store.database.saveEmergencySnapshot("{not json")
        let clock = ManualClock(), recorder = Recorder()
        let (service, _) = makeService(store: store, clock: clock, recorder: recorder)
        #expect(await service.state == .disarmed)
        #expect(recorder.journal.withLock { $0.contains { $0.text.contains("could not read the saved emergency state") } })
        #expect(try store.database.emergencySnapshot() == nil)          // set aside as emergency.bad
        await service.handle(.arm(at: clock.now(), problems: []))
        #expect(try store.load()?.state == .armed)        // and it saves again
    }
}
