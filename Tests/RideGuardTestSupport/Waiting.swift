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

/// The same from an async test: it sleeps between looks instead of blocking, so the thread is
/// Swift's pool's again meanwhile (on 2 cores the pool has two: a test blocking one while another
/// test blocks the other left the code it waited for, an async modem's reads, no thread to run on).
package func waitFor(_ seconds: Double, _ condition: () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline { throw WaitTimeout(seconds: seconds) }
        try await Task.sleep(for: .milliseconds(50))
    }
}

package struct WaitTimeout: Error, CustomStringConvertible {
    package var seconds: Double
    package var description: String { "condition not met within \(seconds) s" }
}
