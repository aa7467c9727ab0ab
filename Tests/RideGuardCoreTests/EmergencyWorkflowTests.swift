// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
@testable import RideGuardCore

/// Drives a workflow through events and keeps what it asked for.
struct WorkflowDriver {
    var workflow = EmergencyWorkflow()
    var actions: [WorkflowAction] = []

    init(to state: WorkflowState = .armed, at t: Double = 0) {
        WorkflowDriver.drive(&self, to: state, at: t)
        #expect(workflow.state == state)
        actions = []
    }

    private static func drive(_ d: inout WorkflowDriver, to state: WorkflowState, at t: Double) {
        switch state {
        case .disarmed: break
        case .armed: d.send(.arm(at: t, problems: []))
        case .alertCountdown:
            drive(&d, to: .armed, at: t)
            d.send(.crashDetected(at: t, summary: "test"))
        case .emergencySending:
            drive(&d, to: .alertCountdown, at: t)
            d.send(.timerFired(.countdown, at: t + 60))
            d.send(.alertsQueued(to: ["+33611111111"], at: t + 60))
        case .emergencySent:
            drive(&d, to: .emergencySending, at: t)
            d.send(.alertDelivered(contact: "+33611111111", at: t + 70))
        case .emergencySendingFailed:
            drive(&d, to: .emergencySending, at: t)
            d.send(.timerFired(.networkFailure, at: t + 60 + 900))
        case .emergencyEnded:
            drive(&d, to: .emergencySent, at: t)
            d.send(.detectorWatching(at: t + 90))        // the bike stood upright again
            d.send(.gesture(.down(at: t + 97)))
            d.send(.gesture(.held(seconds: 3, at: t + 100)))
            d.send(.gesture(.released(duration: 3.2, at: t + 100.2)))
        }
    }

    @discardableResult
    mutating func send(_ event: WorkflowEvent) -> [WorkflowAction] {
        let produced = workflow.handle(event)
        actions += produced
        return produced
    }

    var messages: [WorkflowAction] { actions.filter { if case .queueMessages = $0 { true } else { false } } }
    var buzzer: [BuzzerPattern] { actions.compactMap { if case .buzzer(let p) = $0 { p } else { nil } } }
}

@Suite struct EmergencyWorkflowTests {
    @Test func armsOnlyWhenReadyAndSaysWhyNot() {
        var d = WorkflowDriver(to: .disarmed)
        d.send(.arm(at: 0, problems: ["no emergency contact"]))
        #expect(d.workflow.state == .disarmed)
        #expect(d.buzzer == [.fault])
        #expect(d.actions.contains(.journal(JournalEntry(.system, "not protecting: no emergency contact"))))
        d.send(.arm(at: 1, problems: []))
        #expect(d.workflow.state == .armed)
        #expect(d.buzzer.last == .armed)
    }

    @Test func crashStartsACountdownThatEscalates() {
        var d = WorkflowDriver(to: .armed)
        d.send(.crashDetected(at: 100, summary: "bike down"))
        #expect(d.workflow.state == .alertCountdown)
        #expect(d.actions.contains(.startTimer(.countdown, deadline: 160)))
        #expect(d.actions.contains(.startTimer(.countdownStep, deadline: 130)))
        #expect(d.buzzer == [.countdownSlow])
        d.send(.timerFired(.countdownStep, at: 130))
        #expect(d.buzzer.last == .countdownFast)
        #expect(d.actions.contains(.startTimer(.countdownStep, deadline: 150)))
        d.send(.timerFired(.countdownStep, at: 150))
        #expect(d.buzzer.last == .countdownUrgent)
        #expect(d.workflow.countdownRemaining(at: 155) == 5)
        #expect(d.messages.isEmpty)
    }

    @Test(arguments: [0.05, 0.3, 0.9])
    func shortPressDuringCountdownDoesNothing(duration: Double) {
        var d = WorkflowDriver(to: .alertCountdown)
        d.send(.gesture(.down(at: 10)))
        d.send(.gesture(.released(duration: duration, at: 10 + duration)))
        #expect(d.workflow.state == .alertCountdown)
        #expect(d.actions.isEmpty)
    }

    @Test func holdingOneSecondMeansImFine() {
        var d = WorkflowDriver(to: .alertCountdown)
        d.send(.detectorWatching(at: 15))                    // a pinned collision: the bike stands
        d.send(.gesture(.held(seconds: 1, at: 20)))
        #expect(d.workflow.state == .armed)
        #expect(d.buzzer == [.acknowledge])
        #expect(d.actions.contains(.cancelTimer(.countdown)))
        #expect(d.messages.isEmpty)
        // The cancelled countdown's timer may still fire: it must not send anything.
        d.send(.timerFired(.countdown, at: 60))
        #expect(d.workflow.state == .armed)
        #expect(d.messages.isEmpty)
    }

    /// A short press (down, released after 0.3 s) in every state: what it does, and nothing more.
    @Test(arguments: [
        (WorkflowState.disarmed, WorkflowState.disarmed, [BuzzerPattern]()),
        (.armed, .armed, []),
        (.alertCountdown, .alertCountdown, []),
        (.emergencySending, .emergencySending, [.off]),
        (.emergencySent, .emergencySent, [.off]),
        (.emergencySendingFailed, .emergencySendingFailed, [.off]),
        (.emergencyEnded, .armed, [.resumed]),
    ])
    func shortPressInEveryState(from: WorkflowState, to: WorkflowState, buzzer: [BuzzerPattern]) {
        var d = WorkflowDriver(to: from, at: 0)
        d.send(.gesture(.down(at: 500)))
        d.send(.gesture(.released(duration: 0.3, at: 500.3)))
        #expect(d.workflow.state == to)
        #expect(d.buzzer == buzzer)
        #expect(d.messages.isEmpty)
    }

