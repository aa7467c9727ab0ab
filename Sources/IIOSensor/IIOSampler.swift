// SPDX-License-Identifier: Apache-2.0
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
                                      "ism330dlc_accel", "asm330lhh_accel", "adxl345", "lis3dh", "lis2dh12", "bno055"]
}

/// How the IMU is read: through the driver's buffer, or by reading its raw channels in turn.
package enum ReadMode: Sendable, Equatable {
    /// The driver's buffer, filled on the chip's interrupt: through its trigger (named), or its
    /// hardware FIFO (no trigger).
    case buffer(trigger: String?)
    /// The raw channels read one by one at the rate, paced by the monotonic clock, because the
    /// driver gives no usable buffer (`reason`, in the rider's words).
    case polled(reason: String)

    /// The buffer's trigger where the device reports none set and streams all the same (libiio's
    /// network backend can answer so for a device whose buffer fills by itself).
    package static let noTriggerReported = "none reported"

    package var summary: String {
        switch self {
        case .buffer(TimerTrigger.name?): "buffer, trigger \(TimerTrigger.name) (a kernel timer: the driver has no data-ready trigger)"
        case .buffer(Self.noTriggerReported?): "buffer (no trigger reported: the device streams by itself)"
        case .buffer(let trigger?): "buffer, trigger \(trigger)"
        case .buffer(nil): "buffer (the chip's FIFO)"
        case .polled(let reason): "polled: \(reason)"
        }
    }
}

/// What the sampler reports besides samples.
package enum SamplerEvent: Sendable, Equatable {
    case opened(device: String, gyro: Bool, timestamps: Bool, rateHz: Double, accelScale: Double, mode: ReadMode)
    /// No sample for this long, seconds (a sensor fault).
    case stalled(seconds: Double)
    /// Samples are missing (timestamp gap), how many.
    case dropped(Int)
    /// Closed after an error; retrying after `retryIn` seconds.
    case failed(reason: String, retryIn: Double)
    /// Over the last 5 s the sensor ran more than 20 % away from its nominal rate, Hz: said for the
    /// first window after opening, and whenever it goes off again.
    case rateOff(measured: Double, nominal: Double)
    /// Over the last 5 s the sensor ran within 20 % of its nominal rate: said for the first window
    /// after opening, and whenever it comes back.
    case rateNormal(measured: Double, nominal: Double)
}

