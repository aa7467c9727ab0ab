// SPDX-License-Identifier: Apache-2.0
/// What happens after a crash: countdown, alert, tracking, all-clear. Events in, actions out; the
/// value itself is the snapshot the agent persists, so a restart resumes where it was.
package struct EmergencyWorkflow: Codable, Equatable, Sendable {
    package enum Trigger: String, Codable, Sendable { case crash, manual }

    package let configuration: WorkflowConfiguration
    package private(set) var state = WorkflowState.disarmed
    package private(set) var trigger: Trigger?
    /// Deadlines of the running timers, in the events' time base.
    package private(set) var deadlines: [WorkflowTimer: Double] = [:]
    package private(set) var countdownStart: Double?
    /// The emergency's name for the fleet: the Unix second its countdown began. A dispatcher's
    /// acknowledgement names it, so that one left over from before cannot acknowledge this one.
    package var emergencyID: Int? {
        guard WorkflowState.emergencyUnderWay.contains(state), let start = countdownStart, start.isFinite else { return nil }
        return Int(start.rounded(.down))
    }
    /// The crash this emergency is about: its time and evidence, for every message of it. Kept in
    /// the persisted state (a restart mid-emergency keeps them), cleared when the emergency ends.
    package private(set) var crash: CrashFacts?
    /// Contacts (numbers) an alert reached in this emergency.
    package private(set) var alerted: [String] = []
    /// Contacts whose alert is queued and neither delivered nor failed yet; when the last one is
    /// settled, every alert is out.
    package private(set) var alertsAwaited: [String] = []
    /// A position is known: one reached this run of the agent (before or during the emergency), or
    /// the one the emergency's alert carried. An alert sent before any is followed by one when it comes.
    package private(set) var positionKnown = false
    package private(set) var buzzer = BuzzerPattern.off
    /// Who acknowledged this emergency, when and how; nil until somebody does.
    package private(set) var acknowledgement: Acknowledgement?
    /// The press in progress already did something: further holds of it do nothing more (holding
    /// "I'm fine" past 3 s must not raise a manual SOS).
    package private(set) var pressConsumed = false
    /// What the last arming check found in the way (no contact, contacts unreadable); nil before
    /// the first. An emergency ended by the rider resumes protection only without them.
    package private(set) var armingProblems: [String]?
    /// The parts that have a problem now, and what it is (reported again after a restart).
    package private(set) var health: [HealthPart: String] = [:]
    /// A crash was detected and the detector has not seen the bike upright since: until it does, it
    /// would not see another (`CrashDetector`'s crash in progress).
    package private(set) var awaitingUpright = false

    package init(configuration: WorkflowConfiguration = WorkflowConfiguration()) {
        self.configuration = configuration
    }

    /// The snapshot's fields, as saved since 0.2.0.
    private enum CodingKeys: String, CodingKey {
        case configuration, state, trigger, deadlines, countdownStart, crash, alerted, alertsAwaited
        /// Saved under its earlier name.
        case positionKnown = "fixSeenSinceEmergency"
        case buzzer, acknowledgement, pressConsumed, armingProblems, health, awaitingUpright
    }

    /// Reads a snapshot saved by this version or an earlier one. Only the configuration and the
    /// state must be there; a field an earlier version did not write, or wrote only when it was
    /// set (0.2.0 left out `health`, `alertsAwaited` and `awaitingUpright` while empty), takes the
    /// value a new workflow has.
    package init(from decoder: any Decoder) throws {
        let saved = try decoder.container(keyedBy: CodingKeys.self)
        func value<T: Decodable>(_ key: CodingKeys, else fallback: T) throws -> T {
            try saved.decodeIfPresent(T.self, forKey: key) ?? fallback
        }
        configuration = try saved.decode(WorkflowConfiguration.self, forKey: .configuration)
        state = try saved.decode(WorkflowState.self, forKey: .state)
        trigger = try saved.decodeIfPresent(Trigger.self, forKey: .trigger)
        deadlines = try value(.deadlines, else: [:])
        countdownStart = try saved.decodeIfPresent(Double.self, forKey: .countdownStart)
        crash = try saved.decodeIfPresent(CrashFacts.self, forKey: .crash)
        alerted = try value(.alerted, else: [])
        alertsAwaited = try value(.alertsAwaited, else: [])
        positionKnown = try value(.positionKnown, else: false)
        buzzer = try value(.buzzer, else: .off)
        acknowledgement = try saved.decodeIfPresent(Acknowledgement.self, forKey: .acknowledgement)
        pressConsumed = try value(.pressConsumed, else: false)
        armingProblems = try saved.decodeIfPresent([String].self, forKey: .armingProblems)
        // A part this version does not know (an earlier one's, since merged) is left out.
        health = Dictionary(uniqueKeysWithValues: try value(.health, else: [String: String]()).compactMap { part, problem in
            HealthPart(rawValue: part).map { ($0, problem) }
        })
        awaitingUpright = try value(.awaitingUpright, else: false)
    }

    /// Seconds left in the countdown at `t`, when counting down.
    package func countdownRemaining(at t: Double) -> Double? {
        guard state == .alertCountdown, let deadline = deadlines[.countdown] else { return nil }
        return max(0, deadline - t)
    }

    /// Whether messages of `kind` are still wanted now (queueing them again after a failure):
    /// alerts and updates while the alert is out, the all-clear and the parked fall always.
    package func wants(_ kind: MessageKind) -> Bool {
        kind == .allClear || kind == .parkedFall || WorkflowState.alertsOut.contains(state)
    }

    /// Whether an alert would reach someone now, from the state, the last arming check and the
    /// parts' health: what the buzzer plays while nothing of an emergency sounds, and what
    /// `status`, the page, systemd and the fleet say.
    package var protection: Protection { protection(disregarding: []) }

    /// The protection as it would be without the problems of `parts` (what a message going out
    /// disproves: the modem, the SIM and the SMS path work as it leaves).
    package func protection(disregarding parts: Set<HealthPart>) -> Protection {
        let problems = health.map { (part: $0.key, problem: $0.value) }
            .filter { !parts.contains($0.part) }
            .sorted { $0.part < $1.part }
        let blocking = problems.filter { $0.part.blocksAlerts }.map(\.problem)
        let degrading = problems.filter { !$0.part.blocksAlerts }.map(\.problem)
        switch state {
        case .alertCountdown, .emergencySending, .emergencySent, .emergencySendingFailed:
            return Protection(.emergency)
        case .disarmed:
            let why = armingProblems.flatMap { $0.isEmpty ? nil : $0 } ?? ["starting: the contacts are not checked yet"]
            return Protection(.notProtecting, reasons: why + blocking)
        case .emergencyEnded:
            return Protection(.notProtecting, reasons: ["the emergency is over: press the button to resume protection"] + blocking)
        case .armed:
            let detector = awaitingUpright ? ["the bike has not stood upright since the crash: a new crash would not be seen until it has"] : []
            if !(detector + blocking).isEmpty { return Protection(.notProtecting, reasons: detector + blocking) }
            if !degrading.isEmpty { return Protection(.degraded, reasons: degrading) }
            return Protection(.protecting)
        }
    }

    package mutating func handle(_ event: WorkflowEvent) -> [WorkflowAction] {
        var actions: [WorkflowAction] = []
        let before = self
        switch event {
        case .arm(_, let problems):
            arm(problems: problems, into: &actions)
        case .disarm:
            if state == .armed || state == .emergencyEnded || state == .disarmed {
                state = .disarmed
                play(.off, &actions)
                actions.append(.journal(JournalEntry(.system, "protection stopped")))
                actions.append(.announce(FleetEvent(.protectionStopped)))
            }
        case .crashDetected(let t, let summary, let evidence):
            awaitingUpright = true
            actions.append(.journal(JournalEntry(.detections, "crash detected: \(summary)")))
            var facts = JSONLine()
            facts.add("summary", summary)
            facts.add("protecting", state == .armed)
            actions.append(.announce(FleetEvent(.crashDetected, facts: facts)))
            if state == .armed {
                startCountdown(.crash, at: t, seconds: configuration.countdownSeconds, into: &actions)
                crash = CrashFacts(time: t, evidence: evidence)
            } else if state == .disarmed || state == .emergencyEnded {
                actions.append(.journal(JournalEntry(.detections, "not protecting: no countdown (press the button to resume)")))
            }
        case .parkedFall(_, let summary):
            // Nobody was riding: no countdown, no contact. The rider's phone is told, and the buzzer
            // says it to whoever is near (unless an emergency's own pattern sounds).
            actions.append(.journal(JournalEntry(.detections, "parked bike fell over: \(summary) (nobody riding: no countdown, the rider's phone is told)")))
            actions.append(.announce(FleetEvent(.parkedFall, summary: summary)))
            if WorkflowState.idle.contains(state) {
                // A warning that repeats goes on after the four beeps: the parked fall does not end it.
                if buzzer.repeats { actions.append(.buzzerOnce(.parkedFall)) } else { play(.parkedFall, &actions) }
            }
            actions.append(.queueMessages(.parkedFall, to: .rider))
        case .gesture(let gesture):
            handle(gesture, into: &actions)
        case .timerFired(let timer, let t):
            fired(timer, at: t, into: &actions)
        case .alertsQueued(let contacts, _):
            guard WorkflowState.alertsOut.contains(state) else { break }
            var awaited = alertsAwaited
            for contact in contacts where !alerted.contains(contact) && !awaited.contains(contact) { awaited.append(contact) }
            alertsAwaited = awaited
        case .alertDelivered(let contact, let t):
            delivered(contact, at: t, into: &actions)
        case .alertFailed(let contact, let t):
            alertsAwaited.removeAll { $0 == contact }
            if state == .emergencySending && !alerted.isEmpty && alertsAwaited.isEmpty { enterSent(at: t, into: &actions) }
        case .health(let part, let problem, _):
            report(part, problem, into: &actions)
        case .detectorWatching:
            awaitingUpright = false
        case .messagesBlocked(_, let summary):
            // The rider must know that nobody is being alerted: the fault pattern replaces the alarm.
            actions.append(.journal(JournalEntry(.alerts, summary)))
            actions.append(.announce(FleetEvent(.messagesBlocked, summary: summary)))
            play(.fault, &actions)
        case .messagesQueued(_, let summary):
            actions.append(.journal(JournalEntry(.alerts, summary)))
            actions.append(.announce(FleetEvent(.partRecovered, summary: summary)))
            if buzzer == .fault && (state == .emergencySending || state == .emergencySendingFailed) { play(.alarm, &actions) }
        case .acknowledged(let acknowledgement, let answering):
            acknowledge(acknowledgement, answering: answering, into: &actions)
        case .groupAlert(let summary, _):
            // Heard when nothing of the rider's own sounds: their emergency and a fault come first.
            let quiet = WorkflowState.idle.contains(state) && protection.warning == nil
            if let summary {
                actions.append(.journal(JournalEntry(.alerts, "riding group: \(summary)")))
                if quiet { play(.groupAlert, &actions) }
            } else {
                actions.append(.journal(JournalEntry(.alerts, "riding group: no member needs help any more")))
                if buzzer == .groupAlert { play(.off, &actions) }
            }
        case .locationFix(_):
            guard !positionKnown else { break }
            positionKnown = true
            // An alert that went out without a position is followed by one as soon as there is a fix.
            if state == .emergencySent { actions.append(.queueMessages(.locationUpdate, to: .only(alerted))) }
        }
        if WorkflowState.idle.contains(before.state) && WorkflowState.idle.contains(state) {
            follow(before.protection, before: before.state, into: &actions)
        } else if WorkflowState.idle.contains(state) {
            warnAfterEmergency(into: &actions)
        }
        // The parts' health and the arming check are reported again after a restart, and outside an
        // emergency the buzzer follows them (a saved idle state is never resumed): a change of
        // theirs alone is not written (no card wear, no failed write on a read-only card).
        var saved = before
        (saved.health, saved.armingProblems) = (health, armingProblems)
        if WorkflowState.idle.contains(before.state) && WorkflowState.idle.contains(state) { saved.buzzer = buzzer }
        if self != saved { actions.insert(.persist, at: 0) }
        return actions
    }

    /// After a restart: the actions that put the buzzer and timers back as they were. A deadline
    /// that passed while the agent was down fires at once; one implausibly far (the clock moved)
    /// is brought back within its configured length.
    package mutating func resume(at t: Double) -> [WorkflowAction] {
        // A restarted agent's detector starts afresh: it has no crash in progress.
        awaitingUpright = false
        var actions: [WorkflowAction] = [.buzzer(buzzer)]
        for timer in WorkflowTimer.allCases {
            guard var deadline = deadlines[timer] else { continue }
            let longest: Double = switch timer {
            case .countdown, .countdownStep: max(configuration.countdownSeconds, configuration.manualCountdownSeconds)
            case .networkFailure: configuration.networkFailureSeconds
            case .locationUpdate: configuration.locationUpdateIntervalSeconds
            case .trackingEnd: configuration.trackingDurationSeconds
            }
            deadline = min(deadline, t + longest)
            deadlines[timer] = deadline
            actions.append(.startTimer(timer, deadline: deadline))
        }
        if state == .emergencySent {
            actions.append(.startTracking)
            if acknowledgement == nil { actions.append(.startCalls) }
        }
        // Outside an emergency, a new run has seen no position yet; within one, what the alert
        // carried is what counts (a restart must not send another position at once).
        if WorkflowState.idle.contains(state) { positionKnown = false }
        // The parts report their health again in this run.
        health = [:]
        if state != .disarmed && state != .armed {
            actions.append(.journal(JournalEntry(.system, "resumed in state \(state.rawValue) after a restart")))
        }
        return actions
    }

    // MARK: - Transitions

    /// The arming check's result: armed without problems, disarmed with them (the buzzer, the
    /// journal and the fleet follow the protection). An emergency is not interrupted by it; what it
    /// found decides whether the rider can resume protection after it.
    private mutating func arm(problems: [String], into actions: inout [WorkflowAction]) {
        armingProblems = problems
        if state == .disarmed || state == .armed { state = problems.isEmpty ? .armed : .disarmed }
    }

    /// A part's problem, or its recovery: journaled and told to the fleet when it changes.
    private mutating func report(_ part: HealthPart, _ problem: String?, into actions: inout [WorkflowAction]) {
        guard health[part] != problem else { return }
        let had = health[part] != nil
        health[part] = problem
        // The modem's own events come from its health service; the contacts' and the self-test's
        // reach the fleet in the protection's `degraded` event.
        let fleetName: FleetEvent.Name? = switch part {
        case .storage: .storageFault
        case .sms: .modemFault
        case .imu, .imuReading, .imuAxis, .imuRate, .button: .sensorFault
        case .modem, .sim, .contacts, .selfTest: nil
        }
        if let problem {
            let effect = part.blocksAlerts ? "" : " (protecting, degraded)"
            actions.append(.journal(JournalEntry(.system, "\(part.rawValue) fault: \(problem)\(effect)")))
            if let fleetName { actions.append(.announce(FleetEvent(fleetName, summary: problem))) }
        } else if had {
            actions.append(.journal(JournalEntry(.system, "\(part.rawValue): \(part.recovered)")))
            if fleetName != nil { actions.append(.announce(FleetEvent(.partRecovered, summary: part.recovered))) }
        }
    }

    /// An emergency ended in a state that does not protect (the rider cancelled the alert, tracking
    /// ended, no contact left): its last beeps sound, then the warning goes on.
    private mutating func warnAfterEmergency(into actions: inout [WorkflowAction]) {
        let now = protection
        guard let warning = now.warning, buzzer != warning else { return }
        let last = actions.lastIndex { if case .buzzer(let pattern) = $0 { pattern != .off && !pattern.repeats } else { false } }
        if let last, case .buzzer(let once) = actions[last] {
            actions[last] = .buzzer(warning)
            actions.insert(.buzzerOnce(once), at: last + 1)
            buzzer = warning
        } else {
            play(warning, &actions)
        }
        tell(now, before: state, &actions)
    }

    /// The journal's line and the fleet's event for the protection outside an emergency.
    private func tell(_ protection: Protection, before: WorkflowState, _ actions: inout [WorkflowAction]) {
        let reasons = protection.reasons.joined(separator: "; ")
        switch protection.level {
        case .notProtecting:
            actions.append(.journal(JournalEntry(.system, "not protecting: " + reasons)))
            actions.append(.announce(FleetEvent(.notProtecting, summary: reasons)))
        case .degraded:
            actions.append(.journal(JournalEntry(.system, protection.summary)))
            actions.append(.announce(FleetEvent(.degraded, summary: reasons)))
        case .protecting:
            actions.append(.journal(JournalEntry(.system, before == .armed ? "protecting again: every part works" : "armed: protecting the rider")))
            actions.append(.announce(FleetEvent(.armed)))
        case .emergency:
            break
        }
    }

    /// Outside an emergency the buzzer, the journal and the fleet follow the protection: a warning
    /// while not protecting or degraded, a chirp when protection (re)starts, a line for each change.
    private mutating func follow(_ was: Protection, before: WorkflowState, into actions: inout [WorkflowAction]) {
        let now = protection
        // Before the first arming check nothing is said: the agent is starting.
        guard now != was, now.level != .emergency, armingProblems != nil || state != .disarmed else { return }
        tell(now, before: before, &actions)
        if let warning = now.warning {
            if buzzer != warning { play(warning, &actions) }
        } else if was.level != .protecting {
            // The chirp says protection is on: a first arming, or back after a warning or an emergency.
            play(before == .disarmed ? .armed : .resumed, &actions)
        }
    }

    private mutating func startCountdown(_ trigger: Trigger, at t: Double, seconds: Double,
                                         into actions: inout [WorkflowAction]) {
        state = .alertCountdown
        self.trigger = trigger
        countdownStart = t
        crash = nil
        alerted = []
        alertsAwaited = []
        acknowledgement = nil
        setTimer(.countdown, t + seconds, &actions)
        play(.countdownSlow, &actions)
        scheduleStep(after: .countdownSlow, deadline: t + seconds, &actions)
        let what = trigger == .crash ? "crash" : "manual SOS"
        actions.append(.journal(JournalEntry(.alerts, "\(what): countdown of \(Int(seconds)) s started")))
        var facts = JSONLine()
        facts.add("seconds", Int(seconds))
        if let id = emergencyID { facts.add("emergency", id) }
        actions.append(.announce(FleetEvent(trigger == .crash ? .countdownStarted : .sosRaised, facts: facts)))
    }

    /// The buzzer speeds up at half time and again for the last seconds.
    private mutating func scheduleStep(after pattern: BuzzerPattern, deadline: Double, _ actions: inout [WorkflowAction]) {
        guard let start = countdownStart else { return }
        let total = deadline - start
        let urgent = min(10, total / 4)
        switch pattern {
        case .countdownSlow: setTimer(.countdownStep, deadline - total / 2, &actions)
        case .countdownFast: setTimer(.countdownStep, deadline - urgent, &actions)
        default: clearTimer(.countdownStep, &actions)
        }
    }

    private mutating func handle(_ gesture: GestureDecoder.Gesture, into actions: inout [WorkflowAction]) {
        switch gesture {
        case .down: pressConsumed = false
        case .held: if pressConsumed { return }
        case .released: if pressConsumed { pressConsumed = false; return }
        }
        let stateBefore = state
        defer { if case .held = gesture, state != stateBefore { pressConsumed = true } }
        switch (state, gesture) {
        case (.alertCountdown, .held(let seconds, _)) where seconds >= configuration.cancelHoldSeconds:
            state = armingProblems?.isEmpty == false ? .disarmed : .armed
            trigger = nil
            countdownStart = nil
            crash = nil
            clearTimer(.countdown, &actions)
            clearTimer(.countdownStep, &actions)
            play(.acknowledge, &actions)
            actions.append(.journal(JournalEntry(.alerts, "rider is fine: countdown cancelled, nothing sent")))
            actions.append(.announce(FleetEvent(.imFine)))
        case (.armed, .held(let seconds, let t)) where seconds >= configuration.longHoldSeconds:
            startCountdown(.manual, at: t, seconds: configuration.manualCountdownSeconds, into: &actions)
        case (.emergencySending, .held(let seconds, _)), (.emergencySent, .held(let seconds, _)),
             (.emergencySendingFailed, .held(let seconds, _)):
            guard seconds >= configuration.longHoldSeconds else { break }
            actions.append(.cancelQueuedAlerts)
            if !alerted.isEmpty { actions.append(.queueMessages(.allClear, to: .only(alerted))) }
            var facts = JSONLine()
            facts.add("contacts", alerted.count)
            actions.append(.announce(FleetEvent(.allClear, facts: facts)))
            endEmergency(pattern: .acknowledge, reason: "the rider cancelled the emergency: all-clear sent to \(alerted.count) contact(s)", &actions)
        case (.emergencySending, .released(let duration, _)), (.emergencySent, .released(let duration, _)),
             (.emergencySendingFailed, .released(let duration, _)):
            if duration < configuration.cancelHoldSeconds && buzzer != .off {
                play(.off, &actions)
                actions.append(.journal(JournalEntry(.alerts, "buzzer silenced by the rider (hold \(Int(configuration.longHoldSeconds)) s to cancel)")))
            }
        case (.emergencyEnded, .released):
            // Back to protecting, unless the last arming check found a reason not to (no contact left).
            state = armingProblems?.isEmpty == false ? .disarmed : .armed
            trigger = nil
            actions.append(.journal(JournalEntry(.system, "protection resumed by the rider")))
        default:
            break  // a short press in a countdown, bounce, or a gesture with no meaning here does nothing
        }
    }

    private mutating func fired(_ timer: WorkflowTimer, at t: Double, into actions: inout [WorkflowAction]) {
        // A timer that was cancelled or replaced may still fire: only the current one counts.
        guard let deadline = deadlines[timer], t >= deadline - 0.001 else { return }
        deadlines[timer] = nil
        switch (state, timer) {
        case (.alertCountdown, .countdownStep):
            let next: BuzzerPattern = buzzer == .countdownSlow ? .countdownFast : .countdownUrgent
            play(next, &actions)
            if let end = deadlines[.countdown] { scheduleStep(after: next, deadline: end, &actions) }
        case (.alertCountdown, .countdown):
            state = .emergencySending
            clearTimer(.countdownStep, &actions)
            actions.append(.queueMessages(.alert, to: .everyContact))
            play(.alarm, &actions)
            setTimer(.networkFailure, t + configuration.networkFailureSeconds, &actions)
            actions.append(.journal(JournalEntry(.alerts, "countdown over: alerting every contact")))
            actions.append(.announce(.alerting(trigger == .manual ? .sos : .crash)))
        case (.emergencySending, .networkFailure):
            if alerted.isEmpty {
                state = .emergencySendingFailed
                actions.append(.journal(JournalEntry(.alerts, "no alert could be sent for \(Int(configuration.networkFailureSeconds / 60)) min: still trying")))
                actions.append(.announce(FleetEvent(.sendingFailed, summary: "no alert could be sent for \(Int(configuration.networkFailureSeconds / 60)) min: still trying")))
            } else {
                actions.append(.journal(JournalEntry(.alerts, "not every contact reached yet: still trying")))
                enterSent(at: t, into: &actions)
            }
        case (.emergencySent, .locationUpdate):
            actions.append(.queueMessages(.locationUpdate, to: .only(alerted)))
            setTimer(.locationUpdate, t + configuration.locationUpdateIntervalSeconds, &actions)
        case (.emergencySent, .trackingEnd):
            actions.append(.journal(JournalEntry(.alerts, "tracking over")))
            endEmergency(pattern: .fault, reason: "emergency over: press the button to resume protection", &actions)
        default:
            break
        }
    }

    private mutating func delivered(_ contact: String, at t: Double, into actions: inout [WorkflowAction]) {
        switch state {
        case .emergencySending, .emergencySent, .emergencySendingFailed:
            if !alerted.contains(contact) { alerted.append(contact) }
            alertsAwaited.removeAll { $0 == contact }
            // Out of a network failure, the first alert through is news enough.
            if state == .emergencySendingFailed || alertsAwaited.isEmpty { enterSent(at: t, into: &actions) }
        case .emergencyEnded, .armed, .disarmed:
            // An alert that was already in flight when the rider cancelled: follow it with the all-clear.
            actions.append(.queueMessages(.allClear, to: .only([contact])))
        case .alertCountdown:
            break
        }
    }

    private mutating func enterSent(at t: Double, into actions: inout [WorkflowAction]) {
        guard state != .emergencySent else { return }
        state = .emergencySent
        clearTimer(.networkFailure, &actions)
        actions.append(.startTracking)
        setTimer(.locationUpdate, t + configuration.locationUpdateIntervalSeconds, &actions)
        setTimer(.trackingEnd, t + configuration.trackingDurationSeconds, &actions)
        actions.append(.journal(JournalEntry(.alerts, "alert delivered: tracking the rider's position")))
        var facts = JSONLine()
        facts.add("contacts", alerted.count)
        actions.append(.announce(FleetEvent(.emergencySent, facts: facts)))
        if acknowledgement == nil { actions.append(.startCalls) }
    }

    /// The first acknowledgement stops the calls; later ones are journaled. Outside an emergency
    /// there is nothing to acknowledge.
    private mutating func acknowledge(_ acknowledgement: Acknowledgement, answering: AcknowledgedEmergency,
                                      into actions: inout [WorkflowAction]) {
        let how = acknowledgement.channel.did
        guard WorkflowState.alertsOut.contains(state) else {
            actions.append(.journal(JournalEntry(.messages, "\(acknowledgement.who) \(how) with no emergency under way: nothing to acknowledge")))
            return
        }
        if let id = emergencyID, let start = countdownStart, !answering.answers(id, startedAt: start, now: acknowledgement.time) {
            actions.append(.journal(JournalEntry(.alerts, "\(acknowledgement.who) \(how), but not this emergency (\(answering.named)): not taken, "
                + "the calls go on (an ack names the emergency: {\"cmd\":\"ack\",\"by\":\"…\",\"emergency\":\(id)})")))
            return
        }
        guard self.acknowledgement == nil else {
            actions.append(.journal(JournalEntry(.alerts, "\(acknowledgement.who) \(how) too")))
            return
        }
        self.acknowledgement = acknowledgement
        actions.append(.stopCalls)
        actions.append(.journal(JournalEntry(.alerts, "\(acknowledgement.who) acknowledged the alert (\(how)): calls stopped")))
        var facts = JSONLine()
        facts.add("by", acknowledgement.who)
        facts.add("channel", acknowledgement.channel.rawValue)
        actions.append(.announce(FleetEvent(.acknowledged, facts: facts)))
    }

    private mutating func endEmergency(pattern: BuzzerPattern, reason: String, _ actions: inout [WorkflowAction]) {
        state = .emergencyEnded
        crash = nil
        for timer in WorkflowTimer.allCases { clearTimer(timer, &actions) }
        actions.append(.stopTracking)
        actions.append(.stopCalls)
        play(pattern, &actions)
        actions.append(.journal(JournalEntry(.alerts, reason)))
        actions.append(.announce(FleetEvent(.emergencyEnded, summary: reason)))
    }

    // MARK: - Helpers

    private mutating func play(_ pattern: BuzzerPattern, _ actions: inout [WorkflowAction]) {
        buzzer = pattern.repeats ? pattern : .off
        actions.append(.buzzer(pattern))
    }

    private mutating func setTimer(_ timer: WorkflowTimer, _ deadline: Double, _ actions: inout [WorkflowAction]) {
        deadlines[timer] = deadline
        actions.append(.startTimer(timer, deadline: deadline))
    }

    private mutating func clearTimer(_ timer: WorkflowTimer, _ actions: inout [WorkflowAction]) {
        if deadlines.removeValue(forKey: timer) != nil { actions.append(.cancelTimer(timer)) }
    }
}
