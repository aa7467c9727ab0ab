// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import RideGuardCore
import Storage

/// Keeps the emergency workflow's snapshot in the database, written before its actions are
/// performed, so that a restart resumes an emergency where it was.
package struct WorkflowStore: Sendable {
    package let database: RideGuardDatabase

    package init(database: RideGuardDatabase) {
        self.database = database
    }

    /// The saved workflow, nil when there is none yet. Throws when it is unreadable (the caller
    /// reports it and starts afresh; the snapshot is kept aside for inspection).
    package func load() throws -> EmergencyWorkflow? {
        guard let json = try database.emergencySnapshot() else { return nil }
        do {
            return try JSONDecoder().decode(EmergencyWorkflow.self, from: Data(json.utf8))
        } catch {
            try? database.setAsideEmergencySnapshot()
            throw WorkflowStoreError(reason: "the saved emergency is not readable (kept aside as emergency.bad): \(error)")
        }
    }

    package func save(_ workflow: EmergencyWorkflow) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try database.saveEmergencySnapshot(String(decoding: try encoder.encode(workflow), as: UTF8.self))
    }
}

package struct WorkflowStoreError: Error, CustomStringConvertible, Sendable {
    package var reason: String
    package var description: String { reason }
}
