// SPDX-License-Identifier: Apache-2.0
import SystemPackage

/// The control socket could not be opened, reached or understood.
package struct ControlSocketError: Error, CustomStringConvertible, Sendable {
    package var path: String
    package var reason: String
    /// The system's error, where one was the cause.
    package var errno: Errno?
    package var description: String { "control socket \(path): \(reason)" }
}
