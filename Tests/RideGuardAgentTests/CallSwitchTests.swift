// SPDX-License-Identifier: Apache-2.0
@testable import RideGuardAgent
import RideGuardTestSupport
import Testing

/// The switch between the workflow (calls on, calls off) and the task ringing the contacts.
@Suite struct CallSwitchTests {
    /// On, then off (a contact's OK read just after the alert went out), both before the call
    /// service took the "on": the task it then starts for that "on" is cancelled as it is
    /// registered, before it can dial.
    @Test func aRingingTaskRegisteredAfterAnOffIsCancelledAtOnce() async {
        let calls = CallSwitch()
        calls.set(true)
        calls.set(false)
        let ringing = Task<Void, Never> { try? await Task.sleep(for: .seconds(60)) }
        calls.ring(ringing)
        #expect(ringing.isCancelled)
    }

    /// Switched on: the ringing goes on until the switch goes off, which cancels it at once.
    @Test func offCancelsTheRinging() async {
        let calls = CallSwitch()
        calls.set(true)
        let ringing = Task<Void, Never> { try? await Task.sleep(for: .seconds(60)) }
        calls.ring(ringing)
        #expect(!ringing.isCancelled)
        calls.set(false)
        #expect(ringing.isCancelled)
    }
}
