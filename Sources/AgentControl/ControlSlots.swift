// SPDX-License-Identifier: Apache-2.0
import Glibc

/// Who may hold the control socket's slots (a thread each, for at most `requestDeadline`): 64 in
/// all, at most 8 per user, and the last 8 kept for root and the agent's own user. A member of
/// the `rideguard` group who opens silent or trickling connections fills their own 8 and is told
/// "busy"; `status` from root (or `doctor` as the service user) still gets through.
struct ControlSlots {
    static let total = 64
    static let perUser = 8
    static let reserved = 8

    private var held: [uid_t?: Int] = [:]
    private var count = 0

    /// Takes a slot for `user`, or says why not.
    mutating func take(_ user: uid_t?) -> String? {
        let privileged = user == 0 || user == geteuid()
        if count >= (privileged ? Self.total : Self.total - Self.reserved) { return "\(count) clients are already connected" }
        if !privileged && held[user, default: 0] >= Self.perUser { return "this user already has \(Self.perUser) connections open" }
        held[user, default: 0] += 1
        count += 1
        return nil
    }

    mutating func release(_ user: uid_t?) {
        held[user, default: 1] -= 1
        if held[user] == 0 { held[user] = nil }
        count -= 1
    }
}
