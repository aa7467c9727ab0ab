// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import GPIOLines
import IIOSensor
import RideGuardCore
import RideGuardDoctor
import Storage
import Synchronization

/// The doctor's checks that open the hardware itself (the IMU through libiio or sysfs, the GPIO
/// lines through libgpiod), for `rideguard doctor` and `setup` on the Pi when the agent is not
/// running. Kept apart so that the page's program, which sees no devices, links neither library.
package struct LocalHardware: HardwareChecks {
    /// How long the IMU is sampled at rest.
    package var sampleSeconds = 2.0

    package init() {}

    /// Samples the IMU at rest for `sampleSeconds`: found, rate, about 1 g, every axis alive.
    package func imu(_ imu: AgentConfiguration.IMU) -> DoctorCheck {
        if imu.simulated {
            struct HeaderRead: Error {}
            var header: TraceHeader?
            do {
                try TraceFile.stream(path: imu.trace ?? "", onHeader: { header = $0; throw HeaderRead() }) { _ in }
            } catch is HeaderRead {
            } catch {
                return DoctorCheck("IMU", .failed, "simulated: \(error)", fix: "imu.trace must be a trace file (CSV v1)")
            }
            let rate = header?.rateHz.map { "\(Int($0)) Hz" } ?? "rate unknown"
            return DoctorCheck("IMU", .ok, "simulated: \(imu.trace ?? "") (\(rate)\(header?.hasGyro == true ? ", with gyro" : ""))")
        }
        struct Seen: Sendable {
            var opened: (device: String, gyro: Bool, rate: Double, scale: Double, mode: ReadMode)?
            var failure: String?
            var samples: [IMUSample] = []
        }
        let seen = Mutex(Seen())
        let limit = Int(imu.rateHz * sampleSeconds)
        let sampler = IIOSampler(configuration: SamplerConfiguration(uri: imu.uri, device: imu.device, rateHz: imu.rateHz), onSample: { sample in
            seen.withLock { if $0.samples.count < limit { $0.samples.append(sample) } }
        }, onEvent: { event in
            seen.withLock { s in
                switch event {
                case .opened(let device, let gyro, _, let rate, let scale, let mode): s.opened = (device, gyro, rate, scale, mode)
                case .failed(let reason, _): if s.opened == nil { s.failure = reason }
                default: break
                }
            }
        })
        defer { sampler.stop() }
        let deadline = Date().addingTimeInterval(5 + sampleSeconds * 1.5)
        while Date() < deadline {
            let s = seen.withLock { ($0.failure, $0.samples.count) }
            if s.0 != nil || s.1 >= limit { break }
            usleep(50_000)
        }
        let result = seen.withLock { $0 }
        let fix = imu.uri.hasPrefix("ip:")
            ? "is iiod running and reachable at \(imu.uri.dropFirst(3))? (iio_info -u \(imu.uri))"
            : "check the wiring and the overlay in config.txt, then: ls /sys/bus/iio/devices; the service user must be in the iio group. "
                + "Raspberry Pi OS's kernel drives these with one line in /boot/firmware/config.txt: \(IMUChip.oneLineOnRaspberryPiOS); "
                + "others need a module built (boards/imus.md)"
        if let failure = result.failure {
            // No IIO device: is a known chip on the bus without one, and has the kernel its driver?
            if imu.uri == "local:" {
                let (chips, unreadable) = IMUOnTheBus().look()
                if let chip = chips.first {
                    return DoctorCheck("IMU", .failed, "\(imu.uri) \(imu.device ?? "(any known IMU)"): \(chip.found)", fix: chip.advice)
                }
                if let unreadable {
                    return DoctorCheck("IMU", .failed, "\(imu.uri) \(imu.device ?? "(any known IMU)"): \(failure); \(unreadable)", fix: fix)
                }
            }
            return DoctorCheck("IMU", .failed, "\(imu.uri) \(imu.device ?? "(any known IMU)"): \(failure)", fix: fix)
        }
        guard let opened = result.opened else {
            return DoctorCheck("IMU", .failed, "\(imu.uri): no answer in 5 s", fix: fix)
        }
        let samples = result.samples
        guard samples.count >= 10, let first = samples.first, let last = samples.last, last.t > first.t else {
            return DoctorCheck("IMU", .failed, "\(opened.device) opened but sent \(samples.count) samples", fix: "the IMU's interrupt line (INT) must be wired and set in its overlay")
        }
        let rate = Double(samples.count - 1) / (last.t - first.t)
        var mean = Vector3.zero
        var low = [Double](repeating: .infinity, count: 3)
        var high = [Double](repeating: -.infinity, count: 3)
        for sample in samples {
            mean += sample.accel / Double(samples.count)
            for axis in 0..<3 {
                low[axis] = min(low[axis], sample.accel[axis])
                high[axis] = max(high[axis], sample.accel[axis])
            }
        }
        // A MEMS axis at rest always shows a few counts of noise; one that shows exactly nothing
        // while another does is stuck.
        let moving = (0..<3).filter { high[$0] > low[$0] }
        let stuck = moving.isEmpty ? [] : (0..<3).filter { high[$0] == low[$0] }
        var check = Doctor.rateAndGravity(rate: rate, expected: imu.rateHz, gravity: mean.magnitude / standardGravity,
                                   deadAxis: stuck.first.map { "axis \(["x", "y", "z"][$0]) reads exactly \(DecimalFormat.string(low[$0], decimals: 3)) m/s² without any noise" })
        let scale = "\(DecimalFormat.string(opened.scale, decimals: 6)) m/s² a count"
        check.detail = Doctor.describe(device: opened.device + (opened.gyro ? " with gyro" : ", accelerometer only"),
                                       how: Self.how(opened.device, read: opened.mode.summary + ", " + scale, sysfs: imu.uri == "local:")) + check.detail
        return check
    }

    /// Reads the ignition's line as the agent would: on or off now.
    package func ignition(_ gpio: AgentConfiguration.GPIO) -> DoctorCheck {
        guard let ignition = gpio.ignition else { return DoctorCheck("ignition", .ok, "not wired") }
        do {
            let line = try GPIOLine.input(GPIOLineAddress(ignition), consumer: "rideguard-doctor", activeLow: gpio.ignitionActiveLow,
                                          bias: gpio.ignitionActiveLow ? .pullUp : .pullDown)
            return DoctorCheck("ignition", .ok, "\(ignition) reads \(try line.isActive() ? "on" : "off") (turn the key to see it change)")
        } catch {
            return DoctorCheck("ignition", .failed, "ignition \(ignition): \(error)", fix: Doctor.gpioFix)
        }
    }

    /// Requests the buzzer and the button like the agent does; a button that reads pressed while
    /// nobody touches it is wired wrong (or button_active_low is).
    package func gpio(_ gpio: AgentConfiguration.GPIO) -> DoctorCheck {
        if gpio.simulated { return DoctorCheck("GPIO", .ok, "simulated: presses come from rideguard ctl press") }
        do {
            _ = try GPIOLine.output(GPIOLineAddress(gpio.buzzer), consumer: "rideguard-doctor")
        } catch {
            return DoctorCheck("GPIO", .failed, "buzzer \(gpio.buzzer): \(error)", fix: Doctor.gpioFix)
        }
        do {
            let button = try GPIOLine.input(GPIOLineAddress(gpio.button), consumer: "rideguard-doctor", activeLow: gpio.buttonActiveLow)
            if try button.isActive() {
                return DoctorCheck("GPIO", .failed, "the button \(gpio.button) reads pressed while nobody presses it",
                                   fix: "wire the button between the pin and ground (the line's pull-up holds it high), or correct gpio.button_active_low")
            }
        } catch {
            return DoctorCheck("GPIO", .failed, "button \(gpio.button): \(error)", fix: Doctor.gpioFix)
        }
        return DoctorCheck("GPIO", .ok, "buzzer \(gpio.buzzer) and button \(gpio.button) requested; the button reads released")
    }

    /// How an opened IMU is read, with what sysfs says of a local one (its driver, its mount matrix).
    static func how(_ device: String, read: String, sysfs: Bool) -> String {
        ([read] + [sysfs ? IIOSysfs(deviceNamed: device)?.summary : nil].compactMap { $0 }).joined(separator: "; ")
    }
}
