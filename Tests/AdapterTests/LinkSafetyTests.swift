// SPDX-License-Identifier: Apache-2.0
import Foundation
@testable import Storage
import RideGuardCore
import SystemCalls
import RideGuardTestSupport
import Testing

/// Links and folders a local user could plant to turn the agent's writes against it.
@Suite(.serialized) struct LinkSafetyTests {
    func folder(_ name: String) throws -> String {
        let path = Scratch.path(name).path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A group member links the coming crash trace's name to the database: the agent's trace is
    /// refused there (and the database untouched), never written through the link.
    @Test func aCrashTraceIsNeverWrittenThroughALink() throws {
        let state = try folder("links")
        let database = state + "/rideguard.sqlite"
        try Data("SQLite format 3\0precious".utf8).write(to: URL(fileURLWithPath: database))
        let trace = state + "/crash-2026-11-24T05-00-00Z.csv"
        #expect(symlink(database, trace) == 0)
        #expect(throws: TraceError.self) {
            _ = try TraceFileWriter(path: trace, hasGyro: false, hasSpeed: false, metadata: [], agentOwned: true)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: database)) == Data("SQLite format 3\0precious".utf8))
        // A file already there is not overwritten either; a fresh name is created 0640.
        try Data("a planted file".utf8).write(to: URL(fileURLWithPath: state + "/planted.csv"))
        #expect(throws: TraceError.self) {
            _ = try TraceFileWriter(path: state + "/planted.csv", hasGyro: false, hasSpeed: false, metadata: [], agentOwned: true)
        }
        let writer = try TraceFileWriter(path: state + "/fresh.csv", hasGyro: false, hasSpeed: false, metadata: [], agentOwned: true)
        try writer.flush()
        var info = stat()
        #expect(stat(state + "/fresh.csv", &info) == 0 && info.st_mode & 0o777 == 0o640)
    }

    /// Root running a command on a database path that is a link: the file it points at keeps its
    /// owner (it was handed to the service user through the link).
    @Test(.enabled(if: geteuid() == 0)) func rootNeverChownsThroughALink() throws {
        let state = try folder("chown")
        #expect(chown(state, 65534, 65534) == 0)                   // a folder the service user owns
        let target = try folder("root-owned") + "/secret"
        try Data("root's".utf8).write(to: URL(fileURLWithPath: target))
        let link = state + "/rideguard.sqlite"
        #expect(symlink(target, link) == 0)
        RideGuardDatabase.giveToFolderOwner(link, folder: state)
        var info = stat()
        #expect(stat(target, &info) == 0 && info.st_uid == 0, "root's file was handed over through the link")
    }

    /// Under umask 000 the missing parents of a private folder are created 0755, not 0777.
    @Test func missingParentsGetAnExplicitMode() throws {
        let base = try folder("parents")
        let previous = umask(0)
        defer { umask(previous) }
        try PrivateFiles.createFolder(base + "/a/b/run", mode: 0o750)
        for (path, mode) in [(base + "/a", 0o755), (base + "/a/b", 0o755), (base + "/a/b/run", 0o750)] {
            var info = stat()
            #expect(stat(path, &info) == 0 && Int(info.st_mode & 0o777) == mode, "\(path): \(String(info.st_mode & 0o777, radix: 8))")
        }
    }
}