    /// A 3 s hold in every state.
    @Test(arguments: [
        (WorkflowState.disarmed, WorkflowState.disarmed), (.armed, .alertCountdown), (.alertCountdown, .armed),
        (.emergencySending, .emergencyEnded), (.emergencySent, .emergencyEnded),
        (.emergencySendingFailed, .emergencyEnded), (.emergencyEnded, .emergencyEnded),
    ])
    func longHoldInEveryState(from: WorkflowState, to: WorkflowState) {
        var d = WorkflowDriver(to: from, at: 0)
        d.send(.gesture(.down(at: 500)))
        d.send(.gesture(.held(seconds: 1, at: 501)))
        d.send(.gesture(.held(seconds: 3, at: 503)))
        #expect(d.workflow.state == to)
    }

    @Test func holdingImFinePastThreeSecondsDoesNotRaiseAnSOS() {
        var d = WorkflowDriver(to: .alertCountdown)
        d.send(.gesture(.down(at: 20)))
        d.send(.gesture(.held(seconds: 1, at: 21)))
        #expect(d.workflow.state == .armed)
        d.send(.gesture(.held(seconds: 3, at: 23)))
        #expect(d.workflow.state == .armed)
        d.send(.gesture(.released(duration: 4, at: 24)))
        #expect(d.workflow.state == .armed)
        // A new press can raise one.
        d.send(.gesture(.down(at: 30)))
        d.send(.gesture(.held(seconds: 3, at: 33)))
        #expect(d.workflow.state == .alertCountdown)
    }

    @Test func countdownExpiryAlertsEveryContactAndKeepsTheAlarm() {
        var d = WorkflowDriver(to: .alertCountdown)
        d.send(.timerFired(.countdown, at: 59.5))       // early: not yet
        #expect(d.workflow.state == .alertCountdown)
        d.send(.timerFired(.countdown, at: 60))
        #expect(d.workflow.state == .emergencySending)
        #expect(d.messages == [.queueMessages(.alert, to: .everyContact)])
        #expect(d.buzzer == [.alarm])
        #expect(d.actions.contains(.startTimer(.networkFailure, deadline: 960)))
    }

    @Test func deliveryStartsTrackingWithPeriodicUpdates() {
        var d = WorkflowDriver(to: .emergencySending)
        d.send(.alertsQueued(to: ["+33622222222"], at: 60))
        d.send(.alertDelivered(contact: "+33611111111", at: 70))
        #expect(d.workflow.state == .emergencySending)
        d.send(.alertDelivered(contact: "+33622222222", at: 72))
        #expect(d.workflow.state == .emergencySent)
        #expect(d.actions.contains(.startTracking))
        #expect(d.actions.contains(.cancelTimer(.networkFailure)))
        #expect(d.actions.contains(.startTimer(.locationUpdate, deadline: 372)))
        #expect(d.actions.contains(.startTimer(.trackingEnd, deadline: 1872)))
        d.actions = []
        d.send(.timerFired(.locationUpdate, at: 372))
        #expect(d.messages == [.queueMessages(.locationUpdate, to: .only(["+33611111111", "+33622222222"]))])
        #expect(d.actions.contains(.startTimer(.locationUpdate, deadline: 672)))
        d.send(.timerFired(.trackingEnd, at: 1872))
        #expect(d.workflow.state == .emergencyEnded)
        #expect(d.actions.contains(.stopTracking))
    }

    @Test func networkUnusableForTheWindowIsAFailureThatRecovers() {
        var d = WorkflowDriver(to: .emergencySending)
        d.send(.timerFired(.networkFailure, at: 960))
        #expect(d.workflow.state == .emergencySendingFailed)
        #expect(d.buzzer.isEmpty)                      // the alarm keeps sounding
        d.send(.alertDelivered(contact: "+33611111111", at: 1500))
        #expect(d.workflow.state == .emergencySent)
        #expect(d.actions.contains(.startTimer(.locationUpdate, deadline: 1800)))
    }

    @Test func partialDeliveryAtTheWindowCountsAsSent() {
        var d = WorkflowDriver(to: .emergencySending)
        d.send(.alertDelivered(contact: "+33611111111", at: 100))
        d.send(.timerFired(.networkFailure, at: 960))
        #expect(d.workflow.state == .emergencySent)
    }

    @Test(arguments: [WorkflowState.emergencySending, .emergencySent, .emergencySendingFailed])
    func shortPressSilencesLongHoldCancelsWithAllClear(state: WorkflowState) {
        var d = WorkflowDriver(to: state)
        d.send(.gesture(.released(duration: 0.3, at: 200)))
        #expect(d.workflow.state == state)
        #expect(d.buzzer == [.off])
        d.send(.gesture(.held(seconds: 1, at: 300)))
        #expect(d.workflow.state == state)            // one second is not enough once help is called
        d.send(.gesture(.held(seconds: 3, at: 302)))
        #expect(d.workflow.state == .emergencyEnded)
        #expect(d.actions.contains(.cancelQueuedAlerts))
        #expect(d.actions.contains(.stopTracking))
        let expected: [WorkflowAction] = state == .emergencySent ? [.queueMessages(.allClear, to: .only(["+33611111111"]))] : []
        #expect(d.messages == expected)
    }

    @Test func anAlertStillInFlightAfterCancellingGetsItsAllClear() {
        var d = WorkflowDriver(to: .emergencySending)
        d.send(.gesture(.held(seconds: 3, at: 65)))
        #expect(d.workflow.state == .emergencyEnded)
        d.send(.alertDelivered(contact: "+33633333333", at: 66))
        #expect(d.messages == [.queueMessages(.allClear, to: .only(["+33633333333"]))])
    }