/// Reads the IMU through libiio on a dedicated thread: opens the context, finds the device (and,
/// for a chip the driver splits in two, such as the LSM6DSx's `<chip>_accel` and `<chip>_gyro`,
/// its gyro), sets the rate (device-wide, or per channel type where the driver has it so) and the
/// range, then reads it one of two ways, and says which:
///  - the driver's buffer: accelerometer (and gyro, and timestamp) scan elements enabled, refilled
///    and converted to SI units with libiio's conversion, then scale and offset; for a split chip,
///    both devices' buffers, each acceleration paired with the rotation of the same instant;
///  - polled, where the driver gives no buffer (the MPU-6050's and the LSM6DSx's exist only with
///    the chip's INT line wired; the ADXL345's before Linux 6.15 never), or one that cannot be
///    filled (its trigger comes from the INT line, and none is set), or one that stays empty after
///    it is enabled (the interrupt never arrives, or the driver drops the data): each raw channel
///    read in turn, paced by the monotonic clock. Slower where the driver powers the chip up for
///    each read.
/// After an error it closes everything and reopens with backoff. `stop()` cancels a blocked refill.
package final class IIOSampler: Sendable {
    /// The buffers being refilled (two for a chip split in two devices), shared only so that `stop()`
    /// can call iio_buffer_cancel, which libiio documents as the way to unblock a refill from another
    /// thread.
    private struct BufferHandle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private final class Shared: Sendable {
        let running = Atomic<Bool>(true)
        let buffers = Mutex<[BufferHandle]>([])

        func cancelRefills() {
            buffers.withLock { for buffer in $0 { iio_buffer_cancel(buffer.pointer) } }
        }
        /// Monotonic time of the last sample (or of opening), as bits of a Double.
        let lastSample = Atomic<UInt64>(monotonicSeconds().bitPattern)
        let stallReported = Atomic<Bool>(false)
        /// Why the raw channels are polled although the driver has a buffer: it stayed empty once
        /// enabled. Kept until polling fails.
        let emptyBuffer = Mutex<String?>(nil)

        func touch() {
            lastSample.store(monotonicSeconds().bitPattern, ordering: .releasing)
            stallReported.store(false, ordering: .releasing)
        }

        /// A buffer was just enabled: its silence counts from now (a stall already reported stays so).
        func restartClock() {
            lastSample.store(monotonicSeconds().bitPattern, ordering: .releasing)
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
                    shared.cancelRefills()
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
        while shared.buffers.withLock({ !$0.isEmpty }) && monotonicSeconds() < deadline { usleep(5_000) }
        shared.cancelRefills()
    }

    struct Channel {
        let pointer: OpaquePointer
        let scale: Double
        let offset: Double
    }

    private static func session(_ c: SamplerConfiguration, shared: Shared, onSample: @Sendable (IMUSample) -> Void,
                                heartbeat: @Sendable () -> Void, onEvent: @Sendable (SamplerEvent) -> Void,
                                onHealthy: () -> Void) throws(IIOError) {
        let context: IIOContext
        do { context = try IIOContext(uri: c.uri) } catch where c.uri == "local:" && error.errno == .noSuchFileOrDirectory {
            // No /sys/bus/iio/devices: the IIO core, and so the IMU's driver, is not loaded.
            throw IIOError(operation: "no IIO device on this machine: the IMU's driver is not loaded (its overlay in config.txt, boards/imus.md); opening",
                           target: c.uri, errno: error.errno)
        } catch where c.uri == "local:" && error.errno == .invalidArgument && IIOContext.localDeviceNames.contains("bno055") {
            // libiio refuses the whole machine's IIO devices (EINVAL) while a BNO055's is there: its
            // yaw, pitch, roll and linear acceleration channels carry modifiers the kernel named
            // after that libiio (measured with bookworm's 0.24; trixie's 0.26 lacks linear_x too).
            throw IIOError(operation: "libiio \(IIOContext.libraryVersion) cannot open any IIO device while the BNO055's is there (its yaw, pitch, roll and linear acceleration channels are newer than this libiio): remove its dtoverlay line and use an MPU-6050 (boards/imus.md); opening",
                           target: c.uri, errno: error.errno)
        }
        iio_context_set_timeout(context.pointer, UInt32(max(50, c.stallSeconds * 1000)))
        guard let device = findDevice(context.pointer, named: c.device) else {
            let known = c.device.map { [$0] } ?? SamplerConfiguration.knownDevices
            let present = context.deviceNames
            let seen = present.isEmpty ? "no IIO device yet: the IMU's driver is not loaded or did not find the chip (dmesg; its overlay in config.txt, boards/imus.md)"
                : "the IIO devices are \(present.joined(separator: ", ")): set imu.device to the IMU's, or check its overlay (boards/imus.md)"
            throw IIOError(operation: "\(seen); finding an IMU (\(known.joined(separator: ", "))) in", target: c.uri, errno: Errno(rawValue: ENODEV))
        }
        let name = iio_device_get_name(device).map { String(cString: $0) } ?? "?"
        // A chip the driver splits in two devices: its gyro is the other half.
        let gyroDevice = name.hasSuffix("_accel") ? iio_context_find_device(context.pointer, String(name.dropLast(6)) + "_gyro") : nil
        let actualRate = setRate(device, c.rateHz, type: "accel")
        let gyroRate = gyroDevice.map { setRate($0, c.rateHz, type: "anglvel") }
        if gyroDevice == nil { _ = setRate(device, c.rateHz, type: "anglvel") }
        if c.widestRange, let ax = iio_device_find_channel(device, "accel_x", false) { widenRange(ax, of: device) }

        func scan(_ id: String, on half: OpaquePointer? = nil) -> OpaquePointer? {
            guard let ch = iio_device_find_channel(half ?? device, id, false), iio_channel_is_scan_element(ch) else { return nil }
            return ch
        }
        // The other half's own buffer (the LSM6DSx's gyro FIFO), read beside the accelerometer's.
        // Only at the accelerometer's rate: each gyro refill waits for as many samples as an
        // accelerometer's, and a slower gyro would hold the accelerometer back until its FIFO overran.
        let gyroHalf = gyroDevice.flatMap { half -> GyroHalf? in
            let rates = ["anglvel_x", "anglvel_y", "anglvel_z"].compactMap { scan($0, on: half) }
            guard rates.count == 3, let gyroRate, abs(gyroRate / actualRate - 1) < 0.01 else { return nil }
            return GyroHalf(device: half, name: iio_device_get_name(half).map { String(cString: $0) } ?? "?", rates: rates,
                            timestamp: scan("timestamp", on: half))
        }
        let reason: String
        if let why = shared.emptyBuffer.withLock({ $0 }) {
            reason = why
        } else if let ax = scan("accel_x"), let ay = scan("accel_y"), let az = scan("accel_z") {
            let choice = chooseTrigger(for: device, in: context.pointer, uri: c.uri, rate: actualRate)
            switch choice {
            case .reopen:
                // RideGuard's timer trigger was just made: a fresh context lists it.
                return
            case .use, .tryWithout:
                let triggerName = choice.trigger
                do {
                    let silent = try buffered(c, device: device, name: name, accel: [ax, ay, az], gyro: ["anglvel_x", "anglvel_y", "anglvel_z"].map { scan($0) },
                                              gyroHalf: gyroHalf, timestamp: scan("timestamp"), rate: actualRate, trigger: triggerName, shared: shared,
                                              onSample: onSample, heartbeat: heartbeat, onEvent: onEvent, onHealthy: onHealthy)
                    guard let silent else { return }
                    // The raw channels may still answer: the interrupt does not arrive (a loose
                    // INT wire, the overlay's pin wrong) or the driver drops what it reads (6.1's
                    // inv_mpu6050 tests an MPU-6050's data-ready bit in the wrong register). They
                    // are polled from a fresh context (a network one is broken by the time-out).
                    shared.emptyBuffer.withLock {
                        $0 = "the buffer stayed empty for \(DecimalFormat.string(silent, decimals: 1)) s: no data-ready interrupt reaches the driver, or the driver drops it"
                    }
                    return
                } catch let error where error.errno == .invalidArgument {
                    // The kernel refuses to enable a buffer that has no trigger to fill it.
                    reason = choice.whyNot ?? "the buffer cannot be enabled (\(error.errno)): no trigger, INT not wired"
                }
            }
        } else {
            reason = name == "adxl345" ? "the adxl345 driver gives no buffer before Linux 6.15"
                : "INT not wired: the driver gives a buffer only with the chip's interrupt line"
        }
        do {
            try polled(device: device, gyroDevice: gyroDevice, name: name, rate: actualRate, reason: reason, shared: shared,
                       onSample: onSample, heartbeat: heartbeat, onEvent: onEvent, onHealthy: onHealthy)
        } catch {
            // The chip, or its driver, went away: the next opening tries its buffer again.
            shared.emptyBuffer.withLock { $0 = nil }
            throw error
        }
    }

    /// One rule: a device that has a buffer has it tried, whatever its trigger says; it is polled
    /// only when the buffer cannot be enabled or stays empty, and a poll that fails (no raw
    /// channels) goes back to the buffer at the next opening.
    private enum TriggerChoice {
        /// Read the buffer through this trigger (nil: a hardware FIFO, which takes none).
        case use(String?)
        /// RideGuard's timer trigger was made: open the context again to see it.
        case reopen
        /// No trigger is set and none can be: the buffer is tried all the same (a device may stream
        /// by itself: `ReadMode.noTriggerReported`), and `why` is the reason it is polled if the
        /// kernel refuses it.
        case tryWithout(why: String)

        var whyNot: String? { if case .tryWithout(let why) = self { why } else { nil } }
        var trigger: String? {
            switch self {
            case .use(let trigger): trigger
            case .tryWithout: ReadMode.noTriggerReported
            case .reopen: nil
            }
        }
    }

    /// The trigger that fills `device`'s buffer: the one set (the driver's own, or one the rider
    /// chose), else RideGuard's timer trigger (TimerTrigger) at `rate`, made here where it can be.
    private static func chooseTrigger(for device: OpaquePointer, in context: OpaquePointer, uri: String, rate: Double) -> TriggerChoice {
        func useTimer(_ timer: OpaquePointer) -> Int32 {
            // Assigned first: the kernel refuses (EBUSY) while another reader has the buffer on (an
            // agent running while an installer records), and that reader's rate is then left alone.
            let status = iio_device_set_trigger(device, timer)
            // The timer's rate is the chip's: a faster one would read each sample more than once.
            // One it cannot set runs at its own, which the rate window then reports.
            if status == 0 { _ = iio_device_attr_write_longlong(timer, "sampling_frequency", Int64(rate.rounded())) }
            return status
        }
        var current: OpaquePointer?
        // No trigger/ folder (ENOENT): the buffer takes no trigger (a hardware FIFO). An empty
        // current_trigger is 0 and none from libiio 0.25 on, an error (EIO) from 0.24's.
        let state = iio_device_get_trigger(device, &current)
        if state == -ENOENT { return .use(nil) }
        if state == 0, let current {
            let name = iio_device_get_name(current).map { String(cString: $0) } ?? "?"
            if name == TimerTrigger.name { _ = useTimer(current) }
            return .use(name)
        }
        // None set: the driver's own trigger comes from the chip's INT line.
        let intNotWired = "INT not wired: the driver's trigger comes from the chip's interrupt line"
        if let timer = iio_context_find_device(context, TimerTrigger.name), iio_device_is_trigger(timer) {
            let status = useTimer(timer)
            guard status == 0 else {
                return .tryWithout(why: "\(intNotWired), and the driver refuses RideGuard's timer trigger (\(Errno(rawValue: -status)))")
            }
            return .use(TimerTrigger.name)
        }
        // Only this machine's kernel can make one.
        guard uri == "local:" else { return .tryWithout(why: intNotWired) }
        switch TimerTrigger.make() {
        case .made: return .reopen
        case .existing: return .tryWithout(why: "\(intNotWired), and RideGuard's timer trigger is not listed by libiio")
        case .impossible(let why): return .tryWithout(why: "\(intNotWired), and \(why)")
        }
    }

    /// Asks for `rate` Hz where the driver takes it: the device's `sampling_frequency`, else the
    /// channel type's (`in_accel_sampling_frequency`, as the BMI160's and the LSM6DSx's drivers
    /// have it). Returns what the driver says it runs at, `rate` when it says nothing.
    private static func setRate(_ device: OpaquePointer, _ rate: Double, type: String) -> Double {
        let hz = Int64(rate.rounded())
        var actual = 0.0
        if iio_device_find_attr(device, "sampling_frequency") != nil {
            _ = iio_device_attr_write_longlong(device, "sampling_frequency", hz)
            if iio_device_attr_read_double(device, "sampling_frequency", &actual) == 0 && actual > 0 { return actual }
        } else if let channel = iio_device_find_channel(device, type + "_x", false), iio_channel_find_attr(channel, "sampling_frequency") != nil {
            _ = iio_channel_attr_write_longlong(channel, "sampling_frequency", hz)
            if iio_channel_attr_read_double(channel, "sampling_frequency", &actual) == 0 && actual > 0 { return actual }
        }
        return rate
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

    /// Reads the raw channels in turn at `rate`, paced by the monotonic clock (a late read is not
    /// made up for: the next one is a period after it). Each sample's time is its read's.
    private static func polled(device: OpaquePointer, gyroDevice: OpaquePointer?, name: String, rate: Double, reason: String,
                               shared: Shared, onSample: @Sendable (IMUSample) -> Void, heartbeat: @Sendable () -> Void,
                               onEvent: @Sendable (SamplerEvent) -> Void, onHealthy: () -> Void) throws(IIOError) {
        func channels(_ device: OpaquePointer, _ type: String) -> [Channel]? {
            let found = ["x", "y", "z"].compactMap { iio_device_find_channel(device, "\(type)_\($0)", false) }
            guard found.count == 3, found.allSatisfy({ iio_channel_find_attr($0, "raw") != nil }) else { return nil }
            return found.map { prepare($0, enable: false) }
        }
        guard let accel = channels(device, "accel") else {
            throw IIOError(operation: "finding in_accel_x/y/z_raw on", target: name, errno: Errno(rawValue: ENOENT))
        }
        let gyro = channels(gyroDevice ?? device, "anglvel")
        let shown = gyroDevice.flatMap { iio_device_get_name($0) }.map { name + " + " + String(cString: $0) } ?? name
        onEvent(.opened(device: shown, gyro: gyro != nil, timestamps: false, rateHz: rate, accelScale: accel[0].scale, mode: .polled(reason: reason)))
        func read(_ channel: Channel) throws(IIOError) -> Double {
            var raw: Int64 = 0
            let status = iio_channel_attr_read_longlong(channel.pointer, "raw", &raw)
            guard status == 0 else {
                let id = iio_channel_get_id(channel.pointer).map { String(cString: $0) } ?? "?"
                throw IIOError(operation: "reading in_\(id)_raw on", target: name, errno: Errno(rawValue: -status))
            }
            return (Double(raw) + channel.offset) * channel.scale
        }
        let period = 1 / rate
        var next = monotonicSeconds()
        var window = RateWindow(nominal: rate)
        while shared.running.load(ordering: .acquiring) {
            let t = monotonicSeconds()
            let a = Vector3(try read(accel[0]), try read(accel[1]), try read(accel[2]))
            var w: Vector3?
            if let gyro { w = Vector3(try read(gyro[0]), try read(gyro[1]), try read(gyro[2])) }
            heartbeat()
            onHealthy()
            shared.touch()
            onSample(IMUSample(t: t, accel: a, gyro: w))
            if let change = window.add(t) { onEvent(window.event(change)) }
            next = max(next + period, monotonicSeconds())
            let wait = next - monotonicSeconds()
            if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
        }
    }

    /// The gyro of a chip split in two IIO devices, with a buffer of its own.
    struct GyroHalf {
        let device: OpaquePointer
        let name: String
        let rates: [OpaquePointer]
        let timestamp: OpaquePointer?
    }

    /// Samples of a buffer: each one's time and its three channels, converted. Kept from one refill
    /// to the next, so that reading allocates nothing once it has run a while.
    package struct Batch {
        package var times: [Double] = []
        package var values: [Vector3] = []

        package init(times: [Double] = [], values: [Vector3] = []) {
            self.times = times
            self.values = values
        }

        mutating func removeAll() {
            times.removeAll(keepingCapacity: true)
            values.removeAll(keepingCapacity: true)
        }
    }

    /// Reads the driver's buffer until stopped (nil), or until it has stayed empty since it was
    /// enabled for four stall times (or until iiod's connection broke waiting for the first
    /// samples): then returns how long, seconds, for the caller to poll instead. A chip split in two
    /// devices (`gyroHalf`) has its gyro's buffer refilled after each of the accelerometer's, and
    /// each acceleration takes the rotation read nearest to it in time (by index without timestamps).
    private static func buffered(_ c: SamplerConfiguration, device: OpaquePointer, name: String, accel ax: [OpaquePointer],
                                 gyro gyroScan: [OpaquePointer?], gyroHalf: GyroHalf?, timestamp: OpaquePointer?, rate actualRate: Double,
                                 trigger: String?, shared: Shared, onSample: @Sendable (IMUSample) -> Void, heartbeat: @Sendable () -> Void,
                                 onEvent: @Sendable (SamplerEvent) -> Void, onHealthy: () -> Void) throws(IIOError) -> Double? {
        let hasGyro = gyroScan.allSatisfy { $0 != nil }
        var half = hasGyro ? nil : gyroHalf
        let accel = ax.map { prepare($0, enable: true) }
        let rates = hasGyro ? gyroScan.map { prepare($0!, enable: true) } : half?.rates.map { prepare($0, enable: true) } ?? []
        if let timestamp { iio_channel_enable(timestamp) }
        if let stamp = half?.timestamp { iio_channel_enable(stamp) }

        let samplesPerRefill = max(1, Int(actualRate / 25))
        /// A buffer on `device` for the `channels` enabled on it (disabled again if it cannot be made).
        func create(_ device: OpaquePointer, _ name: String, channels: [OpaquePointer]) throws(IIOError) -> OpaquePointer {
            guard let buffer = iio_device_create_buffer(device, samplesPerRefill, false) else {
                let code = errno
                for channel in channels { iio_channel_disable(channel) }
                throw IIOError(operation: "creating a buffer on", target: name, errno: Errno(rawValue: code))
            }
            shared.buffers.withLock { $0.append(BufferHandle(pointer: buffer)) }
            return buffer
        }
        defer {
            // Under the lock: the watchdog and stop() never cancel a destroyed buffer, and stop()
            // returns only once they are gone.
            shared.buffers.withLock {
                for buffer in $0 { iio_buffer_destroy(buffer.pointer) }
                $0 = []
            }
        }
        let buffer = try create(device, name, channels: ax + (hasGyro ? gyroScan.compactMap { $0 } : []) + [timestamp].compactMap { $0 })
        // Without the gyro half's buffer the accelerometer's still serves: the gyro is then missed, and said so.
        var gyroBuffer: OpaquePointer?
        if let chosen = half {
            gyroBuffer = try? create(chosen.device, chosen.name, channels: chosen.rates + [chosen.timestamp].compactMap { $0 })
            if gyroBuffer == nil { half = nil }
        }
        shared.restartClock()
        onEvent(.opened(device: half.map { name + " + " + $0.name } ?? name, gyro: hasGyro || half != nil, timestamps: timestamp != nil,
                        rateHz: actualRate, accelScale: accel[0].scale, mode: .buffer(trigger: trigger)))

        let period = 1 / actualRate
        var lastT = -Double.infinity
        var window = RateWindow(nominal: actualRate)
        var filled = false, timedOut = false
        var batch = Batch(), own = Batch(), pendingGyro = Batch()
        var lastRotation: Vector3?
        while shared.running.load(ordering: .acquiring) {
            let n = iio_buffer_refill(buffer)
            heartbeat()
            if n < 0 {
                let code = Int32(-n)
                if !shared.running.load(ordering: .acquiring) { return nil }
                // The watchdog cancels a refill once the silence reaches four stall times.
                let quiet = shared.quiet
                if code == ETIMEDOUT || code == EAGAIN {
                    timedOut = true
                    if quiet < c.stallSeconds * 4 { continue }
                }
                // Empty from the start: long enough, or the backend gave up waiting (a network
                // context breaks its connection on a time-out: EPIPE, or another error after it).
                if !filled && (quiet >= c.stallSeconds * 4 || code == EPIPE || timedOut) { return quiet }
                throw IIOError(operation: "reading samples from", target: name, errno: Errno(rawValue: code))
            }
            filled = true
            onHealthy()
            shared.touch()
            let now = monotonicSeconds()
            batch.removeAll()
            read(buffer, accel, timestamp: timestamp, now: now, period: period, into: &batch)
            if hasGyro {
                own.removeAll()
                read(buffer, rates, timestamp: timestamp, now: now, period: period, into: &own)
            } else if let gyroBuffer, let half {
                let m = iio_buffer_refill(gyroBuffer)
                heartbeat()
                guard m >= 0 else {
                    if !shared.running.load(ordering: .acquiring) { return nil }
                    throw IIOError(operation: "reading samples from", target: half.name, errno: Errno(rawValue: Int32(-m)))
                }
                read(gyroBuffer, rates, timestamp: half.timestamp, now: monotonicSeconds(), period: period, into: &pendingGyro)
                // Never more than a few refills behind (two halves at different rates, without timestamps).
                let excess = pendingGyro.times.count - 4 * samplesPerRefill
                if excess > 0 {
                    pendingGyro.times.removeFirst(excess)
                    pendingGyro.values.removeFirst(excess)
                }
            }
            for (i, t) in batch.times.enumerated() {
                if lastT.isFinite {
                    let missing = Int(((t - lastT) / period).rounded()) - 1
                    if missing >= 1 { onEvent(.dropped(missing)) }
                }
                lastT = t
                if let change = window.add(t) { onEvent(window.event(change)) }
                var w: Vector3?
                if hasGyro {
                    w = own.values[i]
                } else if half != nil {
                    lastRotation = nearest(t, in: &pendingGyro, timed: timestamp != nil && half?.timestamp != nil, period: period) ?? lastRotation
                    w = lastRotation
                }
                onSample(IMUSample(t: t, accel: batch.values[i], gyro: w))
            }
        }
        return nil
    }

    /// Appends the samples of one refill for three channels to `batch`: each one's time is its
    /// timestamp, or without one the refill's time spread back over the refill at `period`.
    private static func read(_ buffer: OpaquePointer, _ channels: [Channel], timestamp: OpaquePointer?, now: Double, period: Double,
                             into batch: inout Batch) {
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

    /// The rotation of the same instant as `t` (nearest to it, less than half a period away) among
    /// those pending, which are dropped up to it; without timestamps on both halves, the next one in
    /// order. A rotation a whole period away is the next or the last instant's, never this one's.
    package static func nearest(_ t: Double, in pending: inout Batch, timed: Bool, period: Double) -> Vector3? {
        guard !pending.times.isEmpty else { return nil }
        var i = 0
        if timed {
            while i + 1 < pending.times.count && abs(pending.times[i + 1] - t) <= abs(pending.times[i] - t) { i += 1 }
            guard abs(pending.times[i] - t) < period / 2 else {
                // All ahead of `t` (kept for the samples to come), or all behind it (dropped).
                if pending.times[i] < t { pending.removeAll() }
                return nil
            }
        }
        let found = pending.values[i]
        pending.times.removeFirst(i + 1)
        pending.values.removeFirst(i + 1)
        return found
    }

    /// The rate over 5 s windows of sample time: says whether the first window of an opening runs
    /// more than 20 % away from the nominal rate or within it, and after that each time it crosses.
    struct RateWindow {
        enum Change: Equatable {
            case off(Double)
            case normal(Double)
        }

        let nominal: Double
        var start = Double.nan, count = 0
        /// Whether the last window was off; nil before the first.
        var wasOff: Bool?

        /// A sample at `t`; the measured rate when a window ends that says something new.
        mutating func add(_ t: Double) -> Change? {
            if start.isNaN { start = t }
            count += 1
            guard t - start >= 5 else { return nil }
            let measured = Double(count - 1) / (t - start)
            let off = abs(measured / nominal - 1) > 0.2
            defer {
                wasOff = off
                start = t
                count = 1
            }
            guard off != wasOff else { return nil }
            return off ? .off(measured) : .normal(measured)
        }

        /// The event for a change.
        func event(_ change: Change) -> SamplerEvent {
            switch change {
            case .off(let measured): .rateOff(measured: measured, nominal: nominal)
            case .normal(let measured): .rateNormal(measured: measured, nominal: nominal)
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
    /// The widest range the driver offers: the accelerometer's largest scale, or where the range is
    /// a device attribute of its own (the BNO055's `in_accel_range_raw`, its scale fixed at 0.01
    /// m/s² a count) the largest of those. The BNO055 runs its on-chip fusion from its probe, which
    /// holds the accelerometer at ±4 g, less than a crash's impacts: its fusion is turned off (AMG
    /// mode, raw acceleration and rotation) first, so that ±16 g can be asked.
    private static func widenRange(_ accel: OpaquePointer, of device: OpaquePointer) {
        var text = [CChar](repeating: 0, count: 256)
        if iio_device_find_attr(device, "fusion_enable") != nil { _ = iio_device_attr_write_longlong(device, "fusion_enable", 0) }
        if iio_device_attr_read(device, "in_accel_range_raw_available", &text, text.count) > 0,
           let widest = String(cString: text).split(separator: " ").compactMap({ Int64($0) }).max() {
            _ = iio_device_attr_write_longlong(device, "in_accel_range_raw", widest)
        }
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
