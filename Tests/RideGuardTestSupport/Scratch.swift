// SPDX-License-Identifier: Apache-2.0
import Foundation

/// The tests' temporary files and folders, all under one folder of this test run's that is
/// removed when the run ends: the one way the tests make one.
package enum Scratch {
    /// `/tmp/rideguard-tests-XXXXXX`, made new by mkdtemp (never a folder or a link someone made
    /// first), then mode 0755: the processes the tests start as other users reach inside it, as
    /// they would /tmp.
    package static let root: URL = {
        var template = Array(FileManager.default.temporaryDirectory.appendingPathComponent("rideguard-tests-XXXXXX").path.utf8CString)
        guard let made = mkdtemp(&template) else { fatalError("cannot make the tests' folder: \(String(cString: strerror(errno)))") }
        let url = URL(fileURLWithPath: String(cString: made))
        chmod(url.path, 0o755)
        atexit { try? FileManager.default.removeItem(at: Scratch.root) }
        return url
    }()

    /// A new path under the root, nothing made there: `name` with a tag of its own before its
    /// extension ("records.sqlite" → "records-1a2b3c4d.sqlite"). Short: a Unix socket's path
    /// inside it must stay under 108 bytes.
    package static func path(_ name: String) -> URL {
        let tag = UUID().uuidString.prefix(8).lowercased()
        let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
        let file = dot.map { "\(name[..<$0])-\(tag)\(name[$0...])" } ?? "\(name)-\(tag)"
        return root.appendingPathComponent(file)
    }

    /// A new folder under the root, of mode `mode`.
    package static func folder(_ name: String, mode: mode_t = 0o755) throws -> URL {
        let url = path(name)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        chmod(url.path, mode)
        return url
    }
}
