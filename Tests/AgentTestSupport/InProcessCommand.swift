// SPDX-License-Identifier: Apache-2.0
import RideGuardCommands
import RideGuardTestSupport

extension Rideguard {
    /// Runs a command line in the test's own process, parsed and printed as the program does, for
    /// the commands that end at once and need no agent answering on this thread; the program itself
    /// (`run`) for the rest, and for a few smoke tests of the binary.
    package static func inProcess(_ arguments: [String]) -> Result {
        let capture = OutputCapture()
        let status = RideGuard.run(arguments: arguments, capture: capture)
        return Result(status: status, stdout: capture.standardOutput, stderr: capture.standardError)
    }
}
