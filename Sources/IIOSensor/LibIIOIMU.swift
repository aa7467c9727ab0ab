// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import CIIO
import RideGuardCore
import SystemCalls
import SystemPackage

/// An IMU reached through libiio (`local:`, or a remote iiod): found among the context's devices
/// (for a chip the driver splits in two, such as the LSM6DSx's `<chip>_accel` and `<chip>_gyro`,
/// its gyro too), its rate set (device-wide, or per channel type where the driver has it so) and
/// its range widened.
final class LibIIOIMU: IMUDevice {
    private let context: IIOContext
    private let device: OpaquePointer
    private let chip: String
    private let gyroDevice: OpaquePointer?
    let rate: Double
    private let gyroRate: Double?
    let isLocal: Bool

    init(context: IIOContext, configuration c: SamplerConfiguration) throws(IIOError) {
        self.context = context
        isLocal = c.uri == "local:"
        iio_context_set_timeout(context.pointer, UInt32(max(50, c.stallSeconds * 1000)))
        guard let device = Self.find(context.pointer, named: c.device) else {
            let known = c.device.map { [$0] } ?? SamplerConfiguration.knownDevices
            throw IMUNotFound.error(known: known, present: context.deviceNames, in: c.uri)
        }
        self.device = device
        chip = iio_device_get_name(device).map { String(cString: $0) } ?? "?"
        // A chip the driver splits in two devices: its gyro is the other half.
        gyroDevice = chip.hasSuffix("_accel") ? iio_context_find_device(context.pointer, String(chip.dropLast(6)) + "_gyro") : nil
        rate = Self.setRate(device, c.rateHz, type: "accel")
        gyroRate = gyroDevice.map { Self.setRate($0, c.rateHz, type: "anglvel") }
        if gyroDevice == nil { _ = Self.setRate(device, c.rateHz, type: "anglvel") }
        if c.widestRange {
            if let ax = iio_device_find_channel(device, "accel_x", false) { Self.widenRange(ax, of: device) }
            if let wx = iio_device_find_channel(gyroDevice ?? device, "anglvel_x", false) { Self.widestScale(wx) }
        }
    }

    var name: String { gyroDevice.flatMap { iio_device_get_name($0) }.map { chip + " + " + String(cString: $0) } ?? chip }

    var bufferless: String? { accelScan == nil ? ReadPlan.bufferless(chip: chip) : nil }

    private var accelScan: [OpaquePointer]? {
        let found = ["accel_x", "accel_y", "accel_z"].compactMap { scan($0) }
        return found.count == 3 ? found : nil
    }

    private func scan(_ id: String, on half: OpaquePointer? = nil) -> OpaquePointer? {
        guard let ch = iio_device_find_channel(half ?? device, id, false), iio_channel_is_scan_element(ch) else { return nil }
        return ch
    }

    // MARK: The trigger

    func currentTrigger() -> CurrentTrigger {
        var current: OpaquePointer?
        // No trigger/ folder (ENOENT): the buffer takes no trigger. An empty current_trigger is 0
        // and none from libiio 0.25 on, an error (EIO) from 0.24's.
        let state = iio_device_get_trigger(device, &current)
        if state == -ENOENT { return .takesNone }
        guard state == 0, let current else { return .unset }
        return .named(iio_device_get_name(current).map { String(cString: $0) } ?? "?")
    }

    private var timer: OpaquePointer? {
        guard let timer = iio_context_find_device(context.pointer, TimerTrigger.name), iio_device_is_trigger(timer) else { return nil }
        return timer
    }

    func timerListed() -> Bool { timer != nil }

    func useTimer() -> Int32 {
        guard let timer else { return -ENODEV }
        // Assigned first: the kernel refuses (EBUSY) while another reader has the buffer on (an
        // agent running while an installer records), and that reader's rate is then left alone.
        let status = iio_device_set_trigger(device, timer)
        // The timer's rate is the chip's: a faster one would read each sample more than once. One
        // it cannot set runs at its own, which the rate window then reports.
        if status == 0 { _ = iio_device_attr_write_longlong(timer, "sampling_frequency", Int64(rate.rounded())) }
        return status
    }