    @Test func pressAfterTheEmergencyResumesProtection() {
        var d = WorkflowDriver(to: .emergencyEnded)
        d.send(.crashDetected(at: 200, summary: "while ended"))
        #expect(d.workflow.state == .emergencyEnded)
        d.send(.gesture(.released(duration: 0.2, at: 210)))
        #expect(d.workflow.state == .armed)
        // The crash seen while ended holds the detector until the bike stands again: the warning
        // that sounded since the emergency ended goes on.
        #expect(!d.buzzer.contains(.resumed) && d.workflow.protection.level == .notProtecting)
        d.send(.detectorWatching(at: 220))
        #expect(d.buzzer.last == .resumed)
    }

    @Test func longHoldWhileArmedIsAManualSOSThatCanBeCancelled() {
        var d = WorkflowDriver(to: .armed)
        d.send(.gesture(.held(seconds: 1, at: 10)))
        #expect(d.workflow.state == .armed)
        d.send(.gesture(.held(seconds: 3, at: 12)))
        #expect(d.workflow.state == .alertCountdown)
        #expect(d.workflow.trigger == .manual)
        #expect(d.actions.contains(.startTimer(.countdown, deadline: 22)))
        d.send(.gesture(.released(duration: 3.5, at: 12.5)))
        d.send(.gesture(.held(seconds: 1, at: 14)))
        #expect(d.workflow.state == .armed)
        #expect(d.messages.isEmpty)
    }

    @Test func manualSOSRunsTheSameAlertPath() {
        var d = WorkflowDriver(to: .armed)
        d.send(.gesture(.held(seconds: 3, at: 12)))
        d.send(.timerFired(.countdown, at: 22))
        #expect(d.workflow.state == .emergencySending)
        #expect(d.messages == [.queueMessages(.alert, to: .everyContact)])
    }

    @Test func crashDuringACountdownDoesNotRestartIt() {
        var d = WorkflowDriver(to: .alertCountdown)
        d.send(.crashDetected(at: 30, summary: "second impact"))
        #expect(d.workflow.state == .alertCountdown)
        #expect(d.workflow.deadlines[.countdown] == 60)
        #expect(!d.actions.contains { if case .startTimer = $0 { true } else { false } })
    }

    /// The rider holds "I'm fine" for one second exactly as the countdown ends: whichever event the
    /// owner delivers first wins, and the outcome is consistent either way.
    @Test func pressAtTheExactExpiryInstant() {
        var timerFirst = WorkflowDriver(to: .alertCountdown)
        timerFirst.send(.timerFired(.countdown, at: 60))
        timerFirst.send(.gesture(.held(seconds: 1, at: 60)))
        #expect(timerFirst.workflow.state == .emergencySending)   // help is called; a 3 s hold cancels it
        var holdFirst = WorkflowDriver(to: .alertCountdown)
        holdFirst.send(.gesture(.held(seconds: 1, at: 60)))
        holdFirst.send(.timerFired(.countdown, at: 60))
        #expect(holdFirst.workflow.state == .armed)
        #expect(holdFirst.messages.isEmpty)
    }

    @Test func disarmIsIgnoredDuringAnEmergency() {
        for state in [WorkflowState.alertCountdown, .emergencySending, .emergencySent, .emergencySendingFailed] {
            var d = WorkflowDriver(to: state)
            d.send(.disarm(at: 500))
            #expect(d.workflow.state == state)
        }
        var armed = WorkflowDriver(to: .armed)
        armed.send(.disarm(at: 5))
        #expect(armed.workflow.state == .disarmed)
    }

    @Test func aBlindIMUIsNotProtectingUntilItSamplesAgainWhatEverArmingSays() {
        var d = WorkflowDriver(to: .armed)
        d.send(.health(.imu, problem: "the IMU sends no sample", at: 5))
        #expect(d.workflow.state == .armed)
        #expect(d.workflow.protection == Protection(.notProtecting, reasons: ["the IMU sends no sample"]))
        #expect(d.buzzer == [.fault])
        #expect(d.actions.contains(.journal(JournalEntry(.system, "not protecting: the IMU sends no sample"))))
        // The arming check (contacts fine) does not hide the blind sensor: before, it chirped "armed".
        d.send(.arm(at: 6, problems: []))
        #expect(d.buzzer == [.fault])
        #expect(d.workflow.protection.level == .notProtecting)
        d.send(.health(.imu, problem: nil, at: 7))
        #expect(d.buzzer == [.fault, .resumed])
        #expect(d.workflow.protection == Protection(.protecting))
        #expect(d.actions.contains(.journal(JournalEntry(.system, "protecting again: every part works"))))
    }

    @Test func aPartBackStopsOnlyItsOwnWarning() {
        var d = WorkflowDriver(to: .armed)
        d.send(.health(.button, problem: "button lost", at: 5))
        #expect(d.buzzer == [.degraded])
        d.send(.health(.imu, problem: "no sample", at: 6))
        #expect(d.buzzer == [.degraded, .fault])
        // Before, any part's recovery silenced every warning: the storage back hid a blind IMU.
        d.send(.health(.button, problem: nil, at: 9))
        #expect(d.buzzer == [.degraded, .fault])
        #expect(d.workflow.protection == Protection(.notProtecting, reasons: ["no sample"]))
        #expect(d.actions.contains(.journal(JournalEntry(.system, "button: the button works again"))))
        // During a countdown the countdown's pattern goes on: a part's news does not touch it.
        var counting = WorkflowDriver(to: .alertCountdown)
        counting.send(.health(.imu, problem: "no sample", at: 9))
        counting.send(.health(.imu, problem: nil, at: 10))
        #expect(counting.buzzer.isEmpty)
        #expect(counting.workflow.protection.level == .emergency)
    }

