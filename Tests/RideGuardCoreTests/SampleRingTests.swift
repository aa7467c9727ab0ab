// SPDX-License-Identifier: Apache-2.0
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

    @Test func keepsGyroSpeedAndTheirAbsenceToSevenDigits() {
        var ring = SampleRing(seconds: 1, rateHz: 10)
        ring.append(IMUSample(t: 1000.0005, accel: Vector3(9.80665, -0.0047851, 156.9), gyro: Vector3(0.001064724, -34.9, 0), speed: 27.78))
        ring.append(IMUSample(t: 1000.0010, accel: Vector3(0, 0, 9.81)))
        let window = ring.window(from: 1000, to: 1001)
        #expect(window.count == 2)
        #expect(window[0].t == 1000.0005)                                   // time stays a Double
        #expect(abs(window[0].accel.x - 9.80665) < 1e-6 && abs(window[0].accel.z - 156.9) < 2e-5)
        #expect(abs(window[0].gyro!.x - 0.001064724) < 1e-9 && abs(window[0].speed! - 27.78) < 1e-5)
        #expect(window[1].gyro == nil && window[1].speed == nil)
        #expect(MemoryLayout<SampleRing.Stored>.stride == 40)
    }

    @Test func partlyFilled() {
        var ring = SampleRing(seconds: 1, rateHz: 100)
        for i in 0..<10 { ring.append(IMUSample(t: Double(i), accel: .zero)) }
        #expect(ring.window(from: 3, to: 5).map(\.t) == [3, 4, 5])
    }
}
