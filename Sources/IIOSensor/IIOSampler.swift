#if canImport(Glibc)
import SystemPackage
import Glibc
import SystemCalls
#endif
import CIIO
import FoundationEssentials
import Glibc
import RideGuardCore
import Synchronization

/// Where and how to sample the IMU.
package struct SamplerConfiguration: Codable, Equatable, Sendable {
    /// `local:` on the Pi, `ip:host[:port]` for a remote iiod.
    package var uri = "local:"
    /// The IIO device name; nil finds a known IMU.
    package var device: String?
    package var rateHz = 200.0
    /// No sample for this long is a stalled stream, seconds.
    package var stallSeconds = 0.5
    /// Ask the driver for its widest accelerometer range (±16 g on an MPU6050), where it allows.
    package var widestRange = true

    package init(uri: String = "local:", device: String? = nil, rateHz: Double = 200) {
        self.uri = uri
        self.device = device
        self.rateHz = rateHz
    }

    /// IIO device names of the IMU drivers RideGuard knows, in the order they are looked for.
    package static let knownDevices = ["mpu6050", "mpu6500", "mpu9250", "mpu9150", "icm20608", "icm20602", "mpu6000",
                                      "bmi160", "lsm6dsl_accel", "lsm6ds3_accel", "lsm6dso_accel", "lsm6dsm_accel",
                                      "ism330dlc_accel", "asm330lhh_accel", "adxl345", "lis3dh", "lis2dh12"]
}

/// What the sampler reports besides samples.
package enum SamplerEvent: Sendable, Equatable {
    case opened(device: String, gyro: Bool, timestamps: Bool, rateHz: Double, accelScale: Double)
    /// No sample for this long, seconds (a sensor fault).
    case stalled(seconds: Double)
    /// Samples are missing (timestamp gap), how many.
    case dropped(Int)
    /// Closed after an error; retrying after `retryIn` seconds.
    case failed(reason: String, retryIn: Double)
    /// Over the last few seconds the sensor ran more than 20 % away from its nominal rate, Hz.
    case rateOff(measured: Double, nominal: Double)
}

