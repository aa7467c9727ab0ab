// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import RideGuardCore
import SystemCalls
import SystemPackage

/// An IMU found and set up (its rate and range asked), as the sampler reads it, whichever way it is
/// reached: through libiio (LibIIOIMU), or through sysfs and its character device where libiio
/// cannot open this machine's IIO devices (SysfsIMU).
protocol IMUDevice {
    /// The device as shown: "mpu6050", or "lsm6dsl_accel + lsm6dsl_gyro" for a chip split in two.
    var name: String { get }
    /// The rate the driver says it runs at, Hz.
    var rate: Double { get }
    /// Why the device has no buffer to try (no accelerometer scan elements); nil when it has one.
    var bufferless: String? { get }
    /// Whether this is the machine the sampler runs on (only its kernel can make a trigger).
    var isLocal: Bool { get }
    /// The trigger set on the device's buffer.
    func currentTrigger() -> CurrentTrigger
    /// Whether RideGuard's timer trigger is listed among the triggers.
    func timerListed() -> Bool
    /// Assigns RideGuard's timer trigger to the device and runs it at the device's rate: 0, or the
    /// kernel's -errno (EBUSY while another reader has the buffer on).
    func useTimer() -> Int32
    /// Reads the buffer through `trigger` until stopped (nil), or until it has stayed empty since it
    /// was enabled for four stall times: then how long, seconds. Throws EINVAL where the kernel
    /// refuses to enable it.
    func readBuffer(trigger: String?, stallSeconds: Double, into sink: inout SampleSink) throws(IIOError) -> Double?
    /// Reads the raw channels at the rate until stopped.
    func poll(reason: String, into sink: inout SampleSink) throws(IIOError)
}

enum CurrentTrigger: Equatable {
    /// The buffer takes no trigger (no trigger/ folder: a hardware FIFO).
    case takesNone
    /// None is set.
    case unset
    case named(String)
}

/// The trigger that fills a device's buffer: the one set (the driver's own, or one the rider chose),
/// else RideGuard's timer trigger (TimerTrigger) at the device's rate, made here where it can be.
enum TriggerChoice: Equatable {
    /// Read the buffer through this trigger (nil: a hardware FIFO, which takes none).
    case use(String?)
    /// RideGuard's timer trigger was made: open the devices again to see it.
    case reopen
    /// No trigger is set and none can be: the buffer is tried all the same (a device may stream by
    /// itself: `ReadMode.noTriggerReported`), and `why` is the reason it is polled if the kernel
    /// refuses it.
    case tryWithout(why: String)

    var whyNot: String? { if case .tryWithout(let why) = self { why } else { nil } }
    var trigger: String? {
        switch self {
        case .use(let trigger): trigger
        case .tryWithout: ReadMode.noTriggerReported
        case .reopen: nil
        }
    }

    static func choose(for device: some IMUDevice, make: () -> TimerTrigger.Made = TimerTrigger.make) -> TriggerChoice {
        switch device.currentTrigger() {
        case .takesNone: return .use(nil)
        case .named(let name):
            // Assigned again: its rate follows the device's.
            if name == TimerTrigger.name { _ = device.useTimer() }
            return .use(name)
        case .unset: break
        }
        // None set: the driver's own trigger comes from the chip's INT line.
        let intNotWired = "INT not wired: the driver's trigger comes from the chip's interrupt line"
        if device.timerListed() {
            let status = device.useTimer()
            guard status == 0 else {
                return .tryWithout(why: "\(intNotWired), and the driver refuses RideGuard's timer trigger (\(Errno(rawValue: -status)))")
            }
            return .use(TimerTrigger.name)
        }
        // Only this machine's kernel can make one.
        guard device.isLocal else { return .tryWithout(why: intNotWired) }
        switch make() {
        case .made: return .reopen
        case .existing: return .tryWithout(why: "\(intNotWired), and RideGuard's timer trigger is not listed")
        case .impossible(let why): return .tryWithout(why: "\(intNotWired), and \(why)")
        }
    }
}

/// The polled reading both ways share.
enum PolledLoop {
    /// Reads a sample with `read` at `rate`, paced by the monotonic clock (a late read is not made up
    /// for: the next one is a period after it). Each sample's time is its read's.
    static func run(rate: Double, into sink: inout SampleSink, read: () throws(IIOError) -> (Vector3, Vector3?)) throws(IIOError) {
        var pacing = PollPacing(rate: rate, start: monotonicSeconds())
        while sink.running {
            let t = monotonicSeconds()
            let (a, w) = try read()
            sink.beat()
            sink.arrived()
            sink.deliver(IMUSample(t: t, accel: a, gyro: w), gaps: false)
            let wait = pacing.wait(now: monotonicSeconds())
            if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
        }
    }
}