    // MARK: Reading

    struct Channel {
        let pointer: OpaquePointer
        let scale: Double
        let offset: Double
    }

    private static func prepare(_ ch: OpaquePointer, enable: Bool) -> Channel {
        if enable { iio_channel_enable(ch) }
        var scale = 1.0, offset = 0.0
        if iio_channel_attr_read_double(ch, "scale", &scale) != 0 {
            scale = iio_channel_get_data_format(ch).pointee.with_scale ? iio_channel_get_data_format(ch).pointee.scale : 1
        }
        if iio_channel_attr_read_double(ch, "offset", &offset) != 0 { offset = 0 }
        return Channel(pointer: ch, scale: scale, offset: offset)
    }

    func poll(reason: String, into sink: inout SampleSink) throws(IIOError) {
        func channels(_ device: OpaquePointer, _ type: String) -> [Channel]? {
            let found = ["x", "y", "z"].compactMap { iio_device_find_channel(device, "\(type)_\($0)", false) }
            guard found.count == 3, found.allSatisfy({ iio_channel_find_attr($0, "raw") != nil }) else { return nil }
            return found.map { Self.prepare($0, enable: false) }
        }
        guard let accel = channels(device, "accel") else {
            throw IIOError(operation: "finding in_accel_x/y/z_raw on", target: chip, errno: Errno(rawValue: ENOENT))
        }
        let gyro = channels(gyroDevice ?? device, "anglvel")
        sink.event(.opened(device: name, gyro: gyro != nil, timestamps: false, rateHz: rate, accelScale: accel[0].scale, mode: .polled(reason: reason)))
        let chip = self.chip
        func read(_ channel: Channel) throws(IIOError) -> Double {
            var raw: Int64 = 0
            let status = iio_channel_attr_read_longlong(channel.pointer, "raw", &raw)
            guard status == 0 else {
                let id = iio_channel_get_id(channel.pointer).map { String(cString: $0) } ?? "?"
                throw IIOError(operation: "reading in_\(id)_raw on", target: chip, errno: Errno(rawValue: -status))
            }
            return (Double(raw) + channel.offset) * channel.scale
        }
        try PolledLoop.run(rate: rate, into: &sink) { () throws(IIOError) in
            let a = Vector3(try read(accel[0]), try read(accel[1]), try read(accel[2]))
            guard let gyro else { return (a, nil) }
            return (a, Vector3(try read(gyro[0]), try read(gyro[1]), try read(gyro[2])))
        }
    }

    /// The gyro of a chip split in two devices, with a buffer of its own: read beside the
    /// accelerometer's only at the same rate (each gyro refill waits for as many samples as an
    /// accelerometer's, and a slower gyro would hold the accelerometer back until its FIFO overran).
    private struct GyroHalf {
        let device: OpaquePointer
        let name: String
        let rates: [OpaquePointer]
        let timestamp: OpaquePointer?
    }

    private var gyroHalf: GyroHalf? {
        gyroDevice.flatMap { half -> GyroHalf? in
            let rates = ["anglvel_x", "anglvel_y", "anglvel_z"].compactMap { scan($0, on: half) }
            guard rates.count == 3, let gyroRate, abs(gyroRate / rate - 1) < 0.01 else { return nil }
            return GyroHalf(device: half, name: iio_device_get_name(half).map { String(cString: $0) } ?? "?", rates: rates,
                            timestamp: scan("timestamp", on: half))
        }
    }

