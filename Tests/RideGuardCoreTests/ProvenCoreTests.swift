// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import RideGuardCore

/// The decisions behind issue 52: a contact's standing and what it does to the protection, and
/// when the self-test may go.
@Suite struct ProvenCoreTests {
    let day = SelfTestSchedule.day

    @Test func theSelfTestIsDueMonthlyAndAFailedOneTheNextDay() {
        let start = 1_000_000.0
        // Never before 30 days since the first run, then at once.
        #expect(!SelfTestSchedule.isDue(now: start + 30 * day - 1, days: 30, firstRun: start, lastSent: nil, lastQueued: nil))
        #expect(SelfTestSchedule.isDue(now: start + 30 * day, days: 30, firstRun: start, lastSent: nil, lastQueued: nil))
        // 30 days after the last one that went out.
        let sent = start + 31 * day
        #expect(!SelfTestSchedule.isDue(now: sent + 29 * day, days: 30, firstRun: start, lastSent: sent, lastQueued: sent))
        #expect(SelfTestSchedule.isDue(now: sent + 30 * day, days: 30, firstRun: start, lastSent: sent, lastQueued: sent))
        // One queued that failed is tried again a day later, not every minute.
        let failed = start + 30 * day
        #expect(!SelfTestSchedule.isDue(now: failed + 3600, days: 30, firstRun: start, lastSent: nil, lastQueued: failed))
        #expect(SelfTestSchedule.isDue(now: failed + day, days: 30, firstRun: start, lastSent: nil, lastQueued: failed))
        // A record written by a clock far ahead (set wrong, then put right by NTP) does not put
        // the test off: it is due, and may go.
        #expect(SelfTestSchedule.isDue(now: start, days: 30, firstRun: start + 400 * day, lastSent: start + 300 * day, lastQueued: start + 300 * day))
        #expect(SelfTestSchedule.refusal(now: start, emergency: false, waiting: false, lastSent: start + 300 * day, time: { _ in "" }) == nil)
        // Off.
        #expect(!SelfTestSchedule.isDue(now: start + 400 * day, days: 0, firstRun: start, lastSent: nil, lastQueued: nil))
    }

    @Test func theSelfTestIsRefusedDuringAnEmergencyWhileOneWaitsAndTwiceADay() {
        let time: (Double) -> String = { _ in "14:05" }
        #expect(SelfTestSchedule.refusal(now: 100, emergency: true, waiting: false, lastSent: nil, time: time) == "not during an emergency")
        #expect(SelfTestSchedule.refusal(now: 100, emergency: false, waiting: true, lastSent: nil, time: time) == "a self-test SMS is already waiting to be sent")
        #expect(SelfTestSchedule.refusal(now: day, emergency: false, waiting: false, lastSent: 1, time: time)
                == "one went out at 14:05, less than a day ago: at most one a day")
        #expect(SelfTestSchedule.refusal(now: day + 1, emergency: false, waiting: false, lastSent: 1, time: time) == nil)
    }

    @Test func theContactsDegradeTheProtectionUntilOneConfirms() {
        #expect(ContactStanding.problem([]) == nil, "no contact at all is the arming's business")
        let waiting = ContactStanding.problem([("Sam", .waiting(since: 0)), ("Jo", .unasked)])
        #expect(waiting?.hasPrefix("no contact has confirmed their number yet") == true)
        #expect(ContactStanding.problem([("Sam", .confirmed(at: 0, byHand: false)), ("Jo", .waiting(since: 0))]) == nil,
                "one confirmed is enough; the others are still alerted")
        #expect(ContactStanding.problem([("Sam", .confirmed(at: 0, byHand: true)), ("Jo", .declined(at: 0))])
                == "Jo declined to be a contact: remove them, or ask again")
        #expect(ContactStanding.problem([("Sam", .confirmed(at: 0, byHand: true)), ("Jo", .unreachable(at: 0, reason: "not in service"))])
                == "Jo cannot be reached: not in service")
    }

    @Test(arguments: [ContactStanding.unasked, .waiting(since: 5), .confirmed(at: 6, byHand: true), .confirmed(at: 7, byHand: false),
                      .declined(at: 8), .unreachable(at: 9, reason: "+CMS ERROR: 1 (unassigned number)")])
    func aStandingIsStoredAndReadBack(_ standing: ContactStanding) {
        let stored = standing.stored
        #expect(ContactStanding(stored: stored.name, since: stored.since, detail: stored.detail) == standing)
    }

    @Test func aStandingThisReleaseCannotReadIsNone() {
        #expect(ContactStanding(stored: "vouched", since: 1, detail: nil) == nil)
        #expect(ContactStanding(stored: "waiting", since: nil, detail: nil) == nil)
    }
}
