// SPDX-License-Identifier: Apache-2.0
// The emergency workflow's vocabulary: its configuration, states, timers, events and actions, and
// what it journals. The machine that uses them is EmergencyWorkflow.swift.

/// Durations of the emergency workflow, with their allowed ranges.
package struct WorkflowConfiguration: Codable, Equatable, Sendable {
    /// Crash → alert countdown, seconds (10–300).
    package var countdownSeconds = 60.0
    /// Holding the button this long during a countdown means "I'm fine", seconds.
    package var cancelHoldSeconds = 1.0
    /// A long hold: manual SOS while armed, cancel after an alert went out, seconds.
    package var longHoldSeconds = 3.0
    /// Countdown of a manual SOS, seconds.
    package var manualCountdownSeconds = 10.0
    /// Location updates while tracking, every this many seconds.
    package var locationUpdateIntervalSeconds = 300.0
    /// Tracking lasts this long after the alert went out, seconds.
    package var trackingDurationSeconds = 1800.0
    /// No alert out after this long: the network counts as unusable (retries go on), seconds.
    package var networkFailureSeconds = 900.0

    package init() {}

    package func validationErrors() -> [String] {
        var errors: [String] = []
        if !(10...300).contains(countdownSeconds) { errors.append("countdownSeconds must be 10...300") }
        if !(0.5...5).contains(cancelHoldSeconds) { errors.append("cancelHoldSeconds must be 0.5...5") }
        if !(longHoldSeconds > cancelHoldSeconds && longHoldSeconds <= 10) {
            errors.append("longHoldSeconds must be above cancelHoldSeconds and at most 10")
        }
        if !(5...60).contains(manualCountdownSeconds) { errors.append("manualCountdownSeconds must be 5...60") }
        if !(60...3600).contains(locationUpdateIntervalSeconds) { errors.append("locationUpdateIntervalSeconds must be 60...3600") }
        if !(0...86_400).contains(trackingDurationSeconds) { errors.append("trackingDurationSeconds must be 0...86400") }
        if !(60...86_400).contains(networkFailureSeconds) { errors.append("networkFailureSeconds must be 60...86400") }
        return errors
    }
}

/// What an emergency raised by a crash knows of it.
package struct CrashFacts: Codable, Equatable, Sendable {
    /// When it was detected, in the events' time base (the wall clock in the agent).
    package var time: Double
    package var evidence: CrashEvidence?
}

/// The emergency states of docs/architecture.md.
package enum WorkflowState: String, Codable, CaseIterable, Sendable {
    case disarmed, armed, alertCountdown, emergencySending, emergencySent, emergencySendingFailed, emergencyEnded
}

extension WorkflowState {
    /// From the crash (or the SOS) until the emergency ends: a countdown, or alerts going or gone out.
    package static let emergencyUnderWay: Set<WorkflowState> = alertsOut.union([.alertCountdown])
    /// The countdown is over: alerts going or gone out (what a contact's OK acknowledges).
    package static let alertsOut: Set<WorkflowState> = [.emergencySending, .emergencySent, .emergencySendingFailed]
    /// No emergency under way: the buzzer says whether the rider is protected.
    package static let idle: Set<WorkflowState> = [.disarmed, .armed, .emergencyEnded]
}

package enum WorkflowTimer: String, Codable, CaseIterable, Sendable {
    case countdown, countdownStep, networkFailure, locationUpdate, trackingEnd
}

package enum MessageKind: String, Codable, Sendable {
    case alert
    case locationUpdate = "location_update"
    case allClear = "all_clear"
    /// To the rider's own phone: the parked bike fell over.
    case parkedFall = "parked_fall"
}

package enum Recipients: Codable, Equatable, Sendable {
    case everyContact
    case only([String])
    /// The rider's own phone (`profile set --phone`), never a contact.
    case rider
}

/// A contact's sign that they know of the emergency: they answered a call, replied OK by SMS, or a
/// dispatcher acknowledged it over MQTT.
package struct Acknowledgement: Codable, Equatable, Sendable {
    package enum Channel: String, Codable, Sendable { case call, sms, mqtt }
    /// The contact's name and masked number, as the journal and `status` show them.
    package var who: String
    package var channel: Channel
    package var time: Double

    package init(who: String, channel: Channel, time: Double) {
        self.who = who
        self.channel = channel
        self.time = time
    }
}

