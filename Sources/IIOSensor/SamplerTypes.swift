// SPDX-License-Identifier: Apache-2.0
import RideGuardCore

/// Where and how to sample the IMU.
package struct SamplerConfiguration: Codable, Equatable, Sendable {
    /// `local:` on the Pi, `ip:host[:port]` for a remote iiod.
    package var uri = "local:"
    /// The IIO device name; nil finds a known IMU.
    package var device: String?
    package var rateHz = 200.0
    /// No sample for this long is a stalled stream, seconds.
    package var stallSeconds = 0.5
    /// The rate is measured over windows this long of sample time, seconds (`RateWindow`).
    package var rateWindowSeconds = 5.0
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
