import Foundation
import RideGuardCore

/// Owns the emergency workflow: one actor, one state machine. It feeds it events (crashes, button
/// gestures, timers, delivery reports), performs the actions it asks for, and saves its state before
/// acting, so a restart resumes an emergency where it was.
public actor EmergencyService {
    /// Where the workflow's actions go: the outbox, the journal, location tracking.
    public struct Outputs: Sendable {
        public var queueMessages: @Sendable (MessageKind, Recipients) async -> Void
        public var cancelQueuedAlerts: @Sendable () async -> Void
        public var journal: @Sendable (JournalEntry) -> Void
        public var tracking: @Sendable (Bool) -> Void

        public init(queueMessages: @escaping @Sendable (MessageKind, Recipients) async -> Void,
                    cancelQueuedAlerts: @escaping @Sendable () async -> Void = {},
                    journal: @escaping @Sendable (JournalEntry) -> Void,
                    tracking: @escaping @Sendable (Bool) -> Void = { _ in }) {
            self.queueMessages = queueMessages
            self.cancelQueuedAlerts = cancelQueuedAlerts
            self.journal = journal
            self.tracking = tracking
        }
    }

    private var workflow: EmergencyWorkflow
    private var decoder: GestureDecoder
    private let store: WorkflowStore
    private let clock: any ServiceClock
    private let buzzer: BuzzerPlayer
    private let outputs: Outputs
    private var timers: [WorkflowTimer: Task<Void, Never>] = [:]
    private var gestureTick: Task<Void, Never>?

    public var state: WorkflowState { workflow.state }
    public var snapshot: EmergencyWorkflow { workflow }

    /// Loads the saved workflow. An emergency in progress resumes with the configuration it started
    /// with; otherwise the current configuration applies.
    public init(configuration: WorkflowConfiguration, store: WorkflowStore, clock: any ServiceClock,
                buzzer: BuzzerPlayer, outputs: Outputs) {
        self.store = store
        self.clock = clock
        self.buzzer = buzzer
        self.outputs = outputs
        decoder = GestureDecoder(holdThresholds: [configuration.cancelHoldSeconds, configuration.longHoldSeconds])
        var loaded: EmergencyWorkflow?
        do {
            loaded = try store.load()
        } catch {
            outputs.journal(JournalEntry("system", "could not read the saved emergency state, starting afresh: \(error)"))
        }
        switch loaded?.state {
        case .alertCountdown?, .emergencySending?, .emergencySent?, .emergencySendingFailed?:
            workflow = loaded!
        default:
            workflow = EmergencyWorkflow(configuration: configuration)
        }
    }

    /// Puts the buzzer and timers back after a restart (a no-op for a fresh workflow).
    public func resume() async {
        let actions = workflow.resume(at: clock.now())
        await perform(actions)
    }

    public func handle(_ event: WorkflowEvent) async {
        let actions = workflow.handle(event)
        await perform(actions)
    }

    /// A button edge (debounced and decoded here), at a time in the service clock's base.
    public func buttonEdge(pressed: Bool, at t: Double) async {
        for gesture in decoder.edge(pressed: pressed, at: t) { await handle(.gesture(gesture)) }
        scheduleGestureTick()
    }

    private func gestureTickFired() async {
        for gesture in decoder.tick(at: clock.now()) { await handle(.gesture(gesture)) }
        scheduleGestureTick()
    }

    private func scheduleGestureTick() {
        gestureTick?.cancel()
        guard let deadline = decoder.nextDeadline else { return }
        let clock = self.clock
        gestureTick = Task { [weak self] in
            do { try await clock.sleep(until: deadline) } catch { return }
            await self?.gestureTickFired()
        }
    }

    private func perform(_ actions: [WorkflowAction]) async {
        for action in actions {
            switch action {
            case .persist:
                do { try store.save(workflow) } catch {
                    outputs.journal(JournalEntry("system", "could not save the emergency state: \(error)"))
                }
            case .buzzer(let pattern):
                await buzzer.play(pattern)
            case .startTimer(let timer, let deadline):
                timers[timer]?.cancel()
                let clock = self.clock
                timers[timer] = Task { [weak self] in
                    do { try await clock.sleep(until: deadline) } catch { return }
                    await self?.timerFired(timer)
                }
            case .cancelTimer(let timer):
                timers.removeValue(forKey: timer)?.cancel()
            case .queueMessages(let kind, let recipients):
                await outputs.queueMessages(kind, recipients)
            case .cancelQueuedAlerts:
                await outputs.cancelQueuedAlerts()
            case .startTracking:
                outputs.tracking(true)
            case .stopTracking:
                outputs.tracking(false)
            case .journal(let entry):
                outputs.journal(entry)
            }
        }
    }

    private func timerFired(_ timer: WorkflowTimer) async {
        timers[timer] = nil
        await handle(.timerFired(timer, at: clock.now()))
    }

    /// Stops timers and the buzzer's pattern (graceful shutdown; the saved state stays).
    public func shutdown() async {
        for task in timers.values { task.cancel() }
        timers = [:]
        gestureTick?.cancel()
        await buzzer.play(.off)
    }
}