    /// A disk that refuses writes leaves the rider protected, degraded: its own pattern, never the
    /// "not protecting" one, and a crash still counts down.
    @Test func aStorageFaultDegradesProtectionAndACrashStillCountsDown() {
        var d = WorkflowDriver(to: .armed)
        d.send(.health(.storage, problem: "the database x is on a read-only filesystem", at: 5))
        #expect(d.workflow.state == .armed)
        #expect(d.buzzer == [.degraded])
        #expect(d.workflow.protection == Protection(.degraded, reasons: ["the database x is on a read-only filesystem"]))
        #expect(d.actions.contains(.journal(JournalEntry(.system, "storage fault: the database x is on a read-only filesystem (protecting, degraded)"))))
        d.send(.health(.storage, problem: nil, at: 9))
        #expect(d.buzzer == [.degraded, .resumed])
        d.send(.health(.storage, problem: "full", at: 10))
        d.send(.crashDetected(at: 11, summary: "bike down", evidence: nil))
        #expect(d.workflow.state == .alertCountdown)
        #expect(d.buzzer.last == .countdownSlow)
        // A blind sensor's pattern (not protecting) is not hidden by the storage one.
        var blind = WorkflowDriver(to: .armed)
        blind.send(.health(.imu, problem: "no sample", at: 5))
        blind.send(.health(.storage, problem: "full", at: 6))
        #expect(blind.buzzer == [.fault])
        #expect(blind.workflow.protection == Protection(.notProtecting, reasons: ["no sample"]))
    }

    @Test func theLastContactRemovedStopsProtectingAndTheFirstAddedArmsAgain() {
        var d = WorkflowDriver(to: .armed)
        d.send(.arm(at: 5, problems: ["no emergency contact"]))
        #expect(d.workflow.state == .disarmed)
        #expect(d.buzzer == [.fault])
        #expect(d.workflow.protection == Protection(.notProtecting, reasons: ["no emergency contact"]))
        #expect(d.actions.contains(.announce(FleetEvent(.notProtecting, summary: "no emergency contact"))))
        d.send(.arm(at: 6, problems: []))
        #expect(d.workflow.state == .armed)
        #expect(d.buzzer == [.fault, .armed])
        #expect(d.workflow.protection == Protection(.protecting))
    }

    /// Contacts removed during an emergency: it goes on (alerts to those read when it started), but
    /// neither "I'm fine" nor the rider's resume after it claims protection there is none of.
    @Test func anEmergencyEndedWithoutAContactDoesNotClaimProtection() {
        var countdown = WorkflowDriver(to: .alertCountdown)
        countdown.send(.arm(at: 2, problems: ["no emergency contact"]))
        #expect(countdown.workflow.state == .alertCountdown)
        countdown.send(.gesture(.down(at: 3)))
        countdown.send(.gesture(.held(seconds: 1, at: 4)))
        #expect(countdown.workflow.state == .disarmed)
        #expect(countdown.workflow.protection == Protection(.notProtecting, reasons: ["no emergency contact"]))
        // The three quick beeps sound, then the warning goes on.
        #expect(Array(countdown.actions.filter { if case .buzzer = $0 { true } else if case .buzzerOnce = $0 { true } else { false } }.suffix(2))
                == [.buzzer(.fault), .buzzerOnce(.acknowledge)])

