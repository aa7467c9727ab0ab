// SPDX-License-Identifier: Apache-2.0
import AgentControl
import Synchronization

/// What `status` shows of the broker: where, connected or not since when, what is wrong, how many
/// events wait for it.
final class FleetStatus: Sendable {
    private let value = Mutex<AgentStatus.Fleet?>(nil)
    var snapshot: AgentStatus.Fleet? { value.withLock { $0 } }
    func update(_ change: (inout AgentStatus.Fleet) -> Void) {
        value.withLock { v in
            guard var fleet = v else { return }
            change(&fleet)
            v = fleet
        }
    }
    func set(_ fleet: AgentStatus.Fleet) { value.withLock { $0 = fleet } }
}
