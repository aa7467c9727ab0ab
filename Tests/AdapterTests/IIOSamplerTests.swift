// SPDX-License-Identifier: Apache-2.0
import Foundation
import IIOSensor
import RideGuardCore
import Synchronization
import RideGuardTestSupport
import Testing

/// libiio's network backend against the fake iiod on loopback.
@Suite(.serialized) struct IIOSamplerTests {
    func start(_ server: FakeIIOD, rate: Double = 200, stall: Double = 0.5, rateWindow: Double = 5) -> (IIOSampler, SamplerRecording) {
        let collected = SamplerRecording()
        var configuration = SamplerConfiguration(uri: "ip:127.0.0.1:\(server.port)", rateHz: rate)
        configuration.stallSeconds = stall
        configuration.rateWindowSeconds = rateWindow
        let sampler = IIOSampler(configuration: configuration,
                                 onSample: { s in collected.samples.withLock { $0.append(s) } },
                                 onEvent: { e in collected.events.withLock { $0.append(e) } })
        return (sampler, collected)
    }

    @Test func valuesArriveScaledWithTheIIOTimestamps() throws {
        let server = try FakeIIOD()
        defer { server.stop() }
        let (sampler, got) = start(server)
        defer { sampler.stop() }
        try waitFor(10) { got.count >= 60 }
        let opened = got.opened
        #expect(opened == .opened(device: "mpu6050", gyro: true, timestamps: true, rateHz: 200, accelScale: 0.004785, mode: .buffer(trigger: nil)))
        #expect(server.state.withLock { $0.accelScale } == 0.004785)        // widest range: ±16 g
        #expect(server.state.withLock { $0.openedMasks.first } == "000000f7")  // accel, gyro, timestamp; not temp
        let samples = got.samples.withLock { Array($0.prefix(60)) }
        for (k, s) in samples.enumerated() {
            let raw = FakeIIOD.raw(k, rate: 200)
            #expect(abs(s.t - Double(raw[7]) / 1e9) < 1e-9)
            #expect(abs(s.accel.x - Double(raw[0]) * 0.004785) < 1e-9)
            #expect(abs(s.accel.y - Double(raw[1]) * 0.004785) < 1e-9)
            #expect(abs(s.accel.z - Double(raw[2]) * 0.004785) < 1e-9)        // 9.80 m/s² ± noise
            #expect(abs(s.gyro!.x - Double(raw[4]) * 0.001064724) < 1e-9)
            #expect(abs(s.gyro!.z - -7 * 0.001064724) < 1e-9)
        }
        #expect(!got.has { if case .dropped = $0 { true } else { false } })
    }