    /// The driver's buffer: accelerometer (and gyro, and timestamp) scan elements enabled, refilled
    /// and converted with libiio's conversion, then scale and offset. A chip split in two devices
    /// has its gyro's buffer refilled after each of the accelerometer's, and each acceleration takes
    /// the rotation read nearest to it in time (by index without timestamps). Empty from the start
    /// (or iiod's connection broken waiting for the first samples) for four stall times: returns how
    /// long, for the caller to poll instead.
    func readBuffer(trigger: String?, stallSeconds: Double, into sink: inout SampleSink) throws(IIOError) -> Double? {
        guard let ax = accelScan else { return nil }
        let gyroScan = ["anglvel_x", "anglvel_y", "anglvel_z"].map { scan($0) }
        let timestamp = scan("timestamp")
        let hasGyro = gyroScan.allSatisfy { $0 != nil }
        var half = hasGyro ? nil : gyroHalf
        let accel = ax.map { Self.prepare($0, enable: true) }
        let rates = hasGyro ? gyroScan.map { Self.prepare($0!, enable: true) } : half?.rates.map { Self.prepare($0, enable: true) } ?? []
        if let timestamp { iio_channel_enable(timestamp) }
        if let stamp = half?.timestamp { iio_channel_enable(stamp) }

        let liveness = sink.liveness
        let samplesPerRefill = max(1, Int(rate / 25))
        /// A buffer on `device` for the `channels` enabled on it (disabled again if it cannot be made).
        func create(_ device: OpaquePointer, _ name: String, channels: [OpaquePointer]) throws(IIOError) -> OpaquePointer {
            guard let buffer = iio_device_create_buffer(device, samplesPerRefill, false) else {
                let code = errno
                for channel in channels { iio_channel_disable(channel) }
                throw IIOError(operation: "creating a buffer on", target: name, errno: Errno(rawValue: code))
            }
            liveness.buffers.withLock { $0.append(SamplerLiveness.BufferHandle(pointer: buffer)) }
            return buffer
        }
        defer {
            // Under the lock: the watchdog and stop() never cancel a destroyed buffer, and stop()
            // returns only once they are gone.
            liveness.buffers.withLock {
                for buffer in $0 { iio_buffer_destroy(buffer.pointer) }
                $0 = []
            }
        }
        let buffer = try create(device, chip, channels: ax + (hasGyro ? gyroScan.compactMap { $0 } : []) + [timestamp].compactMap { $0 })
        // Without the gyro half's buffer the accelerometer's still serves: the gyro is then missed, and said so.
        var gyroBuffer: OpaquePointer?
        if let chosen = half {
            gyroBuffer = try? create(chosen.device, chosen.name, channels: chosen.rates + [chosen.timestamp].compactMap { $0 })
            if gyroBuffer == nil { half = nil }
        }
        liveness.restartClock()
        sink.event(.opened(device: half.map { chip + " + " + $0.name } ?? chip, gyro: hasGyro || half != nil, timestamps: timestamp != nil,
                           rateHz: rate, accelScale: accel[0].scale, mode: .buffer(trigger: trigger)))

        let period = 1 / rate
        var filled = false, timedOut = false
        var batch = SampleBatch(), own = SampleBatch(), pendingGyro = SampleBatch()
        var lastRotation: Vector3?
        while sink.running {
            let n = iio_buffer_refill(buffer)
            sink.beat()
            if n < 0 {
                let code = Int32(-n)
                if !sink.running { return nil }
                // The watchdog cancels a refill once the silence reaches four stall times.
                let quiet = liveness.quiet
                if code == ETIMEDOUT || code == EAGAIN {
                    timedOut = true
                    if quiet < stallSeconds * 4 { continue }
                }
                // Empty from the start: long enough, or the backend gave up waiting (a network
                // context breaks its connection on a time-out: EPIPE, or another error after it).
                if !filled && (quiet >= stallSeconds * 4 || code == EPIPE || timedOut) { return quiet }
                throw IIOError(operation: "reading samples from", target: chip, errno: Errno(rawValue: code))
            }
            filled = true
            sink.arrived()
            let now = monotonicSeconds()
            batch.removeAll()
            Self.read(buffer, accel, timestamp: timestamp, now: now, period: period, into: &batch)
            if hasGyro {
                own.removeAll()
                Self.read(buffer, rates, timestamp: timestamp, now: now, period: period, into: &own)
            } else if let gyroBuffer, let half {
                let m = iio_buffer_refill(gyroBuffer)
                sink.beat()
                guard m >= 0 else {
                    if !sink.running { return nil }
                    throw IIOError(operation: "reading samples from", target: half.name, errno: Errno(rawValue: Int32(-m)))
                }
                Self.read(gyroBuffer, rates, timestamp: half.timestamp, now: monotonicSeconds(), period: period, into: &pendingGyro)
                // Never more than a few refills behind (two halves at different rates, without timestamps).
                pendingGyro.keepLast(4 * samplesPerRefill)
            }
            for (i, t) in batch.times.enumerated() {
                var w: Vector3?
                if hasGyro {
                    w = own.values[i]
                } else if half != nil {
                    lastRotation = GyroPairing.nearest(t, in: &pendingGyro, timed: timestamp != nil && half?.timestamp != nil, period: period) ?? lastRotation
                    w = lastRotation
                }
                sink.deliver(IMUSample(t: t, accel: batch.values[i], gyro: w), gaps: true)
            }
        }
        return nil
    }

