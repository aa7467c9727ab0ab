// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

/// Runs the built `rideguard` executable, as a user would.
package enum Rideguard {
    package static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// Real recordings made by others, beside the clone (never copied into it): the tests that read
    /// them run where the folder is (CI has it) and are skipped, saying so, where it is not.
    package static let sharedData = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/data")
    package static let ptwFalls = sharedData.appendingPathComponent("ptw-falls")
    package static var hasPTWFalls: Bool { FileManager.default.fileExists(atPath: ptwFalls.path) }
    package static let ptwFallsMissing: Comment = "needs the real falls in ../shared/data/ptw-falls beside the clone (not in the repository)"
    package static let fixtures = packageRoot.appendingPathComponent("Tests/Fixtures")

    /// The binary next to the test bundle (the same build configuration).
    package static var binary: URL {
        let besideTests = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for folder in [besideTests, besideTests.deletingLastPathComponent()] {
            let candidate = folder.appendingPathComponent("rideguard")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return packageRoot.appendingPathComponent(".build/debug/rideguard")
    }

    package struct Result {
        package var status: Int32
        package var stdout: String
        package var stderr: String
        package var lines: [String] { stdout.split(separator: "\n").map(String.init) }

        package init(status: Int32, stdout: String, stderr: String) {
            self.status = status
            self.stdout = stdout
            self.stderr = stderr
        }
    }

    /// `run`, waited for on a thread of its own: a test whose jobs run on one thread (`.onOneThread`)
    /// keeps that thread free for the agent that must answer the command meanwhile.
    package static func run(_ arguments: [String], stdin: Data? = nil, program: URL = binary) async throws -> Result {
        try await offThread { try run(arguments, stdin: stdin, program: program) }
    }

    /// Runs the binary (or another `program`) with its standard streams on files (Foundation's pipe
    /// reads trap on EINTR while other tests' children exit), waits, and returns what it printed.
    package static func run(_ arguments: [String], stdin: Data? = nil, program: URL = binary) throws -> Result {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        let id = UUID().uuidString
        let outFile = try temporaryFile("stdout-\(id)", contents: Data())
        let errFile = try temporaryFile("stderr-\(id)", contents: Data())
        defer {
            try? FileManager.default.removeItem(at: outFile)
            try? FileManager.default.removeItem(at: errFile)
        }
        process.standardOutput = try FileHandle(forWritingTo: outFile)
        process.standardError = try FileHandle(forWritingTo: errFile)
        if let stdin {
            process.standardInput = try FileHandle(forReadingFrom: try temporaryFile("stdin-\(id)", contents: stdin))
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        try process.run()
        process.waitUntilExit()
        return Result(status: process.terminationStatus,
                      stdout: String(decoding: try Data(contentsOf: outFile), as: UTF8.self),
                      stderr: String(decoding: try Data(contentsOf: errFile), as: UTF8.self))
    }

    package static func temporaryFile(_ name: String, contents: Data) throws -> URL {
        let url = Scratch.root.appendingPathComponent(name)
        try contents.write(to: url)
        return url
    }
}
