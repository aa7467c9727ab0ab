// SPDX-License-Identifier: Apache-2.0
import Foundation

/// Waits in real time for what another process or thread does (a fake peer answering, a child
/// writing its file): `condition` polled every 50 ms, `WaitTimeout` after `seconds`.
package func waitFor(_ seconds: Double, _ condition: () -> Bool) throws {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline { throw WaitTimeout(seconds: seconds) }
        usleep(50_000)
    }
}

package struct WaitTimeout: Error, CustomStringConvertible {
    package var seconds: Double
    package var description: String { "condition not met within \(seconds) s" }
}
