// SPDX-License-Identifier: Apache-2.0
import Foundation
import IIOSensor
import RideGuardCore
import RideGuardTestSupport
import Synchronization
import Testing

/// The sampler reading through sysfs, as it does where libiio cannot open the machine's IIO devices
/// (a BNO055's beside bookworm's libiio): here on a folder laid out as the kernel's ABI
/// (Documentation/ABI/testing/sysfs-bus-iio) and a FIFO for the character device. The kernel's own
/// driver is read so in the VM test (Tests/kernel/imu-drivers.sh).
@Suite struct SysfsIMUTests {
    /// A BNO055 as its driver (bno055.c) lays it out, its fusion on, ±4 g; its gyro at ±250 °/s.
    struct Tree {
        let root: URL
        var devices: URL { root.appendingPathComponent("devices") }
        var device: URL { devices.appendingPathComponent("iio:device0") }

        init(buffer: Bool) throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("rideguard-sysfs-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root.appendingPathComponent("dev"), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: device, withIntermediateDirectories: true)
            let attributes = [
                "name": "bno055", "fusion_enable": "1", "in_accel_range_raw": "3924", "in_accel_range_raw_available": "1962 3924 7848 15696",
                "in_accel_sampling_frequency": "62.500000",
                "in_accel_sampling_frequency_available": "7.810000 15.630000 31.250000 62.500000 125 250 500 1000", "in_accel_scale": "0.010000",
                // Its gyro's range at ±250 °/s, of the five it offers: RideGuard asks the widest.
                "in_anglvel_scale": "0.000133158", "in_anglvel_scale_available": "0.000066579 0.000133158 0.000266316 0.000532632 0.001090831",
            ]
            for (file, text) in attributes { try put("iio:device0/\(file)", text) }
            for (axis, a, w) in [("x", 490, 458), ("y", -245, -229), ("z", 981, 917)] {
                try put("iio:device0/in_accel_\(axis)_raw", "\(a)")
                try put("iio:device0/in_anglvel_\(axis)_raw", "\(w)")
            }
            guard buffer else { return }
            // Its buffer: three axes each, then the timestamp; no trigger of its own.
            for (i, element) in ["in_accel_x", "in_accel_y", "in_accel_z", "in_anglvel_x", "in_anglvel_y", "in_anglvel_z"].enumerated() {
                try put("iio:device0/scan_elements/\(element)_en", "0")
                try put("iio:device0/scan_elements/\(element)_index", "\(i)")
                try put("iio:device0/scan_elements/\(element)_type", "le:s16/16>>0")
            }
            try put("iio:device0/scan_elements/in_rot_yaw_en", "1")   // not RideGuard's: disabled
            try put("iio:device0/scan_elements/in_timestamp_en", "0")
            try put("iio:device0/scan_elements/in_timestamp_index", "13")
            try put("iio:device0/scan_elements/in_timestamp_type", "le:s64/64>>0")
            try put("iio:device0/buffer/enable", "0")
            try put("iio:device0/buffer/length", "0")
            try put("iio:device0/buffer/watermark", "1")
            try put("iio:device0/trigger/current_trigger", "")
            try put("trigger0/name", "rideguard")
            try put("trigger0/sampling_frequency", "100")
            #expect(mkfifo(root.appendingPathComponent("dev/iio:device0").path, 0o600) == 0)
        }

        func put(_ file: String, _ text: String) throws {
            let url = devices.appendingPathComponent(file)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try (text + "\n").write(to: url, atomically: false, encoding: .utf8)
        }

