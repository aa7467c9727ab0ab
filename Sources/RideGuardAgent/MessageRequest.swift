// SPDX-License-Identifier: Apache-2.0
import RideGuardCore

/// Messages the workflow asked for: their kind, to whom, the emergency they tell of, and the
/// numbers an earlier attempt already queued.
package struct MessageRequest: Sendable {
    package var kind: MessageKind
    package var recipients: Recipients
    package var emergency: EmergencyFacts
    package var skipping: Set<String>
}

/// What a message says of its emergency, from the workflow as saved (never from an earlier one):
/// a crash or the rider's SOS, when it began, and the crash's evidence.
package struct EmergencyFacts: Equatable, Sendable {
    package var trigger: EmergencyWorkflow.Trigger
    /// The crash's time; for an SOS, the countdown's start.
    package var startedAt: Double?
    package var crash: CrashFacts?

    package init(_ workflow: EmergencyWorkflow) {
        trigger = workflow.trigger ?? .manual
        crash = workflow.crash
        startedAt = workflow.crash?.time ?? workflow.countdownStart
    }
}

/// What queueing did: the numbers queued, and what stopped it short, if anything did.
package struct QueueOutcome: Sendable {
    package var queued: [String]
    package var problem: String?

    package init(queued: [String], problem: String? = nil) {
        self.queued = queued
        self.problem = problem
    }
}