/// Reads the IMU through libiio on a dedicated thread: opens the context, finds the device,
/// enables accelerometer (and gyro, and timestamp) scan elements, sets the rate and range, refills
/// the buffer and converts each sample to SI units with libiio's conversion, then scale and offset.
/// After an error it closes everything and reopens with backoff. `stop()` cancels a blocked refill.
package final class IIOSampler: Sendable {
    /// The buffer being refilled, shared only so that `stop()` can call iio_buffer_cancel, which
    /// libiio documents as the way to unblock a refill from another thread.
    private struct BufferHandle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private final class Shared: Sendable {
        let running = Atomic<Bool>(true)
        let buffer = Mutex<BufferHandle?>(nil)
        /// Monotonic time of the last sample (or of opening), as bits of a Double.
        let lastSample = Atomic<UInt64>(monotonicSeconds().bitPattern)
        let stallReported = Atomic<Bool>(false)

        func touch() {
            lastSample.store(monotonicSeconds().bitPattern, ordering: .releasing)
            stallReported.store(false, ordering: .releasing)
        }

        var quiet: Double { monotonicSeconds() - Double(bitPattern: lastSample.load(ordering: .acquiring)) }
    }

    private let shared = Shared()
    package let configuration: SamplerConfiguration
    /// The longest wait before opening the IMU again: an IMU whose driver loads late (udev at boot,
    /// an overlay fixed, a connector pushed back) is read within this, and a try costs a look
    /// through sysfs.
    package static let retryLimitSeconds = 5.0

    /// `heartbeat` is called from the sampler's thread at every turn of its loop (a refill, a
    /// refill's time-out, a tenth of a second waiting to reopen): the thread is alive, samples or not.
    package init(configuration: SamplerConfiguration, onSample: @escaping @Sendable (IMUSample) -> Void,
                heartbeat: @escaping @Sendable () -> Void = {}, onEvent: @escaping @Sendable (SamplerEvent) -> Void) {
        self.configuration = configuration
        // A peer closing its socket must not kill the process (libiio writes to it with plain send).
        signal(SIGPIPE, SIG_IGN)
        let shared = self.shared
        // The watchdog: silence since the last sample longer than the stall time is a fault, reported
        // at once, whatever libiio's timeouts and reopening do; four times longer cancels a refill
        // still waiting so that the sampler reopens.
        startThread("rg-iio-watchdog") {
            while shared.running.load(ordering: .acquiring) {
                usleep(50_000)
                let quiet = shared.quiet
                if quiet >= configuration.stallSeconds && !shared.stallReported.exchange(true, ordering: .acquiringAndReleasing) {
                    onEvent(.stalled(seconds: quiet))
                }
                if quiet >= configuration.stallSeconds * 4 {
                    shared.buffer.withLock { buffer in if let buffer { iio_buffer_cancel(buffer.pointer) } }
                }
            }
        }
        startThread("rg-sampler") {
            var backoff = Backoff(first: 0.5, limit: IIOSampler.retryLimitSeconds)
            while shared.running.load(ordering: .acquiring) {
                heartbeat()
                do {
                    try IIOSampler.session(configuration, shared: shared, onSample: onSample, heartbeat: heartbeat,
                                           onEvent: onEvent) { backoff.reset() }
                } catch {
                    guard shared.running.load(ordering: .acquiring) else { break }
                    let wait = backoff.next()
                    onEvent(.failed(reason: "\(error)", retryIn: wait))
                    var left = wait
                    while left > 0 && shared.running.load(ordering: .acquiring) {
                        heartbeat()
                        usleep(100_000)
                        left -= 0.1
                    }
                }
            }
        }
    }

    /// Stops sampling: the thread ends after the refill in progress (a refill takes 1/25 s). Only a
    /// refill still blocked after a second is cancelled: cancelling a pending read makes libiio's
    /// network backend print "ERROR: READ INTEGER: -9" on stderr.
    package func stop() {
        shared.running.store(false, ordering: .releasing)
        let deadline = monotonicSeconds() + 1
        while shared.buffer.withLock({ $0 != nil }) && monotonicSeconds() < deadline { usleep(5_000) }
        shared.buffer.withLock { buffer in if let buffer { iio_buffer_cancel(buffer.pointer) } }
    }

    struct Channel {
        let pointer: OpaquePointer
        let scale: Double
        let offset: Double
    }

    private static func session(_ c: SamplerConfiguration, shared: Shared, onSample: @Sendable (IMUSample) -> Void,
                                heartbeat: @Sendable () -> Void, onEvent: @Sendable (SamplerEvent) -> Void,
                                onHealthy: () -> Void) throws(IIOError) {
        let context = try IIOContext(uri: c.uri)
        iio_context_set_timeout(context.pointer, UInt32(max(50, c.stallSeconds * 1000)))
        guard let device = findDevice(context.pointer, named: c.device) else {
            let known = c.device.map { [$0] } ?? SamplerConfiguration.knownDevices
            throw IIOError(operation: "finding an IMU (\(known.joined(separator: ", "))) in", target: c.uri, errno: Errno(rawValue: ENODEV))
        }
        let name = iio_device_get_name(device).map { String(cString: $0) } ?? "?"
        func channel(_ id: String) -> OpaquePointer? {
            guard let ch = iio_device_find_channel(device, id, false), iio_channel_is_scan_element(ch) else { return nil }
            return ch
        }
        guard let ax = channel("accel_x"), let ay = channel("accel_y"), let az = channel("accel_z") else {
            throw IIOError(operation: "finding accel_x/y/z scan elements on", target: name, errno: Errno(rawValue: ENOENT))
        }
        let gyro = [channel("anglvel_x"), channel("anglvel_y"), channel("anglvel_z")]
        let hasGyro = gyro.allSatisfy { $0 != nil }
        let timestamp = channel("timestamp")
        _ = iio_device_attr_write_longlong(device, "sampling_frequency", Int64(c.rateHz.rounded()))
        var actualRate = c.rateHz
        if iio_device_attr_read_double(device, "sampling_frequency", &actualRate) != 0 || actualRate <= 0 { actualRate = c.rateHz }
        if c.widestRange { widenRange(ax) }

        func prepare(_ ch: OpaquePointer) -> Channel {
            iio_channel_enable(ch)
            var scale = 1.0, offset = 0.0
            if iio_channel_attr_read_double(ch, "scale", &scale) != 0 {
                scale = iio_channel_get_data_format(ch).pointee.with_scale ? iio_channel_get_data_format(ch).pointee.scale : 1
            }
            if iio_channel_attr_read_double(ch, "offset", &offset) != 0 { offset = 0 }
            return Channel(pointer: ch, scale: scale, offset: offset)
        }
        let accel = [prepare(ax), prepare(ay), prepare(az)]
        let rates = hasGyro ? gyro.map { prepare($0!) } : []
        if let timestamp { iio_channel_enable(timestamp) }

        let samplesPerRefill = max(1, Int(actualRate / 25))
        guard let buffer = iio_device_create_buffer(device, samplesPerRefill, false) else {
            throw IIOError(operation: "creating a buffer on", target: name, errno: Errno(rawValue: errno))
        }
        shared.buffer.withLock { $0 = BufferHandle(pointer: buffer) }
        defer {
            // Under the lock: the watchdog and stop() never cancel a destroyed buffer, and stop()
            // returns only once it is gone.
            shared.buffer.withLock {
                $0 = nil
                iio_buffer_destroy(buffer)
            }
        }
        onEvent(.opened(device: name, gyro: hasGyro, timestamps: timestamp != nil, rateHz: actualRate, accelScale: accel[0].scale))

        let period = 1 / actualRate
        var lastT = -Double.infinity
        var windowStart = Double.nan, windowCount = 0, rateReported = false
        while shared.running.load(ordering: .acquiring) {
            let n = iio_buffer_refill(buffer)
            heartbeat()
            if n < 0 {
                let code = Int32(-n)
                if !shared.running.load(ordering: .acquiring) { return }
                if (code == ETIMEDOUT || code == EAGAIN) && shared.quiet < c.stallSeconds * 4 { continue }
                throw IIOError(operation: "reading samples from", target: name, errno: Errno(rawValue: code))
            }
            onHealthy()
            shared.touch()
            let now = monotonicSeconds()
            let step = iio_buffer_step(buffer)
            guard let start = iio_buffer_first(buffer, ax), let end = iio_buffer_end(buffer), step > 0 else { continue }
            let count = (end - start) / step
            for i in 0..<count {
                let t: Double
                if let timestamp, let first = iio_buffer_first(buffer, timestamp) {
                    var ns: Int64 = 0
                    iio_channel_convert(timestamp, &ns, first + i * step)
                    t = Double(ns) / 1e9
                } else {
                    t = now - Double(count - 1 - i) * period   // the refill's time, spread back over the batch
                }
                if lastT.isFinite {
                    let missing = Int(((t - lastT) / period).rounded()) - 1
                    if missing >= 1 { onEvent(.dropped(missing)) }
                }
                lastT = t
                // The rate over 5 s windows of sample time.
                if windowStart.isNaN { windowStart = t }
                windowCount += 1
                if t - windowStart >= 5 {
                    let measured = Double(windowCount - 1) / (t - windowStart)
                    let off = abs(measured / actualRate - 1) > 0.2
                    if off && !rateReported { onEvent(.rateOff(measured: measured, nominal: actualRate)) }
                    rateReported = off
                    windowStart = t
                    windowCount = 1
                }
                let a = Vector3(value(accel[0], buffer, i, step), value(accel[1], buffer, i, step), value(accel[2], buffer, i, step))
                let w = hasGyro ? Vector3(value(rates[0], buffer, i, step), value(rates[1], buffer, i, step), value(rates[2], buffer, i, step)) : nil
                onSample(IMUSample(t: t, accel: a, gyro: w))
            }
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

    /// Writes the largest `scale` the driver offers (its widest range) on the accelerometer.
    private static func widenRange(_ accel: OpaquePointer) {
        var text = [CChar](repeating: 0, count: 256)
        guard iio_channel_attr_read(accel, "scale_available", &text, text.count) > 0 else { return }
        let values = String(cString: text).split(separator: " ").compactMap { Double($0) }
        if let widest = values.max() { _ = iio_channel_attr_write_double(accel, "scale", widest) }
    }

    private static func findDevice(_ context: OpaquePointer, named name: String?) -> OpaquePointer? {
        if let name { return iio_context_find_device(context, name) }
        for known in SamplerConfiguration.knownDevices {
            if let device = iio_context_find_device(context, known) { return device }
        }
        return nil
    }
}
