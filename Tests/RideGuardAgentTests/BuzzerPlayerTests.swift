import RideGuardAgent
import RideGuardCore
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

    @Test func oneShotPatternStops() async {
        let clock = ManualClock(), buzzer = SimulatedBuzzer()
        let player = BuzzerPlayer(output: buzzer, clock: clock)
        await player.play(.acknowledge)            // three quick beeps
        await clock.advance(by: 5)
        #expect(buzzer.beeps == 3)
        #expect(!buzzer.isOn)
    }
}
