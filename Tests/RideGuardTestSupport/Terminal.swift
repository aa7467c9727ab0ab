// SPDX-License-Identifier: Apache-2.0
import Foundation

/// A child process on a pseudo-terminal, driven like a person at an SSH prompt: wait for a
/// question, type an answer.
package final class Terminal {
    package let process: Spawned
    private let master: Int32
    package private(set) var output = ""
    private var consumed: String.Index

    package init(_ arguments: [String]) throws {
        var master: Int32 = 0, slave: Int32 = 0
        guard openpty(&master, &slave, nil, nil, nil) == 0 else { throw SpawnError(program: "openpty", code: errno) }
        self.master = master
        defer { close(slave) }
        let path = try pseudoTerminalPath(slave)
        process = try Spawned(arguments, stdin: path, stdout: path, stderr: path)
        consumed = output.startIndex
    }

    deinit {
        process.kill()
        close(master)
    }

    /// Reads until the output after the last match contains `text`; false after `seconds`.
    @discardableResult
    package func expect(_ text: String, seconds: Double = 20) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let found = output.range(of: text, range: consumed..<output.endIndex) {
                consumed = found.upperBound
                return true
            }
            guard Date() < deadline, readSome(until: deadline) else { return false }
        }
    }

    /// Types `line` and Enter.
    package func type(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
    }

    /// Everything until the child closes the terminal, then its exit code.
    package func finish(seconds: Double = 30) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, readSome(until: deadline) {}
        return process.wait(max(0, deadline.timeIntervalSinceNow))
    }

    private func readSome(until deadline: Date) -> Bool {
        var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, Int32(max(0, min(200, deadline.timeIntervalSinceNow * 1000))))
        guard ready > 0 else { return ready == 0 || errno == EINTR }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = read(master, &buffer, buffer.count)
        guard n > 0 else { return false }          // EIO: the child closed its side
        let offset = output.distance(from: output.startIndex, to: consumed)
        output += String(decoding: buffer[0..<n], as: UTF8.self)
        consumed = output.index(output.startIndex, offsetBy: offset)
        return true
    }
}

/// The path of a pseudo-terminal's slave side. `ttyname_r`: `ttyname`'s one static buffer, read
/// while another test's thread opened a pty, gave a garbage path (and once a 34 GB allocation).
package func pseudoTerminalPath(_ fd: Int32) throws -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
    let result = ttyname_r(fd, &buffer, buffer.count)
    guard result == 0 else { throw SpawnError(program: "ttyname_r", code: result) }
    return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
}