        func read(_ file: String) -> String? {
            (try? String(contentsOf: device.appendingPathComponent(file), encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        func start(_ got: SamplerRecording) -> IIOSampler {
            var configuration = SamplerConfiguration(device: "bno055", rateHz: 200)
            configuration.stallSeconds = 0.5
            return IIOSampler(configuration: configuration,
                              sysfs: .init(devices: devices.path, characterDevices: root.appendingPathComponent("dev").path),
                              onSample: { s in got.samples.withLock { $0.append(s) } }, onEvent: { e in got.events.withLock { $0.append(e) } })
        }
    }

    @Test func withoutABufferTheRawFilesArePolledScaledAtTheRateTheDriverTakes() throws {
        let tree = try Tree(buffer: false)
        defer { try? FileManager.default.removeItem(at: tree.root) }
        let got = SamplerRecording()
        let sampler = tree.start(got)
        defer { sampler.stop() }
        try waitFor(20) { got.count >= 20 }
        guard case .opened(let device, let gyro, let timestamps, let rate, let scale, let mode) = got.opened else {
            Issue.record("not opened: \(got.events.withLock { $0 })")
            return
        }
        #expect(device == "bno055 (read through sysfs: asked so)" && gyro && !timestamps)
        // A file takes whatever is written: 200 stays 200, as a driver that takes it.
        #expect(rate == 200 && tree.read("in_accel_sampling_frequency") == "200")
        #expect(scale == 0.01)
        #expect(mode == .polled(reason: "INT not wired: the driver gives a buffer only with the chip's interrupt line"))
        // Its fusion off, its widest range asked, before reading.
        #expect(tree.read("fusion_enable") == "0" && tree.read("in_accel_range_raw") == "15696")
        #expect(tree.read("in_anglvel_scale") == "0.001090831")
        let s = try #require(got.samples.withLock { $0.first })
        #expect(abs(s.accel.x - 4.90) < 1e-9 && abs(s.accel.y - -2.45) < 1e-9 && abs(s.accel.z - 9.81) < 1e-9)
        let w = try #require(s.gyro)
        #expect(abs(w.x - 458 * 0.001090831) < 1e-9 && abs(w.z - 917 * 0.001090831) < 1e-9)
    }

    /// A raw file that holds no number (a driver's error text, a truncated read) is a read error
    /// naming the file, retried: never a sample of 0.
    @Test func aRawFileWithoutANumberIsNamedNotRead() throws {
        let tree = try Tree(buffer: false)
        defer { try? FileManager.default.removeItem(at: tree.root) }
        try tree.put("iio:device0/in_accel_y_raw", "12a")
        let got = SamplerRecording()
        let sampler = tree.start(got)
        defer { sampler.stop() }
        try waitFor(20) { got.events.withLock { $0.contains { if case .failed = $0 { true } else { false } } } }
        let reason = got.events.withLock { $0.compactMap { if case .failed(let reason, _) = $0 { reason } else { nil } }.first }
        #expect(reason?.hasPrefix("reading \(tree.device.path)/in_accel_y_raw") == true, "\(String(describing: reason))")
        #expect(got.count == 0)
    }

    @Test func aBufferIsReadOnRideGuardsTimerTriggerFromTheCharacterDevice() throws {
        let tree = try Tree(buffer: true)
        defer { try? FileManager.default.removeItem(at: tree.root) }
        let got = SamplerRecording()
        let sampler = tree.start(got)
        defer { sampler.stop() }
        // The sampler opens the character device for reading: then it can be written.
        var writer: Int32 = -1
        try waitFor(20) {
            writer = open(tree.root.appendingPathComponent("dev/iio:device0").path, O_WRONLY | O_NONBLOCK)
            return writer >= 0
        }
        defer { close(writer) }
        try waitFor(20) { got.opened != nil }
        #expect(tree.read("trigger/current_trigger") == "rideguard")
        #expect(tree.read("buffer/enable") == "1" && tree.read("buffer/length") == "32" && tree.read("buffer/watermark") == "8")
        #expect(tree.read("scan_elements/in_accel_x_en") == "1" && tree.read("scan_elements/in_timestamp_en") == "1")
        #expect(tree.read("scan_elements/in_rot_yaw_en") == "0")
        #expect(try String(contentsOf: tree.devices.appendingPathComponent("trigger0/sampling_frequency"), encoding: .utf8) == "200")
        guard case .opened(_, true, true, 200, 0.01, .buffer(trigger: "rideguard")) = got.opened else {
            Issue.record("\(String(describing: got.opened))")
            return
        }
        // Six 16-bit values (12 bytes), 4 bytes of padding, the timestamp: 24 bytes a scan, written
        // in pieces that split scans.
        var bytes: [UInt8] = []
        for k in 0..<10 {
            for value in [490 + k, -245, 981, 458, -229, -917] { withUnsafeBytes(of: Int16(value).littleEndian) { bytes += $0 } }
            bytes += [0, 0, 0, 0]
            withUnsafeBytes(of: (Int64(1_000_000_000) + Int64(k) * 5_000_000).littleEndian) { bytes += $0 }
        }
        for piece in [bytes[0..<30], bytes[30..<200], bytes[200...]] {
            #expect(piece.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) } == piece.count)
        }
        try waitFor(20) { got.count >= 10 }
        let samples = got.samples.withLock { $0 }
        for (k, s) in samples.enumerated() {
            #expect(abs(s.t - (1 + Double(k) * 0.005)) < 1e-9)
            #expect(abs(s.accel.x - Double(490 + k) * 0.01) < 1e-9 && abs(s.accel.y - -2.45) < 1e-9)
            #expect(abs(s.gyro!.z - -917 * 0.001090831) < 1e-9)
        }
        #expect(!got.events.withLock { $0 }.contains { if case .dropped = $0 { true } else { false } })
    }

    /// A buffer the kernel lets enable but that nothing fills: after four stall times the raw files
    /// are polled, and the sampler says why.
    @Test func aBufferThatStaysEmptyIsFollowedByPolling() throws {
        let tree = try Tree(buffer: true)
        defer { try? FileManager.default.removeItem(at: tree.root) }
        let got = SamplerRecording()
        let sampler = tree.start(got)
        defer { sampler.stop() }
        try waitFor(30) { got.count >= 20 }
        let modes = got.events.withLock { $0.compactMap { if case .opened(_, _, _, _, _, let mode) = $0 { mode } else { nil } } }
        #expect(modes.first == .buffer(trigger: "rideguard"))
        guard modes.count >= 2, case .polled(let reason) = modes[1] else {
            Issue.record("\(modes)")
            return
        }
        #expect(reason.hasPrefix("the buffer stayed empty for "))
        #expect(tree.read("buffer/enable") == "0", "the buffer left enabled")
    }
}
