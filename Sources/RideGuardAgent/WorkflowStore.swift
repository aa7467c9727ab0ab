import Foundation
import RideGuardCore

/// Keeps the emergency workflow's snapshot in a file, replaced atomically (write, fsync, rename),
/// so a power cut leaves either the old or the new state, never half of one.
/// (The storage work moves it into the database.)
public struct WorkflowStore: Sendable {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    /// The saved workflow, nil when there is none yet. Throws when the file is unreadable or not a
    /// workflow (the caller reports it and starts afresh; it keeps the bad file for inspection).
    public func load() throws -> EmergencyWorkflow? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        do {
            return try JSONDecoder().decode(EmergencyWorkflow.self, from: data)
        } catch {
            try? FileManager.default.removeItem(atPath: path + ".bad")
            try? FileManager.default.moveItem(atPath: path, toPath: path + ".bad")
            throw WorkflowStoreError(path: path, reason: "not a saved workflow (kept as \(path).bad): \(error)")
        }
    }

    public func save(_ workflow: EmergencyWorkflow) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(workflow)
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw WorkflowStoreError(path: temporary, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == data.count, fsync(fd) == 0 else {
            throw WorkflowStoreError(path: temporary, reason: "write failed: \(String(cString: strerror(errno)))")
        }
        guard rename(temporary, path) == 0 else {
            throw WorkflowStoreError(path: path, reason: "rename failed: \(String(cString: strerror(errno)))")
        }
        let directory = open((path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
    }
}

public struct WorkflowStoreError: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var reason: String
    public var description: String { "\(path): \(reason)" }
}
