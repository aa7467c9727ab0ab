// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SystemPackage

/// What sysfs says about a local IIO device that libiio does not: the kernel driver bound to the
/// chip (the IIO device's parent, an I2C or SPI device) and the accelerometer's mount matrix
/// (`in_accel_mount_matrix` or `in_mount_matrix`, from the device tree's `mount-matrix`).
package struct IIOSysfs: Equatable, Sendable {
    /// The driver's name, such as `inv-mpu6050-i2c` or `lis3dh`: nil where the parent has none.
    package let driver: String?
    /// The matrix as the kernel prints it ("1, 0, 0; 0, 1, 0; 0, 0, 1"); nil where the driver has none.
    package let mountMatrix: String?

    package static let identity = "1, 0, 0; 0, 1, 0; 0, 0, 1"

    /// Looks up the device named `name` (the first of a split chip's "accel + gyro" pair) under
    /// `root`; nil where no such device is there (not local, or gone).
    package init?(deviceNamed name: String, root: String = "/sys/bus/iio/devices") {
        // The chip's name is the first word of what is shown ("lis3dh, accelerometer only").
        let wanted = String(name.split(whereSeparator: { $0 == " " || $0 == "," }).first ?? Substring(name))
        let found = SysfsFiles.entries(root).filter { $0.hasPrefix("iio:device") }.sorted().first { SysfsFiles.text("\(root)/\($0)/name") == wanted }
        guard let found else { return nil }
        let device = FilePath(root).appending(found)
        // The device's folder is a link into /sys/devices/…/<parent>/iio:deviceN; the parent's
        // `driver` link names the driver.
        var driver: String?
        if let resolved = realpath(device.string, nil) {
            let parent = FilePath(String(cString: resolved)).removingLastComponent()
            free(resolved)
            var target = [CChar](repeating: 0, count: 4096)
            let n = readlink(parent.appending("driver").string, &target, target.count)
            if n > 0 {
                driver = FilePath(String(decoding: target.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)).lastComponent?.string
            }
        }
        self.driver = driver
        // Shared by the accelerometer's channels (inv_mpu6050), by every input (bmi160, st_sensors)
        // or by the device.
        mountMatrix = ["in_accel_mount_matrix", "in_mount_matrix", "mount_matrix"].lazy.compactMap { SysfsFiles.text(device.appending($0).string) }.first
    }

    package init(driver: String?, mountMatrix: String?) {
        self.driver = driver
        self.mountMatrix = mountMatrix
    }

    /// "driver inv-mpu6050-i2c, mount matrix 1, 0, 0; …" for what is known, nil for nothing.
    package var summary: String? {
        var parts: [String] = []
        if let driver { parts.append("driver \(driver)") }
        if let mountMatrix {
            parts.append(mountMatrix == Self.identity ? "mount matrix identity" : "mount matrix \(mountMatrix) (RideGuard learns the bike's axes itself)")
        }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }
}

/// The kernel's sysfs files, read and written as the kernel takes them (one value a file).
enum SysfsFiles {
    /// A file's first line, without its end of line; nil where it cannot be read.
    static func text(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let n = read(descriptor, &bytes, bytes.count)
        guard n >= 0 else { return nil }
        return String(String(decoding: bytes.prefix(n), as: UTF8.self).prefix { $0 != "\n" })
    }

    /// The decimal integer a raw file holds ("-245\n"); nil for anything else.
    static func integer(_ text: UnsafeRawBufferPointer) -> Int64? {
        var value: Int64 = 0, negative = false, digits = 0
        for (i, byte) in text.enumerated() {
            switch byte {
            case UInt8(ascii: "-") where i == 0: negative = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                let (times, o1) = value.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
                guard !o1 && !o2 else { return nil }
                value = sum
                digits += 1
            case UInt8(ascii: "\n") where i == text.count - 1: break
            default: return nil
            }
        }
        return digits > 0 ? (negative ? -value : value) : nil
    }

    /// Writes `value` to a sysfs file: 0, or -errno.
    static func write(_ value: String, to path: String) -> Int32 {
        let descriptor = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
        guard descriptor >= 0 else { return -errno }
        defer { close(descriptor) }
        let bytes = Array(value.utf8)
        return Glibc.write(descriptor, bytes, bytes.count) == bytes.count ? 0 : -errno
    }

    static func entries(_ folder: String) -> [String] {
        guard let directory = opendir(folder) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if !name.hasPrefix(".") { names.append(name) }
        }
        return names
    }
}
