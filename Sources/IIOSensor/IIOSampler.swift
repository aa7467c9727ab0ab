// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import CIIO
import RideGuardCore
import SystemCalls
import SystemPackage

/// Reads the IMU on a dedicated thread: opens the machine's IIO devices (through libiio; through
/// sysfs where libiio cannot open them), finds the IMU and sets it up (IMUDevice), then reads it
/// one of two ways by one rule (ReadPlan), and says which (ReadMode):
///  - the driver's buffer, whenever the device has one, through the trigger TriggerChoice finds
///    (the driver's own, RideGuard's timer trigger, or none where the device streams by itself);
///  - polled, where the driver gives no buffer (the MPU-6050's and the LSM6DSx's exist only with
///    the chip's INT line wired; the ADXL345's before Linux 6.15 never), or one that cannot be
///    enabled (no trigger), or one that stays empty once enabled (the interrupt never arrives, or
///    the driver drops the data): each raw channel read in turn, paced by the monotonic clock.
///    Slower where the driver powers the chip up for each read. A poll that fails goes back to the
///    buffer at the next opening.
/// Both deliver through one SampleSink. After an error it closes everything and reopens with
/// backoff. A watchdog thread reports a stall at once, whatever the reading does. `stop()` cancels a
/// blocked refill.
package final class IIOSampler: Sendable {
    private let liveness = SamplerLiveness()
    package let configuration: SamplerConfiguration
    /// The longest wait before opening the IMU again: an IMU whose driver loads late (udev at boot,
    /// an overlay fixed, a connector pushed back) is read within this, and a try costs a look
    /// through sysfs.
    package static let retryLimitSeconds = 5.0

    /// Where the kernel's IIO files are, for reading through sysfs without libiio.
    package struct SysfsPaths: Sendable {
        /// The IIO devices' folder, /sys/bus/iio/devices.
        package var devices: String
        /// The character devices' folder, /dev.
        package var characterDevices: String

        package static let kernel = SysfsPaths(devices: "/sys/bus/iio/devices", characterDevices: "/dev")

        package init(devices: String, characterDevices: String) {
            self.devices = devices
            self.characterDevices = characterDevices
        }
    }

    /// `heartbeat` is called from the sampler's thread at every turn of its loop (a refill, a
    /// refill's time-out, a tenth of a second waiting to reopen): the thread is alive, samples or not.
    /// `sysfs`, where given, is read through sysfs at those paths instead of libiio (as where libiio
    /// refuses this machine's devices).
    package init(configuration: SamplerConfiguration, sysfs: SysfsPaths? = nil, onSample: @escaping @Sendable (IMUSample) -> Void,
                heartbeat: @escaping @Sendable () -> Void = {}, onEvent: @escaping @Sendable (SamplerEvent) -> Void) {
        self.configuration = configuration
        // A peer closing its socket must not kill the process (libiio writes to it with plain send).
        signal(SIGPIPE, SIG_IGN)
        let liveness = self.liveness
        // The watchdog: silence since the last sample longer than the stall time is a fault, reported
        // at once, whatever libiio's timeouts and reopening do; four times longer cancels a refill
        // still waiting so that the sampler reopens.
        startThread("rg-iio-watchdog") {
            while liveness.isRunning {
                usleep(50_000)
                let quiet = liveness.quiet
                if quiet >= configuration.stallSeconds && !liveness.stallReported.exchange(true, ordering: .acquiringAndReleasing) {
                    onEvent(.stalled(seconds: quiet))
                }
                if quiet >= configuration.stallSeconds * 4 {
                    liveness.cancelRefills()
                }
            }
        }
        startThread("rg-sampler") {
            var backoff = Backoff(first: 0.5, limit: IIOSampler.retryLimitSeconds)
            var plan = ReadPlan()
            while liveness.isRunning {
                heartbeat()
                var sink = SampleSink(rate: configuration.rateHz, windowSeconds: configuration.rateWindowSeconds, liveness: liveness, onSample: onSample, heartbeat: heartbeat, onEvent: onEvent)
                do {
                    try IIOSampler.session(configuration, sysfs: sysfs, plan: &plan, sink: &sink)
                    if liveness.takeDelivered() { backoff.reset() }
                } catch {
                    // An opening that gave samples was a healthy one: the next waits the least.
                    if liveness.takeDelivered() { backoff.reset() }
                    guard liveness.isRunning else { break }
                    let wait = backoff.next()
                    onEvent(.failed(reason: "\(error)", retryIn: wait))
                    var left = wait
                    while left > 0 && liveness.isRunning {
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
        liveness.running.store(false, ordering: .releasing)
        let deadline = monotonicSeconds() + 1
        while liveness.buffers.withLock({ !$0.isEmpty }) && monotonicSeconds() < deadline { usleep(5_000) }
        liveness.cancelRefills()
    }

    /// One opening: the devices opened, the IMU found and set up, then read until stopped or an
    /// error; returns at once where RideGuard's timer trigger was just made (a new opening sees it).
    private static func session(_ c: SamplerConfiguration, sysfs: SysfsPaths?, plan: inout ReadPlan, sink: inout SampleSink) throws(IIOError) {
        let imu = try open(c, sysfs: sysfs)
        sink.nominal(imu.rate)
        var reason: String
        switch plan.step(bufferless: imu.bufferless) {
        case .poll(let why):
            reason = why
        case .tryBuffer:
            let choice = TriggerChoice.choose(for: imu)
            if choice == .reopen { return }
            do {
                if let silent = try imu.readBuffer(trigger: choice.trigger, stallSeconds: c.stallSeconds, into: &sink) {
                    // Polled from a fresh opening (a network context is broken by the time-out).
                    plan.bufferStayedEmpty(for: silent)
                }
                return
            } catch let error where error.errno == .invalidArgument {
                // The kernel refuses to enable a buffer that has no trigger to fill it.
                reason = choice.whyNot ?? "the buffer cannot be enabled (\(error.errno)): no trigger, INT not wired"
            }
        }
        do {
            try imu.poll(reason: reason, into: &sink)
        } catch {
            // The chip, or its driver, went away: the next opening tries its buffer again.
            plan.pollingFailed()
            throw error
        }
    }

    /// The IMU through libiio; on this machine, through sysfs where libiio refuses its devices.
    private static func open(_ c: SamplerConfiguration, sysfs: SysfsPaths?) throws(IIOError) -> any IMUDevice {
        if let sysfs { return try SysfsIMU(configuration: c, libiioRefused: "asked so", paths: sysfs) }
        do {
            return try LibIIOIMU(context: try IIOContext(uri: c.uri), configuration: c)
        } catch where c.uri == "local:" && error.operation == IIOContext.openingOperation && error.errno == .noSuchFileOrDirectory {
            // No /sys/bus/iio/devices: the IIO core, and so the IMU's driver, is not loaded.
            throw IIOError(operation: "no IIO device on this machine: the IMU's driver is not loaded (its overlay in config.txt, boards/imus.md); opening",
                           target: c.uri, errno: error.errno)
        } catch where c.uri == "local:" && error.operation == IIOContext.openingOperation {
            // libiio refuses the whole machine's devices where one of them has channels it cannot
            // name (the BNO055's: bookworm's libiio 0.24 gives EINVAL): the kernel's own files serve.
            return try SysfsIMU(configuration: c, libiioRefused: "libiio \(IIOContext.libraryVersion) cannot open this machine's IIO devices (\(error.errno))",
                                paths: .kernel)
        }
    }
}