    /// Appends the samples of one refill for three channels to `batch`: each one's time is its
    /// timestamp, or without one the refill's time spread back over the refill at `period`.
    private static func read(_ buffer: OpaquePointer, _ channels: [Channel], timestamp: OpaquePointer?, now: Double, period: Double,
                             into batch: inout SampleBatch) {
        let step = iio_buffer_step(buffer)
        guard let start = iio_buffer_start(buffer), let end = iio_buffer_end(buffer), step > 0 else { return }
        let count = (end - start) / step
        let stamps = timestamp.flatMap { channel in iio_buffer_first(buffer, channel).map { (channel, $0) } }
        for i in 0..<count {
            if let (channel, first) = stamps {
                var ns: Int64 = 0
                iio_channel_convert(channel, &ns, first + i * step)
                batch.times.append(Double(ns) / 1e9)
            } else {
                batch.times.append(now - Double(count - 1 - i) * period)
            }
            batch.values.append(Vector3(value(channels[0], buffer, i, step), value(channels[1], buffer, i, step), value(channels[2], buffer, i, step)))
        }
    }

    /// The raw value through libiio's conversion (endianness, sign, shift), then (raw + offset) × scale.
    private static func value(_ channel: Channel, _ buffer: OpaquePointer, _ index: Int, _ step: Int) -> Double {
        guard let first = iio_buffer_first(buffer, channel.pointer) else { return .nan }
        var raw: Int64 = 0
        iio_channel_convert(channel.pointer, &raw, first + index * step)
        let format = iio_channel_get_data_format(channel.pointer).pointee
        // Sign-extend from the channel's storage width (convert fills only `length` bits).
        let bits = Int(format.length)
        if format.is_signed && bits < 64 {
            let shift = 64 - bits
            raw = (raw << shift) >> shift
        }
        return (Double(raw) + channel.offset) * channel.scale
    }

    // MARK: Set-up