    /// A chip its driver splits in two devices, each with a FIFO buffer of its own (an LSM6DSx with
    /// its INT wired): both buffers are read, and each acceleration comes with the rotation of the
    /// same instant (the gyro's buffer opens a moment later: its first samples have none yet).
    @Test func aSplitChipsTwoBuffersAreOneSixAxisStream() throws {
        let server = try FakeIIOD(split: true)
        defer { server.stop() }
        let (sampler, got) = start(server)
        defer { sampler.stop() }
        try waitFor(10) { got.count >= 150 }
        let opened = got.opened
        #expect(opened == .opened(device: "lsm6dsl_accel + lsm6dsl_gyro", gyro: true, timestamps: true, rateHz: 200, accelScale: 0.004785,
                                  mode: .buffer(trigger: nil)))
        #expect(server.state.withLock { $0.openedMasks } == ["0000000f", "0000000f"], "accel x/y/z and timestamp; anglvel x/y/z and timestamp")
        let samples = got.samples.withLock { Array($0.prefix(150)) }
        let firstRotation = try #require(samples.firstIndex { $0.gyro != nil }, "no rotation paired")
        #expect(firstRotation < 20, "the gyro's buffer came \(firstRotation) samples late")
        for s in samples {
            let k = Int(((s.t - 1) * 200).rounded())   // the fake's timestamps: 1 s + k / rate
            let raw = FakeIIOD.raw(k, rate: 200)
            #expect(abs(s.accel.x - Double(raw[0]) * 0.004785) < 1e-9)
            #expect(abs(s.accel.z - Double(raw[2]) * 0.004785) < 1e-9)
        }
        for s in samples[firstRotation...] {
            let k = Int(((s.t - 1) * 200).rounded())
            let raw = FakeIIOD.raw(k, rate: 200)
            #expect(s.gyro.map { abs($0.x - Double(raw[4]) * 0.001064724) < 1e-9 } == true, "sample \(k): the rotation of another instant")
        }
        #expect(zip(samples, samples.dropFirst()).allSatisfy { abs($1.t - $0.t - 0.005) < 1e-6 })
        #expect(!got.has { if case .dropped = $0 { true } else { false } })
    }

    /// A split chip's pairing takes the rotation of the acceleration's own instant: one a whole
    /// period away is another instant's (CI once paired the first acceleration with the rotation of
    /// the next, the gyro's buffer having opened one period later), and is kept for its own.
    @Test func aRotationAPeriodAwayIsAnotherInstants() {
        let period = 0.005
        let w = { (k: Double) in Vector3(k, 0, 0) }
        var late = SampleBatch(times: [1.005, 1.010], values: [w(1), w(2)])
        #expect(GyroPairing.nearest(1.000, in: &late, timed: true, period: period) == nil)
        #expect(late.times == [1.005, 1.010], "the next instants' rotations are kept")
        #expect(GyroPairing.nearest(1.005, in: &late, timed: true, period: period) == w(1))
        #expect(late.times == [1.010])
        var behind = SampleBatch(times: [0.990, 0.995], values: [w(-2), w(-1)])
        #expect(GyroPairing.nearest(1.000, in: &behind, timed: true, period: period) == nil)
        #expect(behind.times.isEmpty, "rotations of past instants are dropped")
        var jittered = SampleBatch(times: [0.995, 1.0004, 1.005], values: [w(-1), w(0), w(1)])
        #expect(GyroPairing.nearest(1.000, in: &jittered, timed: true, period: period) == w(0))
        #expect(jittered.times == [1.005])
        var untimed = SampleBatch(times: [7, 8], values: [w(7), w(8)])
        #expect(GyroPairing.nearest(1.000, in: &untimed, timed: false, period: period) == w(7), "in order, without timestamps")
    }

    /// The same chip whose gyro will not run at the accelerometer's rate: its buffer would hold the
    /// accelerometer's back (each refill waits for as many samples), so the gyro is left out, and
    /// the opening says so, rather than the accelerometer's FIFO overrunning.
    @Test func aSplitChipsGyroAtAnotherRateIsLeftOut() throws {
        let server = try FakeIIOD(split: true)
        defer { server.stop() }
        server.state.withLock { $0.splitGyroRate = 50 }
        let (sampler, got) = start(server)
        defer { sampler.stop() }
        try waitFor(10) { got.count >= 150 }
        let opened = got.opened
        #expect(opened == .opened(device: "lsm6dsl_accel", gyro: false, timestamps: true, rateHz: 200, accelScale: 0.004785,
                                  mode: .buffer(trigger: nil)))
        #expect(server.state.withLock { $0.openedMasks } == ["0000000f"], "only the accelerometer's buffer")
        let samples = got.samples.withLock { Array($0.prefix(150)) }
        #expect(samples.allSatisfy { $0.gyro == nil })
        #expect(zip(samples, samples.dropFirst()).allSatisfy { abs($1.t - $0.t - 0.005) < 1e-6 })
    }

    /// A triggered buffer with no trigger (the chip's INT line not wired): the buffer is tried and
    /// the kernel refuses it (EINVAL), so the raw channels are read at the rate instead, scaled, and
    /// the sampler says so.
    @Test func withoutATriggerTheRawChannelsArePolled() throws {
        let server = try FakeIIOD()
        defer { server.stop() }
        server.state.withLock { $0.untriggered = true }
        let (sampler, got) = start(server, rate: 100)
        defer { sampler.stop() }
        try waitFor(10) { got.count >= 150 }
        let opened = got.opened
        #expect(opened == .opened(device: "mpu6050", gyro: true, timestamps: false, rateHz: 100, accelScale: 0.004785,
                                  mode: .polled(reason: "INT not wired: the driver's trigger comes from the chip's interrupt line")))
        #expect(server.state.withLock { $0.openedMasks }.isEmpty, "the buffer was opened")
        let samples = got.samples.withLock { $0 }
        let span = samples.last!.t - samples.first!.t
        let rate = Double(samples.count - 1) / span
        // Never faster than asked; how slow depends on the machine's load (the pacing itself: SamplerPartsTests).
        #expect(rate > 0 && rate < 105, "polled at \(rate) Hz for 100 asked")
        for s in samples {
            #expect(s.accel.z > 2046 * 0.004785 - 1e-9 && s.accel.z < 2051 * 0.004785 + 1e-9, "\(s.accel.z)")   // raw 2046…2050
            #expect(abs(s.gyro!.z - -7 * 0.001064724) < 1e-9)
        }
        #expect(zip(samples, samples.dropFirst()).allSatisfy { $0.t < $1.t })
    }

    /// A driver that gives no buffer at all: the raw channels are polled at the rate, and the
    /// reason names the cause the chip has (the MPU-6050's buffer needs its INT line; the ADXL345's
    /// driver has none before Linux 6.15).
    @Test(arguments: [("mpu6050", "INT not wired: the driver gives a buffer only with the chip's interrupt line"),
                      ("adxl345", "the adxl345 driver gives no buffer before Linux 6.15")])
    func withoutABufferTheRawChannelsArePolled(chip: String, reason: String) throws {
        let server = try FakeIIOD(bufferless: chip)
        defer { server.stop() }
        let (sampler, got) = start(server, rate: 100)
        defer { sampler.stop() }
        try waitFor(10) { got.count >= 150 }
        let opened = got.opened
        #expect(opened == .opened(device: chip, gyro: true, timestamps: false, rateHz: 100, accelScale: 0.004785, mode: .polled(reason: reason)))
        let samples = got.samples.withLock { $0 }
        let rate = Double(samples.count - 1) / (samples.last!.t - samples.first!.t)
        // Never faster than asked; how slow depends on the machine's load (the pacing itself: SamplerPartsTests).
        #expect(rate > 0 && rate < 105, "polled at \(rate) Hz for 100 asked")
        #expect(samples.allSatisfy { $0.accel.z > 2046 * 0.004785 - 1e-9 && $0.accel.z < 2051 * 0.004785 + 1e-9 })
    }

    /// A buffer that stays empty once enabled, while the raw channels answer (an MPU-6050 whose
    /// driver drops its data-ready samples, an INT wire that carries nothing): after four stall
    /// times the sampler reads the raw channels instead, says why, and the samples flow.
    @Test func aBufferThatNeverFillsFallsBackToPolling() throws {
        let server = try FakeIIOD()
        defer { server.stop() }
        server.state.withLock { $0.silentBuffer = true }
        let (sampler, got) = start(server, rate: 100, stall: 0.5)
        defer { sampler.stop() }
        try waitFor(10) { got.count >= 100 }
        let opened = got.events.withLock { $0.compactMap { if case .opened(_, _, _, _, _, let mode) = $0 { mode } else { nil } } }
        #expect(opened.first == .buffer(trigger: nil))
        guard opened.count >= 2, case .polled(let reason) = opened[1] else {
            Issue.record("no polled reopening: \(got.events.withLock { $0 })")
            return
        }
        #expect(reason.hasPrefix("the buffer stayed empty for ") && reason.contains("data-ready interrupt"), "\(reason)")
        #expect(server.state.withLock { $0.samplesServed } == 0)
        #expect(!got.has { if case .failed = $0 { true } else { false } }, "a fallback is not a failure: \(got.events.withLock { $0 })")
        let samples = got.samples.withLock { $0 }
        #expect(samples.allSatisfy { $0.accel.z > 2046 * 0.004785 - 1e-9 && $0.accel.z < 2051 * 0.004785 + 1e-9 })
    }

    /// Polled through a driver that takes 10 ms a read (the LIS3DH's and the LSM6DSx's power the
    /// chip up for each): six reads a sample give about 16 Hz of the 100 asked, and the sampler
    /// says so after its first window (1 s here, 5 s in the agent); and says when the rate is back.
    @Test func aSlowPolledRateIsReported() throws {
        let server = try FakeIIOD()
        defer { server.stop() }
        server.state.withLock {
            $0.untriggered = true
            $0.rawReadSeconds = 0.01
        }
        let (sampler, got) = start(server, rate: 100, rateWindow: 1)
        defer { sampler.stop() }
        try waitFor(10) { got.has { if case .rateOff = $0 { true } else { false } } }
        let off = got.events.withLock { $0.compactMap { if case .rateOff(let measured, let nominal) = $0 { (measured, nominal) } else { nil } } }
        #expect(off.count == 1 && off[0].1 == 100 && off[0].0 > 5 && off[0].0 < 25, "\(off)")
        // The driver speeds up (a bus freed): the next full window at the rate says so, once.
        server.state.withLock { $0.rawReadSeconds = 0 }
        try waitFor(15) { got.has { if case .rateNormal = $0 { true } else { false } } }
        let normal = got.events.withLock { $0.compactMap { if case .rateNormal(let measured, _) = $0 { measured } else { nil } } }
        #expect(normal.count == 1 && normal[0] > 80 && normal[0] < 120, "\(normal)")
    }

    @Test func aStalledServerIsReportedInTime() throws {
        let server = try FakeIIOD()
        defer { server.stop() }
        let (sampler, got) = start(server, stall: 0.5)
        defer { sampler.stop() }
        try waitFor(10) { got.count >= 20 }
        let stalledAt = Date()
        server.state.withLock { $0.stalled = true }
        try waitFor(3) { got.has { if case .stalled = $0 { true } else { false } } }
        let delay = Date().timeIntervalSince(stalledAt)
        #expect(delay < 1.5, "stall reported after \(delay) s")
        print("stall reported \(DecimalFormat.string(delay, decimals: 2)) s after the server stopped sending (threshold 0.5 s)")
        // And when the server sends again, samples resume.
        let before = got.count
        server.state.withLock { $0.stalled = false }
        try waitFor(15) { got.count > before + 20 }
    }

    @Test func aServerRestartIsSurvived() throws {
        let server = try FakeIIOD()
        let (sampler, got) = start(server)
        defer { sampler.stop() }
        try waitFor(10) { got.count >= 20 }
        server.stop()
        try waitFor(10) { got.has { if case .failed = $0 { true } else { false } } }
        let before = got.count
        try server.start()
        defer { server.stop() }
        try waitFor(20) { got.count > before + 40 }
        let opens = got.events.withLock { $0.filter { if case .opened = $0 { true } else { false } }.count }
        #expect(opens >= 2)
    }

    @Test func stopUnblocksARefill() throws {
        let server = try FakeIIOD()
        defer { server.stop() }
        let (sampler, got) = start(server, stall: 5)
        try waitFor(10) { got.count >= 10 }
        server.state.withLock { $0.stalled = true }
        usleep(200_000)
        sampler.stop()
        let countAfterStop = got.count
        usleep(500_000)
        #expect(got.count == countAfterStop)
    }

    @Test func aRateFarFromNominalIsReported() throws {
        let server = try FakeIIOD()
        defer { server.stop() }
        server.state.withLock { $0.timestampRateFactor = 0.7 }
        let (sampler, got) = start(server, rateWindow: 1)
        defer { sampler.stop() }
        try waitFor(15) { got.has { if case .rateOff = $0 { true } else { false } } }
        let event = got.events.withLock { $0.first { if case .rateOff = $0 { true } else { false } } }
        if case .rateOff(let measured, let nominal)? = event {
            #expect(abs(measured - 140) < 2 && nominal == 200)
        }
    }

    @Test func recordingCarriesTheGPSSpeed() throws {
        let server = try FakeIIOD()
        defer { server.stop() }
        let gps = try GPSFake.serving(log: NMEALog.movingRider(latitude: 45.0, longitude: 5.0, speed: 12, course: 10, seconds: 60))
        defer { gps.stop() }
        let out = Scratch.path("rideguard-speed.csv").path
        let result = try Rideguard.run(["record", "--out", out, "--uri", "ip:127.0.0.1:\(server.port)", "--rate", "100",
                                        "--duration", "3", "--gpsd", "127.0.0.1:\(gps.port)"])
        #expect(result.status == 0, "\(result.stderr)")
        var parser = TraceParser(source: out)
        var speeds: [Double] = []
        let data = try Data(contentsOf: URL(fileURLWithPath: out))
        try data.withUnsafeBytes { try parser.feed($0) { if let v = $0.speed { speeds.append(v) } } }
        try parser.finish { if let v = $0.speed { speeds.append(v) } }
        #expect(parser.header?.hasSpeed == true)
        #expect(speeds.count > 50)
        #expect(speeds.allSatisfy { abs($0 - 12) < 0.5 })
    }

    /// Issue 62, point 2: a BNO055 is found by its name and read with its fusion turned off, so
    /// that its accelerometer can be asked its widest range (±16 g; ±4 g with fusion on).
    @Test func aBNO055IsReadWithItsFusionOffAtItsWidestRange() throws {
        let server = try FakeIIOD(chip: "bno055")
        defer { server.stop() }
        let (sampler, got) = start(server, rate: 100)
        defer { sampler.stop() }
        try waitFor(10) { got.count >= 50 }
        guard case .opened(let device, let gyro, _, _, _, _)? = got.events.withLock({ $0.first }) else { Issue.record("not opened"); return }
        #expect(device == "bno055" && gyro)
        #expect(server.state.withLock { $0.deviceWrites } == ["fusion_enable": "0", "in_accel_range_raw": "15696"])
    }

    /// Issue 62, point 5: a device that streams from its buffer and reports no trigger (libiio's
    /// network backend can answer 0 and none), with no raw channels to poll, is read through its
    /// buffer: one rule, the buffer tried whenever the device has one.
    @Test func aDeviceThatStreamsWithoutATriggerIsRecorded() throws {
        let server = try FakeIIOD()
        defer { server.stop() }
        server.state.withLock { $0.streamsWithoutTrigger = true }
        let out = Scratch.path("rideguard-untriggered.csv").path
        let result = try Rideguard.run(["record", "--out", out, "--uri", "ip:127.0.0.1:\(server.port)", "--rate", "200", "--duration", "2"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("buffer (no trigger reported: the device streams by itself)"), "\(result.stderr)")
        #expect(!server.state.withLock { $0.commands }.contains { $0.hasSuffix(" raw") }, "a raw channel was read")
        let replay = try Rideguard.run(["replay", out, "--json"])
        #expect(replay.status == 0, "\(replay.stderr)")
        let samples = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").filter { $0.first?.isNumber == true }
        #expect(samples.count > 300, "\(samples.count) samples in 2 s at 200 Hz")
    }

    /// `rideguard record` against the fake iiod writes a trace that `rideguard replay` reads back
    /// with the same values, to the trace format's precision.
    @Test func recordThenReplay() throws {
        let server = try FakeIIOD()
        defer { server.stop() }
        let out = Scratch.path("rideguard-record.csv").path
        let result = try Rideguard.run(["record", "--out", out, "--uri", "ip:127.0.0.1:\(server.port)", "--rate", "200", "--duration", "2"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("recording mpu6050 at 200 Hz (accelerometer and gyro, IIO timestamps, 0.004785 m/s² a count; buffer (the chip's FIFO))"))
        // Stopping waits for the refill in progress: libiio has nothing to complain about.
        #expect(!result.stderr.contains("ERROR"), "\(result.stderr)")
        let replay = try Rideguard.run(["replay", out, "--json"])
        #expect(replay.status == 0, "\(replay.stderr)")
        var parser = TraceParser(source: out)
        var samples: [IMUSample] = []
        let data = try Data(contentsOf: URL(fileURLWithPath: out))
        try data.withUnsafeBytes { try parser.feed($0) { samples.append($0) } }
        try parser.finish { samples.append($0) }
        #expect(parser.header?.rateHz == 200)
        #expect(samples.count >= 300)
        for (k, s) in samples.prefix(300).enumerated() {
            let raw = FakeIIOD.raw(k, rate: 200)
            #expect(abs(s.t - Double(raw[7]) / 1e9) <= 0.5e-6)
            #expect(abs(s.accel.x - Double(raw[0]) * 0.004785) <= 0.5e-4)
            #expect(abs(s.accel.z - Double(raw[2]) * 0.004785) <= 0.5e-4)
            #expect(abs(s.gyro!.x - Double(raw[4]) * 0.001064724) <= 0.5e-5)
        }
    }
}
