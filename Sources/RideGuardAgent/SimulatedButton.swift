// SPDX-License-Identifier: Apache-2.0
import RideGuardCore

/// The button's twin (the demo, `rideguard ctl press`): pressed now, released after `hold` seconds.
struct SimulatedButton: Sendable {
    let emergency: EmergencyService
    let clock: any ServiceClock

    func press(hold: Double) async {
        emergency.post(.buttonEdge(pressed: true, at: clock.now()))
        try? await clock.sleep(until: clock.now() + hold)
        emergency.post(.buttonEdge(pressed: false, at: clock.now()))
    }
}
