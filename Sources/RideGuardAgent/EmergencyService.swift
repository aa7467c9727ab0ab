// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import RideGuardCore
import ServiceLifecycle
import SystemCalls

/// Owns the emergency workflow: one actor, one state machine, one ordered stream of inputs. Every
/// part (the sampler's thread, the button watcher, gpsd, the control socket, the timers, the outbox's
/// send results) posts into the stream; `run()` takes one input at a time, feeds it to the workflow
/// and carries out the whole batch of actions it asks for (saving the state first) before the next
/// input, so nothing interleaves with a batch and inputs reach the workflow in the order posted.
package actor EmergencyService {
    /// What reaches the workflow, in order.
    package enum Input: Sendable {
        case event(WorkflowEvent)
        /// A raw edge of the button's line, at a time in the service clock's base (debounced here).
        case buttonEdge(pressed: Bool, at: Double)
        case timer(WorkflowTimer)
        case gestureTick
        /// Messages that could not all be queued, tried again (`queued`: those that were).
        case retryMessages(MessageKind, to: Recipients, queued: Set<String>, attempt: Int)
    }

    /// Inputs waiting; a burst larger than this (it never comes near) loses the newest, journaled.
    static let bufferedInputs = 4096

    /// Where the workflow's actions go: the outbox, the journal, location tracking, the calls.
    package struct Outputs: Sendable {
        /// Queues what the workflow asks for; says which numbers it queued, and what stopped it short.
        package var queueMessages: @Sendable (MessageRequest) async -> QueueOutcome
        package var cancelQueuedAlerts: @Sendable () async -> Void
        package var journal: @Sendable (JournalEntry) -> Void
        package var tracking: @Sendable (Bool) -> Void
        package var calls: @Sendable (Bool) -> Void
        /// Tells the fleet: the events table, which the MQTT publisher reads (never waits on it).
        package var announce: @Sendable (FleetEvent) -> Void

        package init(queueMessages: @escaping @Sendable (MessageRequest) async -> QueueOutcome,
                    cancelQueuedAlerts: @escaping @Sendable () async -> Void = {},
                    journal: @escaping @Sendable (JournalEntry) -> Void,
                    tracking: @escaping @Sendable (Bool) -> Void = { _ in },
                    calls: @escaping @Sendable (Bool) -> Void = { _ in },
                    announce: @escaping @Sendable (FleetEvent) -> Void = { _ in }) {
            self.queueMessages = queueMessages
            self.cancelQueuedAlerts = cancelQueuedAlerts
            self.journal = journal
            self.tracking = tracking
            self.calls = calls
            self.announce = announce
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
    /// Messages waiting out the delay before they are tried again, by number (each leaves once
    /// posted: a storage failure lasting days does not pile them up).
    private var retries: [Int: Task<Void, Never>] = [:]
    private var retriesStarted = 0
    private typealias Posted = (input: Input, done: CheckedContinuation<Void, Never>?)
    private let inputs: AsyncStream<Posted>
    private nonisolated let sink: AsyncStream<Posted>.Continuation
    private var lostInputs = 0
    private var toldSystemd: Protection?

    package var state: WorkflowState { workflow.state }
    package var snapshot: EmergencyWorkflow { workflow }
    /// Whether an alert would reach someone now: what every part of the agent shows.
    package var protection: Protection { workflow.protection }

    package func protection(disregarding parts: Set<HealthPart>) -> Protection { workflow.protection(disregarding: parts) }
    /// The button as the agent last saw it: held down now, and when it was last pressed (for the
    /// phone's "press the button now" check).
    package var button: (down: Bool, lastPress: Double?) { (decoder.isDown, lastPress) }
    private var lastPress: Double?

    /// Loads the saved workflow. An emergency in progress resumes with the configuration it started
    /// with; otherwise the current configuration applies.
    package init(configuration: WorkflowConfiguration, store: WorkflowStore, clock: any ServiceClock,
                buzzer: BuzzerPlayer, outputs: Outputs) {
        self.store = store
        self.clock = clock
        self.buzzer = buzzer
        self.outputs = outputs
        (inputs, sink) = AsyncStream<Posted>.makeStream(bufferingPolicy: .bufferingOldest(Self.bufferedInputs))
        decoder = GestureDecoder(holdThresholds: [configuration.cancelHoldSeconds, configuration.longHoldSeconds])
        // An emergency saved before a restart must not be lost to a passing read error (a busy or
        // slow card): read again before starting afresh; one that cannot be decoded is kept aside.
        var loaded: EmergencyWorkflow?
        for attempt in 1...3 {
            do {
                loaded = try store.load()
                break
            } catch let error as WorkflowStoreError {
                outputs.journal(JournalEntry(.system, "could not read the saved emergency state, starting afresh: \(error)"))
                break
            } catch {
                guard attempt == 3 else { usleep(200_000); continue }
                outputs.journal(JournalEntry(.system, "could not read the saved emergency state after 3 tries, starting afresh: \(error)"))
            }
        }
        if let loaded, WorkflowState.emergencyUnderWay.contains(loaded.state) {
            workflow = loaded
        } else {
            workflow = EmergencyWorkflow(configuration: configuration)
        }
    }

    /// Puts the buzzer and timers back after a restart (a no-op for a fresh workflow).
    package func resume() async {
        let actions = workflow.resume(at: clock.now())
        await perform(actions)
    }

    /// Posts an input from any thread or task, without waiting: it reaches the workflow after every
    /// input posted before it.
    package nonisolated func post(_ input: Input) {
        if case .dropped = sink.yield((input, nil)) { Task { await self.lost() } }
    }

    /// Posts an input and waits until the workflow has handled it and its actions are done. Never
    /// from the workflow's own outputs (that batch is what it would wait behind): they `post`.
    package func handle(_ input: Input) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            switch sink.yield((input, done)) {
            case .enqueued: break
            case .dropped, .terminated: done.resume()
            @unknown default: done.resume()
            }
        }
    }

    package func handle(_ event: WorkflowEvent) async {
        await handle(.event(event))
    }

    /// Takes the inputs one at a time until `finishInputs()`; the owner runs it once.
    package func run() async {
        for await (input, done) in inputs {
            switch input {
            case .event(let event):
                await perform(workflow.handle(event))
            case .buttonEdge(let pressed, let t):
                if pressed { lastPress = t }
                for gesture in decoder.edge(pressed: pressed, at: t) { await perform(workflow.handle(.gesture(gesture))) }
                scheduleGestureTick()
            case .gestureTick:
                for gesture in decoder.tick(at: clock.now()) { await perform(workflow.handle(.gesture(gesture))) }
                scheduleGestureTick()
            case .timer(let timer):
                timers[timer] = nil
                await perform(workflow.handle(.timerFired(timer, at: clock.now())))
            case .retryMessages(let kind, let recipients, let queued, let attempt):
                if workflow.wants(kind) {
                    await queue(kind, to: recipients, skipping: queued, attempt: attempt)
                } else {
                    outputs.journal(JournalEntry(.messages, "\(kind.rawValue) no longer needed (\(workflow.state.rawValue)): not queued"))
                }
            }
            done?.resume()
        }
    }

    /// Ends the stream: `run()` handles what was posted before and returns.
    package nonisolated func finishInputs() {
        sink.finish()
    }

    private func lost() {
        lostInputs += 1
        outputs.journal(JournalEntry(.system, "an input to the emergency workflow was lost: \(Self.bufferedInputs) were waiting (\(lostInputs) lost so far)"))
    }

    /// `systemctl status` says what the workflow says of the protection, each time it changes.
    private func tellSystemd() {
        let protection = workflow.protection
        guard protection != toldSystemd else { return }
        toldSystemd = protection
        SystemdNotify.send("STATUS=" + protection.summary)
    }

    private func scheduleGestureTick() {
        gestureTick?.cancel()
        guard let deadline = decoder.nextDeadline else { return }
        let clock = self.clock
        gestureTick = Task { [weak self] in
            do { try await clock.sleep(until: deadline) } catch { return }
            self?.post(.gestureTick)
        }
    }

    private func perform(_ actions: [WorkflowAction]) async {
        defer { tellSystemd() }
        for action in actions {
            switch action {
            case .persist:
                do { try store.save(workflow) } catch {
                    outputs.journal(JournalEntry(.system, "could not save the emergency state: \(error)"))
                }
            case .buzzer(let pattern):
                await buzzer.play(pattern)
            case .buzzerOnce(let pattern):
                await buzzer.check(pattern)
            case .startTimer(let timer, let deadline):
                timers[timer]?.cancel()
                let clock = self.clock
                timers[timer] = Task { [weak self] in
                    do { try await clock.sleep(until: deadline) } catch { return }
                    self?.post(.timer(timer))
                }
            case .cancelTimer(let timer):
                timers.removeValue(forKey: timer)?.cancel()
            case .queueMessages(let kind, let recipients):
                await queue(kind, to: recipients, skipping: [], attempt: 1)
            case .cancelQueuedAlerts:
                await outputs.cancelQueuedAlerts()
            case .startTracking:
                outputs.tracking(true)
            case .stopTracking:
                outputs.tracking(false)
            case .startCalls:
                outputs.calls(true)
            case .stopCalls:
                outputs.calls(false)
            case .journal(let entry):
                outputs.journal(entry)
            case .announce(let event):
                outputs.announce(event)
            }
        }
    }

    /// Queues messages worded from the workflow as saved. The alert's recipients are handed to the
    /// workflow at once, inside this batch: no delivery of theirs can come before. What could not
    /// be queued (the database failed) is said (the fault pattern, after this batch) and tried
    /// again, 1 s doubling to 30 s, while the workflow still wants it.
    private func queue(_ kind: MessageKind, to recipients: Recipients, skipping queued: Set<String>, attempt: Int) async {
        let outcome = await outputs.queueMessages(MessageRequest(kind: kind, recipients: recipients, emergency: EmergencyFacts(workflow), skipping: queued))
        let now = clock.now()
        if kind == .alert && !outcome.queued.isEmpty { await perform(workflow.handle(.alertsQueued(to: outcome.queued, at: now))) }
        guard let problem = outcome.problem else {
            if attempt > 1 { post(.event(.messagesQueued(at: now, summary: "\(kind.rawValue) queued after \(attempt) attempts"))) }
            return
        }
        if attempt == 1 { post(.event(.messagesBlocked(at: now, summary: "could not queue the \(kind.rawValue): \(problem); retrying"))) }
        let retry = Input.retryMessages(kind, to: recipients, queued: queued.union(outcome.queued), attempt: attempt + 1)
        let deadline = now + Backoff(first: 1, limit: 30).delay(afterFailures: attempt)
        let clock = self.clock
        retriesStarted += 1
        let number = retriesStarted
        retries[number] = Task { [weak self] in
            do { try await clock.sleep(until: deadline) } catch { return }
            self?.post(retry)
            await self?.retryPosted(number)
        }
    }

    private func retryPosted(_ number: Int) {
        retries[number] = nil
    }

    /// Stops taking inputs, the timers and the buzzer's pattern (graceful shutdown; the saved state
    /// stays). The owner lets `run()` finish what was posted first (`finishInputs()`, then await it).
    package func shutdown() async {
        sink.finish()
        for task in timers.values { task.cancel() }
        timers = [:]
        for task in retries.values { task.cancel() }
        retries = [:]
        gestureTick?.cancel()
        await buzzer.play(.off)
    }
}
