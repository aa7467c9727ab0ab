import Foundation
import RideGuardAgent
import RideGuardCore
import Storage
import Synchronization
import Testing

/// What the service asked the outside world to do.
final class Recorder: Sendable {
    let messages = Mutex<[(MessageKind, Recipients)]>([])
    let journal = Mutex<[JournalEntry]>([])

    var outputs: EmergencyService.Outputs {
        EmergencyService.Outputs(
            queueMessages: { kind, to in self.messages.withLock { $0.append((kind, to)) } },
            journal: { entry in self.journal.withLock { $0.append(entry) } })
    }

    var kinds: [MessageKind] { messages.withLock { $0.map(\.0) } }
}

func temporaryStore() -> WorkflowStore {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("rideguard-workflow-\(UUID().uuidString).sqlite").path
    return WorkflowStore(database: try! RideGuardDatabase(path: path))
}

@Suite(.serialized) struct EmergencyServiceTests {
    func makeService(store: WorkflowStore, clock: ManualClock, recorder: Recorder, buzzer: SimulatedBuzzer = SimulatedBuzzer())
        -> (EmergencyService, BuzzerPlayer) {
        let player = BuzzerPlayer(output: buzzer, clock: clock)
        var configuration = WorkflowConfiguration()
        configuration.countdownSeconds = 30
        let service = EmergencyService(configuration: configuration, store: store, clock: clock, buzzer: player,
                                       outputs: recorder.outputs)
        return (service, player)
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

    @Test func holdingTheButtonCancelsTheCountdown() async {
        let clock = ManualClock(), recorder = Recorder()
        let (service, player) = makeService(store: temporaryStore(), clock: clock, recorder: recorder)
        await service.handle(.arm(at: clock.now(), problems: []))
        await service.handle(.crashDetected(at: clock.now(), summary: "bike down"))
        await clock.advance(by: 5)
        // A bouncy short press first: nothing.
        for (i, level) in [true, false, true, false].enumerated() {
            await service.buttonEdge(pressed: level, at: clock.now() + Double(i) * 0.004)
        }
        await clock.advance(by: 1)
        #expect(await service.state == .alertCountdown)
        // Then a real 1.5 s hold: acknowledged as soon as one second is reached, still held.
        await service.buttonEdge(pressed: true, at: clock.now())
        await clock.advance(by: 1.1)
        #expect(await service.state == .armed)
        #expect(await player.history.last == .acknowledge)
        await clock.advance(by: 0.4)
        await service.buttonEdge(pressed: false, at: clock.now())
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
