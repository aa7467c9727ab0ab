// SPDX-License-Identifier: Apache-2.0
import RideGuardAgent
import RideGuardCore
import RideGuardTestSupport
import Testing

@Suite(.onOneThread) struct BuzzerPlayerTests {
    @Test func repeatingPatternKeepsItsRhythm() async {
        let clock = ManualClock(), buzzer = SimulatedBuzzer()
        let player = BuzzerPlayer(output: buzzer, clock: clock)
        await player.play(.countdownFast)          // 0.2 s on, 0.8 s off
        await clock.advance(by: 10.1)
        #expect(buzzer.beeps == 11)
        await player.play(.off)
        await clock.advance(by: 5)
        #expect(buzzer.beeps == 11)
        #expect(!buzzer.isOn)
    }

    /// The phone's buzzer check over a fault's warning: three beeps, then the warning goes on.
    @Test func aCheckNeverSilencesTheWarningUnderIt() async {
        let clock = ManualClock(), buzzer = SimulatedBuzzer()
        let player = BuzzerPlayer(output: buzzer, clock: clock)
        await player.play(.fault)                  // two long beeps every 30 s
        await clock.advance(by: 1.5)
        #expect(buzzer.beeps == 2)
        await player.check(.acknowledge)
        await clock.advance(by: 0.35)
        #expect(buzzer.beeps == 5, "the check's three beeps")
        await clock.advance(by: 60)
        #expect(buzzer.beeps == 5 + 4, "the warning again, two beeps every 30 s")
        #expect(await player.pattern == .fault)
        // A pattern played during a check wins: nothing resumes after it.
        await player.check(.acknowledge)
        await player.play(.off)
        let silenced = buzzer.beeps
        await clock.advance(by: 60)
        #expect(buzzer.beeps == silenced && !buzzer.isOn)
    }

    @Test func oneShotPatternStops() async {
        let clock = ManualClock(), buzzer = SimulatedBuzzer()
        let player = BuzzerPlayer(output: buzzer, clock: clock)
        await player.play(.acknowledge)            // three quick beeps
        await clock.advance(by: 5)
        #expect(buzzer.beeps == 3)
        #expect(!buzzer.isOn)
    }
}
