// SPDX-License-Identifier: Apache-2.0
import RideGuardCore

/// Messages the workflow asked for: their kind, to whom, the emergency they tell of (the workflow
/// as saved), and the numbers an earlier attempt already queued.
package struct MessageRequest: Sendable {
    package var kind: MessageKind
    package var recipients: Recipients
    package var emergency: EmergencyWorkflow
    package var skipping: Set<String>
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
