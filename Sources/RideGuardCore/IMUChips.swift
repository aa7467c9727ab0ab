// SPDX-License-Identifier: Apache-2.0
/// The IMU chips a rider may wire, as the I²C bus and the kernel know them: where each answers, what
/// its identity register reads (each maker's datasheet), the kernel driver that reads it (its
/// device-tree `compatible` and Kconfig symbol, from the driver's own source), and the one
/// `config.txt` line that binds it on Raspberry Pi OS where its kernel has that driver
/// (`overlays/README`, `i2c-sensor`; boards/imus.md has the table).
package struct IMUChip: Sendable, Equatable {
    /// As a rider reads it on the breakout: "MPU-6050".
    package var name: String
    package var addresses: [UInt8]
    /// The identity register and the values it reads for this chip.
    package var whoAmI: (register: UInt8, values: [UInt8])
    /// The driver's device-tree compatible string: `of:N*T*C<compatible>` in modules.alias.
    package var compatible: String
    /// The driver's Kconfig symbol, as /boot/config-* names it.
    package var config: String
    /// The driver's module, as modules.builtin and modules.dep name its file.
    package var module: String
    /// The `i2c-sensor` chip parameter that binds it on Raspberry Pi OS; nil where none does.
    package var overlayChip: String?
    /// Whether RideGuard reads it once its driver has made an IIO device of it.
    package var read: Bool

    package static func == (a: IMUChip, b: IMUChip) -> Bool { a.name == b.name }

    package static let all: [IMUChip] = [
        IMUChip(name: "MPU-6050", addresses: [0x68, 0x69], whoAmI: (0x75, [0x68]), compatible: "invensense,mpu6050",
                config: "CONFIG_INV_MPU6050_I2C", module: "inv-mpu6050-i2c", overlayChip: "mpu6050", read: true),
        IMUChip(name: "MPU-6500", addresses: [0x68, 0x69], whoAmI: (0x75, [0x70]), compatible: "invensense,mpu6500",
                config: "CONFIG_INV_MPU6050_I2C", module: "inv-mpu6050-i2c", overlayChip: "mpu6050", read: true),
        IMUChip(name: "MPU-9250", addresses: [0x68, 0x69], whoAmI: (0x75, [0x71, 0x73]), compatible: "invensense,mpu9250",
                config: "CONFIG_INV_MPU6050_I2C", module: "inv-mpu6050-i2c", overlayChip: "mpu9250", read: true),
        IMUChip(name: "ICM-20608", addresses: [0x68, 0x69], whoAmI: (0x75, [0xAF]), compatible: "invensense,icm20608",
                config: "CONFIG_INV_MPU6050_I2C", module: "inv-mpu6050-i2c", overlayChip: nil, read: true),
        IMUChip(name: "ICM-20948", addresses: [0x68, 0x69], whoAmI: (0x00, [0xEA]), compatible: "invensense,icm20948",
                config: "CONFIG_INV_ICM20948", module: "inv-icm20948", overlayChip: nil, read: false),
        IMUChip(name: "ICM-42605/42688", addresses: [0x68, 0x69], whoAmI: (0x75, [0x42, 0x47]), compatible: "invensense,icm42605",
                config: "CONFIG_INV_ICM42600_I2C", module: "inv-icm42600-i2c", overlayChip: nil, read: false),
        IMUChip(name: "BMI160", addresses: [0x68, 0x69], whoAmI: (0x00, [0xD1]), compatible: "bosch,bmi160",
                config: "CONFIG_BMI160_I2C", module: "bmi160_i2c", overlayChip: nil, read: true),
        IMUChip(name: "BMI270", addresses: [0x68, 0x69], whoAmI: (0x00, [0x24]), compatible: "bosch,bmi270",
                config: "CONFIG_BMI270_I2C", module: "bmi270_i2c", overlayChip: nil, read: false),
        IMUChip(name: "LSM6DSx", addresses: [0x6A, 0x6B], whoAmI: (0x0F, [0x69, 0x6A, 0x6B, 0x6C]), compatible: "st,lsm6dsl",
                config: "CONFIG_IIO_ST_LSM6DSX", module: "st_lsm6dsx_i2c", overlayChip: nil, read: true),
        IMUChip(name: "LIS3DH", addresses: [0x18, 0x19], whoAmI: (0x0F, [0x33]), compatible: "st,lis3dh-accel",
                config: "CONFIG_IIO_ST_ACCEL_I2C_3AXIS", module: "st_accel_i2c", overlayChip: nil, read: true),
        IMUChip(name: "ADXL345", addresses: [0x53, 0x1D], whoAmI: (0x00, [0xE5]), compatible: "adi,adxl345",
                config: "CONFIG_ADXL345_I2C", module: "adxl345_i2c", overlayChip: nil, read: true),
        IMUChip(name: "BNO055", addresses: [0x28, 0x29], whoAmI: (0x00, [0xA0]), compatible: "bosch,bno055",
                config: "CONFIG_BOSCH_BNO055_I2C", module: "bno055_i2c", overlayChip: "bno055", read: true),
    ]

    /// The chip whose identity register at `address` reads `value` (by the register `read` gives):
    /// the first of the table whose address and identity match.
    package static func identify(address: UInt8, read: (UInt8) -> UInt8?) -> IMUChip? {
        var asked: [UInt8: UInt8?] = [:]
        for chip in all where chip.addresses.contains(address) {
            let register = chip.whoAmI.register
            if asked[register] == nil { asked[register] = read(register) }
            if let value = asked[register] ?? nil, chip.whoAmI.values.contains(value) { return chip }
        }
        return nil
    }

    /// What Raspberry Pi OS's own kernel drives with one `config.txt` line: each chip family's line
    /// at its default address ("MPU-6050, MPU-6500, MPU-9250: `dtoverlay=…`"), in the table's order.
    package static var oneLineOnRaspberryPiOS: String {
        var lines: [(names: [String], line: String)] = []
        for chip in all where chip.read {
            guard let line = chip.overlayLine(address: chip.overlayChip == "bno055" ? 0x29 : 0x68) else { continue }
            if let i = lines.firstIndex(where: { $0.line == line }) { lines[i].names.append(chip.name) } else { lines.append(([chip.name], line)) }
        }
        return lines.map { "\($0.names.joined(separator: ", ")): `\($0.line)`" }.joined(separator: "; ")
    }

    /// The `config.txt` line that binds it at `address` on Raspberry Pi OS, where one does.
    package func overlayLine(address: UInt8) -> String? {
        guard let overlayChip else { return nil }
        let defaultAddress: UInt8 = overlayChip == "bno055" ? 0x29 : 0x68
        let addr = address == defaultAddress ? "" : ",addr=0x\(String(address, radix: 16))"
        let interrupt = overlayChip == "bno055" ? "" : ",int_pin=4"
        return "dtoverlay=i2c-sensor,\(overlayChip)\(addr)\(interrupt)"
    }
}

