// SPDX-License-Identifier: Apache-2.0
import RideGuardCore
import Storage

extension RideGuardDatabase {
    /// A contact who has confirmed (the rider called them), as most tests want one: whether the
    /// rider is protected then depends on the other parts. The tests of asking use `addContact`
    /// and `askContact`.
    @discardableResult
    package func addConfirmedContact(name: String, number: String, now: Double) throws -> Contact {
        let contact = try addContact(name: name, number: number, now: now)
        return try confirmContactByHand(contact.number, now: now)
    }
}
