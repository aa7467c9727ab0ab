// SPDX-License-Identifier: Apache-2.0
import Logging
import RideGuardAgent
import RideGuardTestSupport
import Testing
import RideGuardLog

/// The agent's lines: journald's priority prefixes under systemd, the time since start on a terminal.
struct AgentLogTests {
    @Test func underSystemdEveryLineCarriesItsPriority() {
        let handler = AgentLogHandler(format: .journal)
        #expect(handler.line("IMU: samples again", level: .info) == "<6>IMU: samples again\n")
        #expect(handler.line("gpsd: refused; retrying in 2.0 s", level: .warning) == "<4>gpsd: refused; retrying in 2.0 s\n")
        #expect(handler.line("could not save", level: .error) == "<3>could not save\n")
        #expect(handler.line("AT+CSQ", level: .debug) == "<7>AT+CSQ\n")
        // journald splits on newlines: a continuation line without its prefix would be read as info.
        #expect(handler.line("SMS to +33•••••5678:\n    │ Crash", level: .warning) == "<4>SMS to +33•••••5678:\n<4>    │ Crash\n")
    }

    @Test func onATerminalLinesShowTheTimeSinceStartAndIndentTheirContinuation() {
        let handler = AgentLogHandler(format: .terminal, start: .now - .seconds(12.34))
        let line = handler.line("SMS to +33•••••5678:\n    │ Crash", level: .info)
        #expect(line == "[  12.3 s] SMS to +33•••••5678:\n" + String(repeating: " ", count: 15) + "│ Crash\n", "\(line)")
    }
}
