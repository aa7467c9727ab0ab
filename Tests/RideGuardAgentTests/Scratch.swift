import Foundation

/// The tests' temporary files and folders, all under one folder of this test run's that is
/// removed when the run ends: the one way the tests make one.
enum Scratch {
    /// `/tmp/rideguard-tests-<pid>`, mode 0755: the processes the tests start as other users reach
    /// inside it, as they would /tmp.
    static let root: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("rideguard-tests-\(getpid())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        chmod(url.path, 0o755)
        atexit { try? FileManager.default.removeItem(at: Scratch.root) }
        return url
    }()

    /// A new path under the root, nothing made there: `name` with a tag of its own before its
    /// extension ("records.sqlite" → "records-1a2b3c4d.sqlite"). Short: a Unix socket's path
    /// inside it must stay under 108 bytes.
    static func path(_ name: String) -> URL {
        let tag = UUID().uuidString.prefix(8).lowercased()
        let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
        let file = dot.map { "\(name[..<$0])-\(tag)\(name[$0...])" } ?? "\(name)-\(tag)"
        return root.appendingPathComponent(file)
    }

    /// A new folder under the root, of mode `mode`.
    static func folder(_ name: String, mode: mode_t = 0o755) throws -> URL {
        let url = path(name)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        chmod(url.path, mode)
        return url
    }
}
