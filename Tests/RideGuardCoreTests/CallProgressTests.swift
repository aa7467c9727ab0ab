// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import RideGuardCore

/// A voice call's progress without a serial line: the clock, the modem's unprompted lines and its
/// list of calls (27.007 `+CLCC`) in, what to do out.
struct CallProgressTests {
    let alerting = ATParse.call("+CLCC: 1,0,3,0,0,\"+33612345678\",145")!
    let active = ATParse.call("+CLCC: 1,0,0,0,0,\"+33612345678\",145")!
    let dialing = ATParse.call("+CLCC: 1,0,2,0,0,\"+33612345678\",145")!
    let incomingData = ATParse.call("+CLCC: 2,1,4,1,0,\"+4915112345678\",145")!

    func dialled(ringSeconds: Double = 20, at t: Double = 100) -> CallProgress {
        var progress = CallProgress(ringSeconds: ringSeconds)
        progress.dialled(at: t)
        return progress
    }

    @Test func itLooksOnceASecondAndHangsUpWhenItRangOut() {
        var progress = dialled(ringSeconds: 3)
        #expect(progress.nextLook(after: 100) == 101)
        #expect(progress.nextLook(after: 102.5) == 103)       // never past the deadline
        #expect(progress.woke(at: 101) == .look)
        #expect(progress.listed([alerting]) == .wait)
        #expect(progress.woke(at: 103) == .hangUp(.notAnswered("no answer in 3 s")))
    }

    @Test func pickedUpAfterRingingIsAnswered() {
        var progress = dialled()
        #expect(progress.listed([dialing]) == .wait)
        #expect(progress.listed([alerting]) == .wait)
        #expect(progress.listed([active]) == .hangUp(.answered))
    }

    @Test func activeWithoutEverRingingIsNobody() {
        var progress = dialled()
        #expect(progress.listed([dialing]) == .wait)
        #expect(progress.listed([active]) == .hangUp(.notAnswered("answered without ringing (voicemail or an announcement)")))
    }

    @Test func ringingSaidUnpromptedCountsAsRinging() {
        var progress = dialled()
        progress.said(.ringing)
        #expect(progress.listed([active]) == .hangUp(.answered))
    }

    @Test func aCallGoneFromTheListEndsWithTheModemsReason() {
        var busy = dialled()
        busy.said("BUSY")
        #expect(busy.listed([]) == .ended(.notAnswered("busy")))
        var gone = dialled()
        #expect(gone.listed([incomingData]) == .ended(.notAnswered("the call ended")))    // not ours: someone else's data call
        #expect(CallProgress.refused("NO DIALTONE") == .notAnswered("no dial tone (no network)"))
    }

    /// A NO CARRIER from an earlier call, said while this one still shows in the list, names nothing.
    @Test func aStrayResultCodeIsForgottenWhileTheListStillShowsTheCall() {
        var progress = dialled()
        progress.said("NO CARRIER")
        #expect(progress.listed([alerting]) == .wait)
        #expect(progress.listed([]) == .ended(.notAnswered("the call ended")))
    }

    /// Issue 27, point 2: picked up and hung up between two looks.
    @Test func aShortPickUpBetweenTwoLooksIsAnAnswer() {
        var progress = dialled()
        #expect(progress.listed([alerting]) == .wait)
        progress.said(.pickedUp)
        progress.said("NO CARRIER")
        #expect(progress.listed([]) == .ended(.answered))

        var neverRang = dialled()
        neverRang.said(.pickedUp)
        #expect(neverRang.listed([]) == .ended(.notAnswered("the call ended")))
    }

    @Test func aFailedLookWaitsForTheNext() {
        var progress = dialled(ringSeconds: 2)
        #expect(progress.listed(nil) == .wait)
        #expect(progress.woke(at: 102) == .hangUp(.notAnswered("no answer in 2 s")))
    }
}
