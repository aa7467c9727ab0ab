// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
@testable import RideGuardCore

/// The snapshot the agent keeps in its database is read back after an upgrade: what 0.2.0 wrote
/// (it left out a field while it was empty) resumes as it was, and what this version writes reads
/// back equal.
@Suite struct WorkflowSnapshotTests {
    /// Written by 0.2.0's `WorkflowStore` (sorted keys), in four states: a new agent; armed with
    /// the modem at fault; alerts queued to one contact; that alert delivered.
    static let fresh = #"{"alerted":[],"buzzer":"off","configuration":{"cancelHoldSeconds":1,"countdownSeconds":60,"locationUpdateIntervalSeconds":300,"longHoldSeconds":3,"manualCountdownSeconds":10,"networkFailureSeconds":900,"trackingDurationSeconds":1800},"deadlines":[],"fixSeenSinceEmergency":false,"pressConsumed":false,"state":"disarmed"}"#
    static let armed = #"{"alerted":[],"armingProblems":[],"buzzer":"fault","configuration":{"cancelHoldSeconds":1,"countdownSeconds":60,"locationUpdateIntervalSeconds":300,"longHoldSeconds":3,"manualCountdownSeconds":10,"networkFailureSeconds":900,"trackingDurationSeconds":1800},"deadlines":[],"fixSeenSinceEmergency":false,"health":{"modem":"modem: no SIM"},"pressConsumed":false,"state":"armed"}"#
    static let sending = #"{"alerted":[],"alertsAwaited":["+33611111111"],"armingProblems":[],"awaitingUpright":true,"buzzer":"alarm","configuration":{"cancelHoldSeconds":1,"countdownSeconds":60,"locationUpdateIntervalSeconds":300,"longHoldSeconds":3,"manualCountdownSeconds":10,"networkFailureSeconds":900,"trackingDurationSeconds":1800},"countdownStart":1764000000,"crash":{"time":1764000000},"deadlines":["networkFailure",1764000960],"fixSeenSinceEmergency":false,"pressConsumed":false,"state":"emergencySending","trigger":"crash"}"#
    static let sent = #"{"alerted":["+33611111111"],"alertsAwaited":[],"armingProblems":[],"awaitingUpright":true,"buzzer":"alarm","configuration":{"cancelHoldSeconds":1,"countdownSeconds":60,"locationUpdateIntervalSeconds":300,"longHoldSeconds":3,"manualCountdownSeconds":10,"networkFailureSeconds":900,"trackingDurationSeconds":1800},"countdownStart":1764000000,"crash":{"time":1764000000},"deadlines":["locationUpdate",1764000370,"trackingEnd",1764001870],"fixSeenSinceEmergency":false,"pressConsumed":false,"state":"emergencySent","trigger":"crash"}"#

    func read(_ json: String) throws -> EmergencyWorkflow {
        try JSONDecoder().decode(EmergencyWorkflow.self, from: Data(json.utf8))
    }

    func written(_ workflow: EmergencyWorkflow) throws -> EmergencyWorkflow {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try JSONDecoder().decode(EmergencyWorkflow.self, from: encoder.encode(workflow))
    }

    @Test func aNewAgentsSnapshotReadsAsANewWorkflow() throws {
        let workflow = try read(Self.fresh)
        #expect(workflow == EmergencyWorkflow())
        #expect(workflow.health.isEmpty && workflow.alertsAwaited.isEmpty && !workflow.awaitingUpright)
        #expect(workflow.armingProblems == nil, "no arming check yet: the page says the agent is starting")
        #expect(workflow.protection.reasons == ["starting: the contacts are not checked yet"])
    }

    @Test func anArmedSnapshotKeepsItsFaultAndLosesNothing() throws {
        let workflow = try read(Self.armed)
        #expect(workflow.state == .armed && workflow.buzzer == .fault)
        #expect(workflow.health == [.modem: "modem: no SIM"])
        #expect(workflow.protection == Protection(.notProtecting, reasons: ["modem: no SIM"]))
        #expect(!workflow.awaitingUpright, "0.2.0 wrote nothing while the detector waited for no upright")
        #expect(try written(workflow) == workflow)
        // Written as earlier versions read it: the parts by name, the position's flag by its old name.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let text = String(decoding: try encoder.encode(workflow), as: UTF8.self)
        #expect(text.contains(#""health":{"modem":"modem: no SIM"}"#) && text.contains(#""fixSeenSinceEmergency":false"#), "\(text)")
        // A part this version does not know is left out, and the rest is read.
        let unknown = try read(Self.armed.replacingOccurrences(of: #"{"modem":"modem: no SIM"}"#, with: #"{"gearbox":"stuck","modem":"modem: no SIM"}"#))
        #expect(unknown.health == [.modem: "modem: no SIM"])
    }

    @Test func anEmergencyUnderWayResumesAndItsAlertGoesOut() throws {
        var workflow = try read(Self.sending)
        #expect(workflow.state == .emergencySending && workflow.alertsAwaited == ["+33611111111"])
        #expect(workflow.awaitingUpright && workflow.crash?.time == 1_764_000_000 && workflow.emergencyID == 1_764_000_000)
        #expect(try written(workflow) == workflow)
        let actions = workflow.resume(at: 1_764_000_065)
        #expect(actions.contains(.startTimer(.networkFailure, deadline: 1_764_000_960)))
        #expect(!workflow.awaitingUpright, "a restarted detector has no crash in progress")
        _ = workflow.handle(.alertDelivered(contact: "+33611111111", at: 1_764_000_070))
        #expect(workflow.state == .emergencySent && workflow.alerted == ["+33611111111"])
    }

    @Test func aSentEmergencyResumesItsTrackingAndCalls() throws {
        var workflow = try read(Self.sent)
        #expect(workflow.state == .emergencySent && workflow.acknowledgement == nil)
        let actions = workflow.resume(at: 1_764_000_100)
        #expect(actions.contains(.startTracking) && actions.contains(.startCalls))
        #expect(actions.contains(.startTimer(.trackingEnd, deadline: 1_764_001_870)))
    }

    /// Older still: a snapshot without the awaited contacts (written before they were kept) goes
    /// out on its first delivery.
    @Test func aSnapshotWithoutAwaitedAlertsGoesOutOnItsFirstDelivery() throws {
        var json = try #require(try JSONSerialization.jsonObject(with: Data(Self.sending.utf8)) as? [String: Any])
        json["alertsAwaited"] = nil
        json["awaitingUpright"] = nil
        var workflow = try JSONDecoder().decode(EmergencyWorkflow.self, from: JSONSerialization.data(withJSONObject: json))
        #expect(workflow.state == .emergencySending && workflow.alertsAwaited.isEmpty)
        _ = workflow.handle(.alertDelivered(contact: "+33611111111", at: 1_764_000_070))
        #expect(workflow.state == .emergencySent)
    }

    /// Without its configuration or state a snapshot is not one: the store says so (it is never
    /// resumed as something it was not).
    @Test func aSnapshotWithoutItsStateIsRefused() throws {
        var json = try #require(try JSONSerialization.jsonObject(with: Data(Self.armed.utf8)) as? [String: Any])
        json["state"] = nil
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(EmergencyWorkflow.self, from: JSONSerialization.data(withJSONObject: json))
        }
    }
}