/// What an acknowledgement says it answers. A contact's OK or an answered call answers the
/// emergency under way; a dispatcher's, over a broker that keeps messages (retained, or queued in a
/// persistent session while the bike was away), must name it, so that one left over from before
/// cannot acknowledge a later emergency.
package enum AcknowledgedEmergency: Equatable, Sendable {
    case underWay
    /// Its id (`EmergencyWorkflow.emergencyID`), or the time the acknowledgement was given.
    case named(id: Int?, issuedAt: Double?)

    /// Whether it answers the emergency `id`, which began at `start`; `now` is when it came. A time
    /// given more than 5 minutes ahead of the bike's clock says the two clocks disagree (a Pi
    /// without RTC not yet set): refused, the id still works.
    func answers(_ id: Int, startedAt start: Double, now: Double) -> Bool {
        switch self {
        case .underWay: true
        case .named(let named?, _): named == id
        case .named(nil, let issued?): issued >= start && issued <= now + 300
        case .named(nil, nil): false
        }
    }

    /// As the journal says it.
    var named: String {
        switch self {
        case .underWay: "the emergency under way"
        case .named(let id?, _): "emergency \(id)"
        case .named(nil, let issued?): "given at \(Int(issued)), before it began"
        case .named(nil, nil): "no emergency named"
        }
    }
}

/// How an acknowledgement came, as the journal and `status` say it.
extension Acknowledgement.Channel {
    /// "Sam (…) answered the call".
    package var did: String {
        switch self {
        case .call: "answered the call"
        case .sms: "replied OK"
        case .mqtt: "acknowledged over MQTT"
        }
    }

    /// "acknowledged: by Sam (…), answering a call".
    package var how: String {
        switch self {
        case .call: "answering a call"
        case .sms: "replying OK"
        case .mqtt: "over MQTT"
        }
    }
}

/// What a journal line is about: `rideguard events --kind` takes these names.
package enum JournalKind: String, Codable, CaseIterable, Sendable, CustomStringConvertible {
    /// The emergency: countdowns, alerts, calls, acknowledgements.
    case alerts
    /// What the detector saw: impacts, crashes, parked falls, the bike's context.
    case detections
    /// SMS in and out: queued, sent, failed, answered.
    case messages
    /// The agent itself: arming, storage, the modem's and the supply's health, sensor faults.
    case system

    package var description: String { rawValue }
}

/// A line for the journal: `kind` is alerts, detections, system or messages.
package struct JournalEntry: Codable, Equatable, Sendable {
    package var kind: JournalKind
    package var text: String

    package init(_ kind: JournalKind, _ text: String) {
        self.kind = kind
        self.text = text
    }
}

package enum WorkflowEvent: Equatable, Sendable {
    /// The owner checked configuration, contacts and sensors; `problems` empty means ready.
    case arm(at: Double, problems: [String])
    case disarm(at: Double)
    /// `evidence` is what the alert tells (time, impact, posture); nil only in tests of the states.
    case crashDetected(at: Double, summary: String, evidence: CrashEvidence? = nil)
    /// The parked bike fell over: nobody was riding it.
    case parkedFall(at: Double, summary: String)
    case gesture(GestureDecoder.Gesture)
    case timerFired(WorkflowTimer, at: Double)
    /// Alerts were written to the outbox for these contacts (numbers): each is awaited, delivered
    /// or failed, before the alert is out.
    case alertsQueued(to: [String], at: Double)
    /// The modem delivered an alert to this contact (number).
    case alertDelivered(contact: String, at: Double)
    /// The alert to this contact cannot be sent (the network refused the number for good).
    case alertFailed(contact: String, at: Double)
    /// A part's health: its problem, or nil when it works (again). Whether the rider is protected
    /// follows (`protection`).
    case health(HealthPart, problem: String?, at: Double)
    /// The detector watches for a crash: it has seen the bike upright again after one, or started
    /// afresh (the sampler restarted).
    case detectorWatching(at: Double)
    /// Messages the emergency needs could not be queued (the database failed); the owner retries.
    case messagesBlocked(at: Double, summary: String)
    /// The messages blocked before are queued now.
    case messagesQueued(at: Double, summary: String)
    /// A usable GPS fix arrived.
    case locationFix(at: Double)
    /// A contact answered a call or replied OK, or a dispatcher acknowledged, naming the emergency.
    case acknowledged(Acknowledgement, answering: AcknowledgedEmergency = .underWay)
    /// Another member of the rider's riding group has an emergency (`summary` says who, how far,
    /// which way), or, nil, none has any more. Never an emergency of this rider's own.
    case groupAlert(summary: String?, at: Double)
}

package enum WorkflowAction: Equatable, Sendable {
    case buzzer(BuzzerPattern)
    case startTimer(WorkflowTimer, deadline: Double)
    case cancelTimer(WorkflowTimer)
    case queueMessages(MessageKind, to: Recipients)
    /// Alerts not yet sent are dropped (the rider cancelled before they went out).
    case cancelQueuedAlerts
    case startTracking
    case stopTracking
    case journal(JournalEntry)
    /// Sound a pattern once, then what was playing goes on (a parked fall over a warning).
    case buzzerOnce(BuzzerPattern)
    /// Tell the fleet (the events table, published over MQTT when configured).
    case announce(FleetEvent)
    /// Ring the contacts, round after round, until acknowledged or stopped.
    case startCalls
    case stopCalls
    /// The state changed: write the snapshot before acting on the other actions.
    case persist
}
