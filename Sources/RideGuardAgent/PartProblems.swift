// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// Why the buzzer or the button cannot be used, by part, for `status` and `doctor`.
final class PartProblems: Sendable {
    private let byPart = Mutex<[String: String]>([:])

    func set(_ part: String, _ problem: String?) { byPart.withLock { $0[part] = problem } }

    /// "button: …; buzzer: …", or nil when every part works.
    var summary: String? {
        let all = byPart.withLock { $0 }
        return all.isEmpty ? nil : all.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; ")
    }
}