    /// Asks for `rate` Hz where the driver takes it: the device's `sampling_frequency`, else the
    /// channel type's (`in_accel_sampling_frequency`, as the BMI160's and the LSM6DSx's drivers have
    /// it). A driver that does not take it is asked the rate SamplingRate chooses from those it
    /// lists. Returns what the driver says it runs at, `rate` when it says nothing.
    private static func setRate(_ device: OpaquePointer, _ rate: Double, type: String) -> Double {
        var text = [CChar](repeating: 0, count: 256)
        func ask(_ write: (Double) -> Void, _ read: () -> Double?, available: () -> String?) -> Double {
            write(rate)
            if let actual = read(), abs(actual / rate - 1) < 0.01 { return actual }
            if let listed = available(), let other = SamplingRate.choose(rate, available: listed) { write(other) }
            return read() ?? rate
        }
        if iio_device_find_attr(device, "sampling_frequency") != nil {
            return ask({ _ = iio_device_attr_write(device, "sampling_frequency", SamplingRate.text($0)) }, {
                var actual = 0.0
                return iio_device_attr_read_double(device, "sampling_frequency", &actual) == 0 && actual > 0 ? actual : nil
            }, available: {
                iio_device_attr_read(device, "sampling_frequency_available", &text, text.count) > 0 ? Self.string(text) : nil
            })
        }
        if let channel = iio_device_find_channel(device, type + "_x", false), iio_channel_find_attr(channel, "sampling_frequency") != nil {
            return ask({ _ = iio_channel_attr_write(channel, "sampling_frequency", SamplingRate.text($0)) }, {
                var actual = 0.0
                return iio_channel_attr_read_double(channel, "sampling_frequency", &actual) == 0 && actual > 0 ? actual : nil
            }, available: {
                iio_channel_attr_read(channel, "sampling_frequency_available", &text, text.count) > 0 ? Self.string(text) : nil
            })
        }
        return rate
    }

    /// The widest range the driver offers: the accelerometer's largest scale, or where the range is
    /// a device attribute of its own (the BNO055's `in_accel_range_raw`, its scale fixed at 0.01
    /// m/s² a count) the largest of those. The BNO055 runs its on-chip fusion from its probe, which
    /// holds the accelerometer at ±4 g, less than a crash's impacts: its fusion is turned off (AMG
    /// mode, raw acceleration and rotation) first, so that ±16 g can be asked.
    private static func widenRange(_ accel: OpaquePointer, of device: OpaquePointer) {
        var text = [CChar](repeating: 0, count: 256)
        if iio_device_find_attr(device, "fusion_enable") != nil { _ = iio_device_attr_write_longlong(device, "fusion_enable", 0) }
        if iio_device_attr_read(device, "in_accel_range_raw_available", &text, text.count) > 0,
           let widest = Self.string(text).split(separator: " ").compactMap({ Int64($0) }).max() {
            _ = iio_device_attr_write_longlong(device, "in_accel_range_raw", widest)
        }
        widestScale(accel)
    }

    /// Writes the channel's largest `scale` (its widest range), where the driver lists them. For
    /// the gyro too: a bike tumbling turns at more than 1,000 °/s, and some drivers start at ±245 °/s
    /// (the LSM6DSx's).
    private static func widestScale(_ channel: OpaquePointer) {
        var text = [CChar](repeating: 0, count: 256)
        guard iio_channel_attr_read(channel, "scale_available", &text, text.count) > 0 else { return }
        let values = Self.string(text).split(separator: " ").compactMap { Double($0) }
        if let widest = values.max() { _ = iio_channel_attr_write_double(channel, "scale", widest) }
    }

    /// The text libiio wrote into `bytes`, up to its terminating zero.
    private static func string(_ bytes: [CChar]) -> String {
        String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func find(_ context: OpaquePointer, named name: String?) -> OpaquePointer? {
        if let name { return iio_context_find_device(context, name) }
        for known in SamplerConfiguration.knownDevices {
            if let device = iio_context_find_device(context, known) { return device }
        }
        return nil
    }
}

/// No IMU among the devices: what is there instead, and what to do.
enum IMUNotFound {
    static func error(known: [String], present: [String], in uri: String) -> IIOError {
        let seen = present.isEmpty ? "no IIO device yet: the IMU's driver is not loaded or did not find the chip (dmesg; its overlay in config.txt, boards/imus.md)"
            : "the IIO devices are \(present.joined(separator: ", ")): set imu.device to the IMU's, or check its overlay (boards/imus.md)"
        return IIOError(operation: "\(seen); finding an IMU (\(known.joined(separator: ", "))) in", target: uri, errno: Errno(rawValue: ENODEV))
    }
}
