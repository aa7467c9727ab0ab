// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SystemPackage

/// RideGuard's own IIO trigger: the kernel's timer trigger (`iio-trig-hrtimer`), made through
/// configfs under the name `rideguard` and run at the sampler's rate. It fills the buffer of a chip
/// whose driver has a triggered buffer but takes its own trigger from the INT line, when that line
/// is not wired: the BMI160 (its trigger only from a device tree's INT1/INT2) and the LIS3DH.
/// Drivers that give no buffer at all without INT (MPU-6050, LSM6DSx) or that accept only their own
/// trigger cannot use it; they are polled.
///
/// Making it is a mkdir in configfs, which only root may do: the service's unit loads the module and
/// makes it before the agent starts (`ExecStartPre=+`), and a sampler run as root (`sudo rideguard
/// record`) makes it itself once the module is loaded. Raspberry Pi OS's kernels build iio-trig-hrtimer as a module; Debian's
/// amd64 kernel (6.1) does not.
package enum TimerTrigger {
    package static let name = "rideguard"
    /// The hrtimer trigger type's folder, there once configfs is mounted and the module loaded.
    package static let typeFolder = "/sys/kernel/config/iio/triggers/hrtimer"

    package enum Made: Equatable {
        case made
        /// Its configfs folder already exists.
        case existing
        /// Why not, in the rider's words.
        case impossible(String)
    }

    /// Makes the trigger through configfs.
    package static func make() -> Made {
        guard access(typeFolder, F_OK) == 0 else {
            return .impossible("the kernel's timer trigger is not loaded (iio-trig-hrtimer, and configfs mounted on /sys/kernel/config)")
        }
        if mkdir(typeFolder + "/" + name, 0o755) == 0 { return .made }
        let code = errno
        switch code {
        case EEXIST: return .existing
        case EACCES, EPERM: return .impossible("making RideGuard's timer trigger needs root (the service makes it as it starts)")
        default: return .impossible("making \(typeFolder)/\(name): \(Errno(rawValue: code))")
        }
    }
}
