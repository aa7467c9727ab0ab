// SPDX-License-Identifier: Apache-2.0
/// When the retained `state` topic is published.
package enum FleetState {
    /// Whether the retained state is published now: at once when its `key` changed (or on `where`),
    /// and, while riding, when only the position moved, at most every `interval` s.
    package static func due(last: (key: String, position: String, at: Double)?, key: String, position: String, asked: Bool,
                            riding: Bool, now: Double, every interval: Double) -> Bool {
        guard let last else { return true }
        return last.key != key || asked || (riding && last.position != position && isDue(since: last.at, now: now, every: interval))
    }
}
