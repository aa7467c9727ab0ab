// SPDX-License-Identifier: Apache-2.0
import IIOSensor
import RideGuardCore
import Testing

/// The sampler's pure parts: the rule for buffer or poll, the rate asked, the rate window, the
/// kernel's scan format and layout.
@Suite struct SamplerPartsTests {
    @Test func aBufferIsTriedWhenThereIsOneAndPolledOnlyAfterItStayedEmpty() {
        var plan = ReadPlan()
        #expect(plan.step(bufferless: nil) == .tryBuffer)
        let noBuffer = ReadPlan.bufferless(chip: "mpu6050")
        #expect(plan.step(bufferless: noBuffer) == .poll(reason: "INT not wired: the driver gives a buffer only with the chip's interrupt line"))
        #expect(ReadPlan.bufferless(chip: "adxl345") == "the adxl345 driver gives no buffer before Linux 6.15")

        plan.bufferStayedEmpty(for: 2.04)
        guard case .poll(let reason) = plan.step(bufferless: nil) else {
            Issue.record("an empty buffer is tried again at once")
            return
        }
        #expect(reason == "the buffer stayed empty for 2.0 s: no data-ready interrupt reaches the driver, or the driver drops it")
        // It stays so across openings, until polling fails: then the buffer is tried again.
        #expect(plan.step(bufferless: nil) == .poll(reason: reason))
        plan.pollingFailed()
        #expect(plan.step(bufferless: nil) == .tryBuffer)
    }

    @Test func aRateTheDriverRefusesIsTheSlowestItOffersAtOrAboveIt() {
        // The LSM6DSx's rates: 200 is not one of them.
        #expect(SamplingRate.choose(200, available: "12.5 26 52 104 208 416 833\n") == 208)
        // The BNO055's accelerometer in AMG mode.
        #expect(SamplingRate.choose(200, available: "7.810000 15.630000 31.250000 62.500000 125 250 500 1000") == 250)
        #expect(SamplingRate.choose(2000, available: "10 20 50 100 200 500") == 500, "none fast enough: its fastest")
        #expect(SamplingRate.choose(200, available: "") == nil)
        #expect(SamplingRate.text(200) == "200")
        #expect(SamplingRate.text(12.5) == "12.5")
    }

    /// Polled at 100 Hz: each read is due a period after the last was due; one that ends late is
    /// followed at once, and the reads after it keep the period from there (none made up for).
    @Test func pollsArePacedAtTheRateAndALateOneIsNotMadeUpFor() {
        var pacing = PollPacing(rate: 100, start: 10)
        var waits: [Double] = []
        // Reads taking 2 ms, then one taking 35 ms, then 2 ms again.
        var now = 10.0
        for cost in [0.002, 0.002, 0.035, 0.002, 0.002] {
            now += cost
            let wait = pacing.wait(now: now)
            waits.append(wait)
            now += wait
        }
        let expected = [0.008, 0.008, 0, 0.008, 0.008]
        #expect(zip(waits, expected).allSatisfy { abs($0 - $1) < 1e-9 }, "\(waits)")
        // The reads started at 10.00, 10.01, 10.02, then 10.055 (late), 10.065, 10.075.
        #expect(abs(now - 10.075) < 1e-9)
    }

    @Test func theRateWindowSaysTheFirstWindowAndEachCrossing() {
        var window = RateWindow(nominal: 100, seconds: 5)
        var changes: [RateWindow.Change] = []
        // 6 s at 100 Hz, 6 s at 40 Hz, 12 s at 100 Hz: a window mixing both is still off.
        var t = 0.0
        for (rate, seconds) in [(100.0, 6.0), (40, 6), (100, 12)] {
            let end = t + seconds
            while t < end {
                if let change = window.add(t) { changes.append(change) }
                t += 1 / rate
            }
        }
        guard changes.count == 3, case .normal(let first) = changes[0], case .off(let slow) = changes[1], case .normal = changes[2] else {
            Issue.record("\(changes)")
            return
        }
        #expect(abs(first - 100) < 1)
        #expect(slow < 80)
        #expect(window.event(.off(40)) == .rateOff(measured: 40, nominal: 100))
    }

    @Test func theKernelsScanFormatsAreRead() throws {
        let s16 = try #require(ScanFormat("le:s16/16>>0\n"))
        #expect(s16 == ScanFormat("le:s16/16>>0") && !s16.bigEndian && s16.signed && s16.bits == 16 && s16.bytes == 2)
        // The LIS3DH's: 12 bits left-justified in 16, big-endian elsewhere.
        let s12 = try #require(ScanFormat("be:s12/16>>4"))
        #expect(s12.bigEndian && s12.bits == 12 && s12.shift == 4)
        // The BNO055's quaternion: four 16-bit values.
        #expect(ScanFormat("le:s16/16X4>>0")?.bytes == 8)
        #expect(ScanFormat("le:s64/64>>0")?.bytes == 8)
        for bad in ["", "xe:s16/16>>0", "le:q16/16>>0", "le:s16/12>>0", "le:s16/16", "le:s8/16>>12", "le:s16/24>>0"] {
            #expect(ScanFormat(bad) == nil, "\(bad)")
        }
        let bytes: [UInt8] = [0xf0, 0xff, 0x7f, 0x00, 0xff, 0xf0]
        bytes.withUnsafeBytes { scan in
            #expect(s16.value(in: scan, at: 0) == -16)
            #expect(s16.value(in: scan, at: 2) == 127)
            // 0xFFF0 big-endian, >>4: 0xFFF, 12 bits signed: -1.
            #expect(s12.value(in: scan, at: 4) == -1)
            #expect(ScanFormat("be:u12/16>>4")!.value(in: scan, at: 4) == 0xfff)
        }
    }

    /// The kernel's layout (iio_compute_scan_bytes): in index order, each element aligned to its
    /// size, the scan padded to the largest: three 16-bit axes and a 64-bit timestamp take 16 bytes,
    /// the timestamp at 8.
    @Test func aScanIsLaidOutAsTheKernelLaysItOut() throws {
        let s16 = try #require(ScanFormat("le:s16/16>>0"))
        let s64 = try #require(ScanFormat("le:s64/64>>0"))
        let imu = ScanLayout([(0, s16), (1, s16), (2, s16), (7, s64)])
        #expect(imu.offsets == [0, 2, 4, 8] && imu.size == 16)
        let sixAxes = ScanLayout([(3, s16), (4, s16), (5, s16), (0, s16), (1, s16), (2, s16), (6, s64)])
        #expect(sixAxes.offsets == [6, 8, 10, 0, 2, 4, 16] && sixAxes.size == 24)
        #expect(ScanLayout([(0, s16), (1, s16), (2, s16)]).size == 6)
    }
}