        var ended = WorkflowDriver(to: .emergencyEnded)
        #expect(ended.workflow.protection.level == .notProtecting)
        ended.send(.arm(at: 200, problems: ["no emergency contact"]))
        ended.send(.gesture(.down(at: 201)))
        ended.send(.gesture(.released(duration: 0.2, at: 201.2)))
        #expect(ended.workflow.state == .disarmed)
        #expect(ended.workflow.buzzer == .fault)
        #expect(!ended.buzzer.contains(.resumed))
        #expect(ended.workflow.protection == Protection(.notProtecting, reasons: ["no emergency contact"]))
    }

    /// A crash puts the detector on hold until it has seen the bike upright again (a lying bike
    /// cannot fall again, and a reference the crash left wrong may never see it upright): until
    /// then the rider's resume does not claim protection, the warning sounds, and `status` says why.
    @Test func afterACrashProtectionWaitsForTheDetectorToSeeTheBikeUpright() {
        var d = WorkflowDriver(to: .alertCountdown)
        d.send(.gesture(.held(seconds: 1, at: 5)))               // "I'm fine"
        #expect(d.workflow.state == .armed)
        #expect(d.workflow.protection.level == .notProtecting)
        #expect(d.actions.contains(.buzzerOnce(.acknowledge)))
        #expect(d.workflow.protection.reasons.first?.hasPrefix("the bike has not stood upright since the crash") == true)
        #expect(d.buzzer.last == .fault)
        d.actions = []
        d.send(.detectorWatching(at: 20))
        #expect(d.workflow.protection == Protection(.protecting))
        #expect(d.buzzer == [.resumed])
        #expect(d.actions.contains(.journal(JournalEntry(.system, "protecting again: every part works"))))
        // A restart's detector has no crash in progress: a restored workflow does not wait for it.
        var restored = WorkflowDriver(to: .alertCountdown)
        _ = restored.workflow.resume(at: 30)
        #expect(!restored.workflow.awaitingUpright)
    }

    /// After the rider cancelled an alert the agent waits for a press to protect again: the
    /// buzzer says so, as `status` does (it used to fall silent).
    @Test func afterTheRidersCancelTheWarningSaysNotProtectingUntilResumed() {
        let d = WorkflowDriver(to: .emergencyEnded)
        #expect(d.workflow.protection == Protection(.notProtecting, reasons: ["the emergency is over: press the button to resume protection"]))
        #expect(d.workflow.buzzer == .fault)
        var resumed = d
        resumed.send(.gesture(.down(at: 300)))
        resumed.send(.gesture(.released(duration: 0.2, at: 300.2)))
        #expect(resumed.workflow.protection == Protection(.protecting))
        #expect(resumed.buzzer == [.fault, .resumed].suffix(1).map { $0 })
    }

    @Test func aParkedFallOverAWarningLeavesTheWarningOn() {
        var d = WorkflowDriver(to: .armed)
        d.send(.health(.imu, problem: "no sample", at: 1))
        d.send(.parkedFall(at: 5, summary: "lying at 80°"))
        #expect(d.actions.contains(.buzzerOnce(.parkedFall)))
        #expect(d.workflow.buzzer == .fault)
        var quiet = WorkflowDriver(to: .armed)
        quiet.send(.parkedFall(at: 5, summary: "lying at 80°"))
        #expect(quiet.buzzer == [.parkedFall])
    }

    /// Issue 43, point 11: a dispatcher's acknowledgement names the emergency it answers; one that
    /// names none, another, or a time before it began (left queued on a broker) stops nothing.
    @Test func aDispatchersAckMustNameThisEmergency() throws {
        var d = WorkflowDriver(to: .emergencySent, at: 1000)
        let id = try #require(d.workflow.emergencyID)
        #expect(id == 1000)
        let anna = Acknowledgement(who: "Anna", channel: .mqtt, time: 1100)
        // None named, given before it began, another one, a time far ahead of the bike's clock.
        for stale in [AcknowledgedEmergency.named(id: nil, issuedAt: nil), .named(id: nil, issuedAt: 900), .named(id: 400, issuedAt: 1100),
                      .named(id: nil, issuedAt: 1100 + 86_400)] {
            let actions = d.send(.acknowledged(anna, answering: stale))
            #expect(!actions.contains(.stopCalls), "\(stale)")
            #expect(actions.contains { if case .journal(let entry) = $0 { entry.text.hasPrefix("Anna acknowledged over MQTT, but not this emergency") } else { false } })
        }
        #expect(d.workflow.acknowledgement == nil)
        #expect(d.send(.acknowledged(anna, answering: .named(id: nil, issuedAt: 1100))).contains(.stopCalls))
        var byID = WorkflowDriver(to: .emergencySent, at: 1000)
        #expect(byID.send(.acknowledged(anna, answering: .named(id: id, issuedAt: nil))).contains(.stopCalls))
        // A contact's OK answers the emergency under way, as before.
        var sms = WorkflowDriver(to: .emergencySent, at: 1000)
        #expect(sms.send(.acknowledged(Acknowledgement(who: "Sam", channel: .sms, time: 1100))).contains(.stopCalls))
    }

    /// A part's health and the arming check change no saved state: a card is not written (or, read
    /// only, failed) for each; a step of the emergency still is.
    @Test func healthAloneIsNotWritten() {
        var d = WorkflowDriver(to: .armed)
        #expect(!d.send(.health(.storage, problem: "read-only", at: 1)).contains(.persist))
        #expect(!d.send(.health(.imu, problem: "no sample", at: 2)).contains(.persist))
        #expect(d.send(.crashDetected(at: 3, summary: "down")).contains(.persist))
    }

    @Test func blockedMessagesSoundTheFaultUntilTheyAreQueued() {
        var d = WorkflowDriver(to: .emergencySending)
        d.send(.messagesBlocked(at: 61, summary: "could not queue the alert: disk I/O error; retrying"))
        #expect(d.workflow.state == .emergencySending)
        #expect(d.buzzer.last == .fault)
        #expect(d.actions.contains(.journal(JournalEntry(.alerts, "could not queue the alert: disk I/O error; retrying"))))
        d.send(.messagesQueued(at: 63, summary: "alert queued after 2 attempts"))
        #expect(d.buzzer.last == .alarm)
    }

    @Test func theCrashsFactsLastAsLongAsItsEmergency() throws {
        let evidence = CrashEvidence(reason: .lyingStill, postureDegrees: 86, stillSeconds: 1.3, peakG: 5.3, deltaV: 5.1,
                                     peakRotationDegreesPerSecond: 187, speedBefore: nil, fallTime: 28.8)
        var d = WorkflowDriver(to: .armed)
        d.send(.crashDetected(at: 30, summary: "bike down", evidence: evidence))
        #expect(d.workflow.crash == CrashFacts(time: 30, evidence: evidence))
        // Persisted with the state: a restart keeps them.
        let restored = try JSONDecoder().decode(EmergencyWorkflow.self, from: JSONEncoder().encode(d.workflow))
        #expect(restored.crash == CrashFacts(time: 30, evidence: evidence))
        // "I'm fine" ends it: a manual SOS afterwards knows no crash.
        d.send(.gesture(.down(at: 32)))
        d.send(.gesture(.held(seconds: 1, at: 33)))
        #expect(d.workflow.state == .armed && d.workflow.crash == nil)
        d.send(.gesture(.released(duration: 1.1, at: 33.1)))
        d.send(.gesture(.down(at: 40)))
        d.send(.gesture(.held(seconds: 3, at: 43)))
        #expect(d.workflow.state == .alertCountdown && d.workflow.trigger == .manual && d.workflow.crash == nil)
    }

    /// The workflow knows whom the alert was queued for: a number the network refuses for good
    /// settles its share, and the alert is out once the others are delivered, in either order.
    @Test func aContactWhoseAlertFailsForGoodDoesNotHoldTheAlertBack() {
        var d = WorkflowDriver(to: .emergencySending)
        d.send(.alertsQueued(to: ["+33622222222", "+33633333333"], at: 60))
        d.send(.alertFailed(contact: "+33622222222", at: 62))
        #expect(d.workflow.state == .emergencySending, "nobody reached yet")
        d.send(.alertDelivered(contact: "+33611111111", at: 65))
        #expect(d.workflow.state == .emergencySending, "+33633333333 still awaited")
        d.send(.alertDelivered(contact: "+33633333333", at: 66))
        #expect(d.workflow.state == .emergencySent && d.workflow.alerted == ["+33611111111", "+33633333333"])

        var failedLast = WorkflowDriver(to: .emergencySending)
        failedLast.send(.alertsQueued(to: ["+33622222222"], at: 60))
        failedLast.send(.alertDelivered(contact: "+33611111111", at: 65))
        failedLast.send(.alertFailed(contact: "+33622222222", at: 70))
        #expect(failedLast.workflow.state == .emergencySent)

        var nobody = WorkflowDriver(to: .emergencySending)
        nobody.send(.alertFailed(contact: "+33611111111", at: 62))
        #expect(nobody.workflow.state == .emergencySending, "no alert out: the network-failure timer decides")
    }

    @Test func firstFixAfterAnAlertWithoutOneSendsAnUpdate() {
        var d = WorkflowDriver(to: .emergencySent)
        d.send(.locationFix(at: 80))
        #expect(d.messages == [.queueMessages(.locationUpdate, to: .only(["+33611111111"]))])
        d.send(.locationFix(at: 81))
        #expect(d.messages.count == 1)
    }

    /// Calls start once the alert went out; the first acknowledgement stops them and stays in the
    /// state (for `status`, across a restart); the next emergency starts afresh.
    @Test func theAlertDeliveredStartsTheCallsAndAnAcknowledgementStopsThem() throws {
        var d = WorkflowDriver(to: .emergencySending)
        #expect(!d.actions.contains(.startCalls), "no call before the SMS went out")
        d.send(.alertDelivered(contact: "+33611111111", at: 70))
        #expect(d.actions.contains(.startCalls))
        let sam = Acknowledgement(who: "Sam (+33•••••1111)", channel: .sms, time: 80)
        let first = d.send(.acknowledged(sam))
        #expect(first.contains(.stopCalls) && first.first == .persist)
        #expect(first.contains(.journal(JournalEntry(.alerts, "Sam (+33•••••1111) acknowledged the alert (replied OK): calls stopped"))))
        #expect(d.workflow.acknowledgement == sam)
        let jo = d.send(.acknowledged(Acknowledgement(who: "Jo", channel: .call, time: 85)))
        #expect(jo == [.journal(JournalEntry(.alerts, "Jo answered the call too"))])
        #expect(d.workflow.state == .emergencySent, "an acknowledgement ends no emergency: tracking goes on")

        // After a restart: still acknowledged, so no calls again.
        var restored = try JSONDecoder().decode(EmergencyWorkflow.self, from: JSONEncoder().encode(d.workflow))
        #expect(restored.acknowledgement == sam)
        #expect(!restored.resume(at: 90).contains(.startCalls))
    }

    @Test func aRestartBeforeAnyAcknowledgementRingsAgain() throws {
        let d = WorkflowDriver(to: .emergencySent)
        var restored = try JSONDecoder().decode(EmergencyWorkflow.self, from: JSONEncoder().encode(d.workflow))
        #expect(restored.resume(at: 90).contains(.startCalls))
    }

    @Test func theAllClearAndTheEndOfTrackingStopTheCalls() {
        var cancelled = WorkflowDriver(to: .emergencySent)
        cancelled.send(.gesture(.down(at: 97)))
        let held = cancelled.send(.gesture(.held(seconds: 3, at: 100)))
        #expect(held.contains(.stopCalls) && cancelled.workflow.state == .emergencyEnded)
        var over = WorkflowDriver(to: .emergencySent)
        let end = try! #require(over.workflow.deadlines[.trackingEnd])
        #expect(over.send(.timerFired(.trackingEnd, at: end)).contains(.stopCalls))
    }

    @Test func anOKWithNoEmergencyAcknowledgesNothing() {
        var d = WorkflowDriver(to: .armed)
        let actions = d.send(.acknowledged(Acknowledgement(who: "Sam", channel: .sms, time: 5)))
        #expect(actions == [.journal(JournalEntry(.messages, "Sam replied OK with no emergency under way: nothing to acknowledge"))])
        #expect(d.workflow.acknowledgement == nil)
        // A new emergency forgets the last one's acknowledgement.
        var again = WorkflowDriver(to: .emergencySent)
        again.send(.acknowledged(Acknowledgement(who: "Sam", channel: .sms, time: 80)))
        again.send(.timerFired(.trackingEnd, at: try! #require(again.workflow.deadlines[.trackingEnd])))
        #expect(again.workflow.acknowledgement != nil, "status still tells who acknowledged the emergency just over")
        again.send(.gesture(.down(at: 5000)))
        again.send(.gesture(.released(duration: 0.2, at: 5000.2)))
        again.send(.crashDetected(at: 5100, summary: "test"))
        #expect(again.workflow.state == .alertCountdown && again.workflow.acknowledgement == nil)
    }

    @Test func aRestartInEmergencySentSendsNoExtraPosition() throws {
        var d = WorkflowDriver(to: .armed)
        d.send(.locationFix(at: 5))                     // riding with a fix: the alert carries it
        d.send(.crashDetected(at: 10, summary: "bike down"))
        d.send(.timerFired(.countdown, at: 70))
        d.send(.alertsQueued(to: ["+33611111111"], at: 70))
        d.send(.alertDelivered(contact: "+33611111111", at: 75))
        #expect(d.workflow.state == .emergencySent)
        var restored = try JSONDecoder().decode(EmergencyWorkflow.self, from: JSONEncoder().encode(d.workflow))
        let resumed = restored.resume(at: 90)
        let firstFix = restored.handle(.locationFix(at: 92))   // the new run's first fix
        #expect(!(resumed + firstFix).contains { if case .queueMessages = $0 { true } else { false } }, "\(resumed + firstFix)")
        // The next update comes at its time, 5 min after the alert.
        let due = restored.handle(.timerFired(.locationUpdate, at: 75 + 300))
        #expect(due.contains(.queueMessages(.locationUpdate, to: .only(["+33611111111"]))))
    }

    @Test func afterARestartWhileArmedTheFirstFixStillFollowsAnAlertWithoutOne() throws {
        var d = WorkflowDriver(to: .armed)
        d.send(.locationFix(at: 5))
        var restored = try JSONDecoder().decode(EmergencyWorkflow.self, from: JSONEncoder().encode(d.workflow))
        _ = restored.resume(at: 100)                    // no fix in this run yet
        _ = restored.handle(.crashDetected(at: 110, summary: "bike down"))
        _ = restored.handle(.timerFired(.countdown, at: 170))
        _ = restored.handle(.alertsQueued(to: ["+33611111111"], at: 170))
        _ = restored.handle(.alertDelivered(contact: "+33611111111", at: 175))
        #expect(restored.handle(.locationFix(at: 180)).contains(.queueMessages(.locationUpdate, to: .only(["+33611111111"]))))
    }

    @Test func everyStateChangeAsksToPersistFirst() {
        var d = WorkflowDriver(to: .armed)
        let produced = d.send(.crashDetected(at: 1, summary: "x"))
        #expect(produced.first == .persist)
        let nothing = d.send(.gesture(.released(duration: 0.1, at: 2)))
        #expect(!nothing.contains(.persist))
    }

    /// Restart in each state: the snapshot survives JSON, and resuming restores buzzer and timers.
    @Test(arguments: WorkflowState.allCases)
    func restartResumesEveryState(state: WorkflowState) throws {
        let d = WorkflowDriver(to: state, at: 1000)
        let data = try JSONEncoder().encode(d.workflow)
        var restored = try JSONDecoder().decode(EmergencyWorkflow.self, from: data)
        #expect(restored == d.workflow)
        let actions = restored.resume(at: 1200)   // after every event above: down for a while
        #expect(actions.first == .buzzer(d.workflow.buzzer))
        for (timer, deadline) in d.workflow.deadlines {
            #expect(actions.contains(.startTimer(timer, deadline: deadline)))
        }
        #expect(actions.contains(.startTracking) == (state == .emergencySent))
        // And it goes on as before: a countdown that ended while the agent was down alerts at once.
        if state == .alertCountdown {
            _ = restored.handle(.timerFired(.countdown, at: 1200))
            #expect(restored.state == .emergencySending)
        }
    }

    @Test func resumeClampsADeadlineTheClockMovedAway() {
        var d = WorkflowDriver(to: .alertCountdown, at: 5_000)
        let actions = d.workflow.resume(at: 10)  // the clock went back by more than an hour
        #expect(actions.contains(.startTimer(.countdown, deadline: 70)))
    }

    @Test func configurationRanges() {
        var config = WorkflowConfiguration()
        #expect(config.validationErrors().isEmpty)
        config.countdownSeconds = 5
        config.longHoldSeconds = 0.8
        #expect(config.validationErrors() == ["countdownSeconds must be 10...300", "longHoldSeconds must be above cancelHoldSeconds and at most 10"])
    }
}

@Suite struct GestureDecoderTests {
    @Test func bounceCountsAsOnePress() {
        var decoder = GestureDecoder()
        var gestures: [GestureDecoder.Gesture] = []
        for (i, level) in [true, false, true, false, true].enumerated() {
            gestures += decoder.edge(pressed: level, at: 1 + Double(i) * 0.002)
        }
        gestures += decoder.tick(at: 1.1)
        #expect(gestures == [.down(at: 1.008)])
        for (i, level) in [false, true, false].enumerated() {
            gestures += decoder.edge(pressed: level, at: 1.4 + Double(i) * 0.003)
        }
        gestures += decoder.tick(at: 1.5)
        #expect(gestures.last == .released(duration: 1.406 - 1.008, at: 1.406))
        #expect(gestures.count == 2)
    }

    @Test func holdsAreReportedWhileStillHeld() {
        var decoder = GestureDecoder(holdThresholds: [3, 1])
        var gestures = decoder.edge(pressed: true, at: 10)
        #expect(decoder.nextDeadline == 10.03)
        gestures += decoder.tick(at: 10.03)
        #expect(decoder.nextDeadline == 11)
        gestures += decoder.tick(at: 11.2)
        #expect(gestures == [.down(at: 10), .held(seconds: 1, at: 11)])
        gestures += decoder.tick(at: 13.5)
        gestures += decoder.edge(pressed: false, at: 14)
        gestures += decoder.tick(at: 14.1)
        #expect(gestures == [.down(at: 10), .held(seconds: 1, at: 11), .held(seconds: 3, at: 13), .released(duration: 4, at: 14)])
        #expect(decoder.nextDeadline == nil)
    }

    @Test func aGlitchShorterThanTheDebounceIsIgnored() {
        var decoder = GestureDecoder()
        var gestures = decoder.edge(pressed: true, at: 5)
        gestures += decoder.edge(pressed: false, at: 5.01)
        gestures += decoder.tick(at: 6)
        #expect(gestures.isEmpty)
    }

    @Test func holdReachedLateIsStillReportedAtItsTime() {
        // The owner's tick came late (a busy system): the hold is reported with the time it was reached.
        var decoder = GestureDecoder()
        _ = decoder.edge(pressed: true, at: 0)
        let gestures = decoder.tick(at: 5)
        #expect(gestures == [.down(at: 0), .held(seconds: 1, at: 1), .held(seconds: 3, at: 3)])
    }

    /// The owner ticks exactly at `nextDeadline`; rounding must not leave it waiting forever.
    @Test(arguments: [0.1, 0.7, 1.3, 12345.678, 1_700_000_000.123])
    func tickingAtTheDeadlineAlwaysProgresses(start: Double) throws {
        var decoder = GestureDecoder()
        var gestures = decoder.edge(pressed: true, at: start)
        for _ in 0..<3 {
            let deadline = try #require(decoder.nextDeadline)
            gestures += decoder.tick(at: deadline)
        }
        #expect(gestures.count == 3)
        #expect(decoder.nextDeadline == nil)
    }
}

/// Issue 29: what the fleet is told, one event a step of the emergency, with its facts.
@Suite struct FleetEventTests {
    static func announced(_ actions: [WorkflowAction]) -> [String] {
        actions.compactMap { if case .announce(let event) = $0 { event.json(at: 1, position: nil) } else { nil } }
    }

    @Test func eachStepOfAnEmergencyIsAnnouncedOnceInOrder() {
        var d = WorkflowDriver(to: .disarmed)
        var said: [String] = []
        said += Self.announced(d.send(.arm(at: 0, problems: [])))
        said += Self.announced(d.send(.crashDetected(at: 1, summary: "bike down")))
        said += Self.announced(d.send(.timerFired(.countdown, at: 61)))
        said += Self.announced(d.send(.alertsQueued(to: ["+33611111111"], at: 61)))
        said += Self.announced(d.send(.alertDelivered(contact: "+33611111111", at: 70)))
        said += Self.announced(d.send(.acknowledged(Acknowledgement(who: "Anna", channel: .mqtt, time: 80))))
        said += Self.announced(d.send(.acknowledged(Acknowledgement(who: "Sam", channel: .sms, time: 81))))   // too: not news
        said += Self.announced(d.send(.gesture(.down(at: 97))))
        said += Self.announced(d.send(.gesture(.held(seconds: 3, at: 100))))
        #expect(said == [
            #"{"event":"armed","t":1.000}"#,
            #"{"event":"crash_detected","t":1.000,"summary":"bike down","protecting":true}"#,
            #"{"event":"countdown_started","t":1.000,"seconds":60,"emergency":1}"#,
            #"{"event":"alerting","t":1.000,"trigger":"crash"}"#,
            #"{"event":"emergency_sent","t":1.000,"contacts":1}"#,
            #"{"event":"acknowledged","t":1.000,"by":"Anna","channel":"mqtt"}"#,
            #"{"event":"all_clear","t":1.000,"contacts":1}"#,
            #"{"event":"emergency_ended","t":1.000,"summary":"the rider cancelled the emergency: all-clear sent to 1 contact(s)"}"#,
            // Until the rider presses the button again, the bike is not protected: said as it is.
            #"{"event":"not_protecting","t":1.000,"summary":"the emergency is over: press the button to resume protection"}"#,
        ])
    }

    @Test func aManualSOSAndImFineAreAnnounced() {
        var d = WorkflowDriver(to: .armed)
        var said = Self.announced(d.send(.gesture(.down(at: 0))))
        said += Self.announced(d.send(.gesture(.held(seconds: 3, at: 3))))
        said += Self.announced(d.send(.gesture(.released(duration: 3.1, at: 3.1))))
        said += Self.announced(d.send(.gesture(.down(at: 5))))
        said += Self.announced(d.send(.gesture(.held(seconds: 1, at: 6))))
        #expect(said == [#"{"event":"sos_raised","t":1.000,"seconds":10,"emergency":3}"#, #"{"event":"im_fine","t":1.000}"#])
    }

    /// Another member's alert sounds the group's pattern only when nothing of the rider's own does,
    /// and never changes the rider's state; its end silences only that pattern.
    @Test func aGroupAlertSoundsOnlyWhenNothingOfTheRidersOwnDoes() {
        var d = WorkflowDriver(to: .armed)
        #expect(d.send(.groupAlert(summary: "bike1 needs help", at: 1)).contains(.buzzer(.groupAlert)))
        #expect(d.workflow.state == .armed)
        #expect(d.send(.crashDetected(at: 2, summary: "bike down")).contains(.buzzer(.countdownSlow)), "the rider's own crash comes first")
        #expect(!d.send(.groupAlert(summary: "bike3 needs help", at: 3)).contains { if case .buzzer = $0 { true } else { false } })
        #expect(!d.send(.groupAlert(summary: nil, at: 4)).contains { if case .buzzer = $0 { true } else { false } }, "the countdown goes on sounding")
        var quiet = WorkflowDriver(to: .armed)
        _ = quiet.send(.groupAlert(summary: "bike1 needs help", at: 1))
        #expect(quiet.send(.groupAlert(summary: nil, at: 2)).contains(.buzzer(.off)))
    }

    /// The facts, then the position last known and its age at the event (the publisher adds `seq`).
    @Test func anEventCarriesThePositionLastKnownAndItsAge() {
        let fix = Fix(time: 95, latitude: 45.1, longitude: 5.7, accuracy: 4.6)
        let json = FleetEvent(.parkedFall, summary: "on its side").json(at: 100, position: fix)
        #expect(json == #"{"event":"parked_fall","t":100.000,"summary":"on its side","lat":45.100000,"lon":5.700000,"accuracy_m":5,"fix_age_s":5}"#)
    }
}
