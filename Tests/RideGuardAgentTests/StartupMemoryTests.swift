// SPDX-License-Identifier: Apache-2.0
import Foundation
import RideGuardAgent
import RideGuardTestSupport
import Testing

@Suite struct StartupMemoryTests {
    func residentFileKB() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("RssFile:") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }

    /// This test process's own binary stands in for the agent's: its read-only mappings are
    /// handed back and the resident file pages drop, and the code keeps running.
    @Test func startupCodePagesAreHandedBack() throws {
        let before = try residentFileKB()
        let released = StartupMemory.release()
        let after = try residentFileKB()
        #expect(released > 1_000_000, "released \(released) bytes")
        #expect(after < before - 1000, "RssFile \(before) kB before, \(after) kB after")
        #expect([3, 1, 2].sorted() == [1, 2, 3])   // code paged out runs again from the binary
    }
}
