import Testing
@testable import RideGuardCore

@Suite struct SampleRingTests {
    @Test func keepsTheLastSecondsInOrder() {
        var ring = SampleRing(seconds: 60, rateHz: 10)
        #expect(ring.capacity == 600)
        for i in 0..<1000 { ring.append(IMUSample(t: Double(i) / 10, accel: Vector3(Double(i), 0, 0))) }
        #expect(ring.count == 600)
        let window = ring.window(from: 70, to: 99.9)
        #expect(window.count == 300)
        #expect(window.first?.t == 70 && window.last?.accel.x == 999)
        #expect(ring.window(from: 0, to: 39).isEmpty)             // overwritten
    }

    @Test func partlyFilled() {
        var ring = SampleRing(seconds: 1, rateHz: 100)
        for i in 0..<10 { ring.append(IMUSample(t: Double(i), accel: .zero)) }
        #expect(ring.window(from: 3, to: 5).map(\.t) == [3, 4, 5])
    }
}
