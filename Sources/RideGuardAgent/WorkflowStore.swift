import FoundationEssentials
import Glibc
import RideGuardCore
import Storage

/// Keeps the emergency workflow's snapshot in the database, written before its actions are
/// performed, so that a restart resumes an emergency where it was.
public struct WorkflowStore: Sendable {
    public let database: RideGuardDatabase

    public init(database: RideGuardDatabase) {
        self.database = database
    }

    /// The saved workflow, nil when there is none yet. Throws when it is unreadable (the caller
    /// reports it and starts afresh; the snapshot is kept aside for inspection).
    public func load() throws -> EmergencyWorkflow? {
        guard let json = try database.emergencySnapshot() else { return nil }
        do {
            return try JSONDecoder().decode(EmergencyWorkflow.self, from: Data(json.utf8))
        } catch {
            try? database.setAsideEmergencySnapshot()
            throw WorkflowStoreError(reason: "the saved emergency is not readable (kept aside as emergency.bad): \(error)")
        }
    }

    public func save(_ workflow: EmergencyWorkflow) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try database.saveEmergencySnapshot(String(decoding: try encoder.encode(workflow), as: UTF8.self))
    }
}

public struct WorkflowStoreError: Error, CustomStringConvertible, Sendable {
    public var reason: String
    public var description: String { reason }
}
