// SPDX-License-Identifier: Apache-2.0
import RideGuardCore
import Storage

/// Tells the fleet: each event the workflow or a part announces is written to the events table
/// (with the position last known) and the publisher is woken. Never waits on the network.
final class FleetAnnouncer: Sendable {
    private let database: RideGuardDatabase
    private let whereabouts: Whereabouts
    private let clock: any ServiceClock
    let doorbell = Doorbell()

    init(database: RideGuardDatabase, whereabouts: Whereabouts, clock: any ServiceClock) {
        self.database = database
        self.whereabouts = whereabouts
        self.clock = clock
    }

    func announce(_ event: FleetEvent) {
        let now = clock.now()
        database.recordEvent(event.json(at: now, position: whereabouts.lastFix), at: now)
        doorbell.ring()
    }
}
