// SPDX-License-Identifier: Apache-2.0
import RideGuardCore

/// The PIN the SIM refused, kept across restarts (a reboot, an upgrade, `systemctl restart`) so
/// that the same PIN is never entered again: three wrong ones lock the SIM to its PUK. Kept until
/// `modem.pin` changes (another PIN is tried, once, if the modem says it may be).
///
/// Not the PIN itself: a fingerprint (FNV-1a of a random salt and the PIN), so that it shows in no
/// dump or backup as the PIN. A PIN has at most 8 digits, so no fingerprint keeps it from someone
/// who can read the database and tries them all: the database is the service's group's alone
/// (0660 in a 0770 folder), and the configuration holds the PIN itself.
extension RideGuardDatabase: PINRefusals {
    static let refusedPINKey = "sim_pin_refused"

    package func wasRefused(_ pin: String) -> Bool {
        guard let kept = try? read({ db in try db.setting(Self.refusedPINKey) }),
              let colon = kept.firstIndex(of: ":") else { return false }
        let salt = String(kept[..<colon])
        return Self.fingerprint(pin, salt: salt) == kept
    }

    package func noteRefused(_ pin: String) throws {
        let salt = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        try write { db in try db.setSetting(Self.refusedPINKey, Self.fingerprint(pin, salt: salt)) }
    }

    /// "salt:hash", FNV-1a 64 over the salt and the PIN.
    static func fingerprint(_ pin: String, salt: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in (salt + ":" + pin).utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return salt + ":" + String(hash, radix: 16)
    }
}