/// Whether the running kernel has a chip's driver, from its own files: modules.alias (the driver's
/// `compatible`), modules.builtin (built in) and its configuration (/boot/config-<release>).
package enum KernelDriver: Equatable, Sendable {
    case builtIn
    case module(String)
    /// None of the kernel's files names it.
    case absent
    /// The kernel's files could not be read (a kernel without its modules installed).
    case unknown
    /// Bound to an input (evdev) driver of this name, not to an IIO one: the ADXL345 on Raspberry
    /// Pi OS, whose kernel builds `adxl34x` and leaves the IIO `adxl345` out.
    case inputOnly(String)

    /// From the files' texts (nil: not readable).
    package static func find(_ chip: IMUChip, modulesAlias: String?, modulesBuiltin: String?, config: String?) -> KernelDriver {
        let module = chip.module.replacing("-", with: "_")
        if let modulesBuiltin, modulesBuiltin.split(separator: "\n").contains(where: {
            $0.hasSuffix("/\(chip.module).ko") || $0.hasSuffix("/\(module).ko")
        }) { return .builtIn }
        if let modulesAlias {
            for line in modulesAlias.split(separator: "\n") where line.contains("C\(chip.compatible)C") || line.hasSuffix("C\(chip.compatible)") {
                if let name = line.split(separator: " ").last { return .module(String(name)) }
            }
        }
        if let config {
            for line in config.split(separator: "\n") where line.hasPrefix(chip.config + "=") {
                return line.hasSuffix("=y") ? .builtIn : .module(chip.module)
            }
            if modulesAlias != nil || config.contains("# \(chip.config) is not set") { return .absent }
        }
        return modulesAlias == nil && modulesBuiltin == nil ? .unknown : .absent
    }
}

/// What doctor says of a chip found on the bus that no driver has made an IIO device of: why it is
/// not read, and the one thing to do.
package struct ChipWithoutDevice: Equatable, Sendable {
    package var chip: IMUChip
    package var bus: Int
    package var address: UInt8
    package var driver: KernelDriver

    package init(chip: IMUChip, bus: Int, address: UInt8, driver: KernelDriver) {
        self.chip = chip
        self.bus = bus
        self.address = address
        self.driver = driver
    }

    package var found: String {
        if case .inputOnly(let driver) = driver {
            return "\(chip.name) at 0x\(String(address, radix: 16)) on i2c-\(bus) is bound to \(driver), an input (evdev) driver: no IIO device, which is what RideGuard reads"
        }
        return "\(chip.name) answers at 0x\(String(address, radix: 16)) on i2c-\(bus), but no driver has made an IIO device of it"
    }

    /// What to do: the config.txt line, the module to build, or another chip to buy.
    package var advice: String {
        guard chip.read else {
            return "RideGuard does not read the \(chip.name) (boards/imus.md): an MPU-6050, whose driver every Raspberry Pi OS kernel has, is read"
        }
        let line = chip.overlayLine(address: address)
        switch driver {
        case .inputOnly:
            return "this kernel has no IIO driver for the \(chip.name) (Raspberry Pi OS builds only its input driver): remove its dtoverlay line and use an MPU-6050, whose IIO driver every Raspberry Pi OS kernel has"
        case .absent:
            return "this kernel has no driver for the \(chip.name) (\(chip.config), \(chip.compatible)): build the module for it "
                + "(boards/imus.md, \"A driver your kernel lacks\"), or use an MPU-6050"
        case .builtIn, .module, .unknown:
            let have = switch driver {
            case .builtIn: "the kernel has its driver built in"
            case .module(let name): "the kernel has its driver (\(name))"
            default: "its driver is \(chip.module)"
            }
            if let line {
                return "\(have): on a Raspberry Pi add `\(line)` to /boot/firmware/config.txt and reboot"
                    + " (elsewhere: echo \(chip.overlayChip!) 0x\(String(address, radix: 16)) | sudo tee /sys/bus/i2c/devices/i2c-\(bus)/new_device)"
            }
            return "\(have), but nothing binds it: a device-tree overlay of your own naming \"\(chip.compatible)\" at 0x\(String(address, radix: 16))"
        }
    }
}
