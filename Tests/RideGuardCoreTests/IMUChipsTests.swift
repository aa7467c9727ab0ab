// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import RideGuardCore

/// Issue 62, point 4: which chip answers on the bus, whether the kernel has its driver, and what
/// doctor tells the rider to do.
@Suite struct IMUChipsTests {
    /// Registers as a chip holds them; the rest read 0.
    func chip(_ registers: [UInt8: UInt8]) -> (UInt8) -> UInt8? { { registers[$0] ?? 0 } }

    @Test func eachChipIsToldByItsIdentityRegister() {
        // An MPU-6050's register 0x00 is factory trim: it may read a BMI160's id, and WHO_AM_I decides.
        #expect(IMUChip.identify(address: 0x68, read: chip([0x75: 0x68, 0x00: 0xD1]))?.name == "MPU-6050")
        #expect(IMUChip.identify(address: 0x69, read: chip([0x75: 0x71]))?.name == "MPU-9250")
        #expect(IMUChip.identify(address: 0x68, read: chip([0x00: 0xD1]))?.name == "BMI160")
        #expect(IMUChip.identify(address: 0x6A, read: chip([0x0F: 0x6A]))?.name == "LSM6DSx")
        #expect(IMUChip.identify(address: 0x18, read: chip([0x0F: 0x33]))?.name == "LIS3DH")
        #expect(IMUChip.identify(address: 0x53, read: chip([0x00: 0xE5]))?.name == "ADXL345")
        #expect(IMUChip.identify(address: 0x28, read: chip([0x00: 0xA0]))?.name == "BNO055")
        // Another address's id, or a register that does not answer: nothing.
        #expect(IMUChip.identify(address: 0x18, read: chip([0x75: 0x68])) == nil)
        #expect(IMUChip.identify(address: 0x68, read: { _ in nil }) == nil)
        #expect(IMUChip.identify(address: 0x40, read: chip([0x75: 0x68])) == nil)
    }

    static let alias = """
        alias of:N*T*Cinvensense,mpu6050C* inv_mpu6050_i2c
        alias of:N*T*Cinvensense,mpu6050 inv_mpu6050_i2c
        alias i2c:mpu6050 inv_mpu6050_i2c
        alias of:N*T*Cst,lis3dh-accelC* st_accel_i2c
        """

    @Test func theKernelsOwnFilesSayWhetherItHasTheDriver() {
        let mpu = IMUChip.all[0], bmi = IMUChip.all.first { $0.name == "BMI160" }!, lis = IMUChip.all.first { $0.name == "LIS3DH" }!
        #expect(KernelDriver.find(mpu, modulesAlias: Self.alias, modulesBuiltin: "", config: nil) == .module("inv_mpu6050_i2c"))
        #expect(KernelDriver.find(lis, modulesAlias: Self.alias, modulesBuiltin: "", config: nil) == .module("st_accel_i2c"))
        #expect(KernelDriver.find(bmi, modulesAlias: Self.alias, modulesBuiltin: "", config: nil) == .absent)
        #expect(KernelDriver.find(bmi, modulesAlias: nil, modulesBuiltin: "kernel/drivers/iio/imu/bmi160/bmi160_i2c.ko\n", config: nil) == .builtIn)
        #expect(KernelDriver.find(bmi, modulesAlias: nil, modulesBuiltin: nil, config: "# CONFIG_BMI160_I2C is not set\n") == .absent)
        #expect(KernelDriver.find(bmi, modulesAlias: nil, modulesBuiltin: nil, config: "CONFIG_BMI160_I2C=m\n") == .module("bmi160_i2c"))
        #expect(KernelDriver.find(bmi, modulesAlias: nil, modulesBuiltin: nil, config: nil) == .unknown)
    }

    @Test func doctorGivesTheLineTheModuleOrAnotherChip() {
        let mpu = IMUChip.all[0], bmi = IMUChip.all.first { $0.name == "BMI160" }!, bno = IMUChip.all.first { $0.name == "BNO055" }!
        #expect(mpu.overlayLine(address: 0x68) == "dtoverlay=i2c-sensor,mpu6050,int_pin=4")
        #expect(mpu.overlayLine(address: 0x69) == "dtoverlay=i2c-sensor,mpu6050,addr=0x69,int_pin=4")
        #expect(bno.overlayLine(address: 0x28) == "dtoverlay=i2c-sensor,bno055,addr=0x28")
        #expect(bmi.overlayLine(address: 0x68) == nil)
        let present = ChipWithoutDevice(chip: mpu, bus: 1, address: 0x68, driver: .module("inv_mpu6050_i2c"))
        #expect(present.found == "MPU-6050 answers at 0x68 on i2c-1, but no driver has made an IIO device of it")
        #expect(present.advice.contains("add `dtoverlay=i2c-sensor,mpu6050,int_pin=4` to /boot/firmware/config.txt"), "\(present.advice)")
        #expect(present.advice.contains("echo mpu6050 0x68 | sudo tee /sys/bus/i2c/devices/i2c-1/new_device"), "\(present.advice)")
        let missing = ChipWithoutDevice(chip: bmi, bus: 1, address: 0x69, driver: .absent)
        #expect(missing.advice.hasPrefix("this kernel has no driver for the BMI160 (CONFIG_BMI160_I2C, bosch,bmi160): build the module"), "\(missing.advice)")
        // The BNO055, read now (through sysfs where libiio refuses it): its line, without an interrupt.
        #expect(ChipWithoutDevice(chip: bno, bus: 1, address: 0x28, driver: .module("bno055_i2c")).advice
            .hasPrefix("the kernel has its driver (bno055_i2c): on a Raspberry Pi add `dtoverlay=i2c-sensor,bno055,addr=0x28` to /boot/firmware/config.txt"))
        // What setup and doctor say first where no IMU is found: the lines Raspberry Pi OS's kernel takes.
        #expect(IMUChip.oneLineOnRaspberryPiOS == "MPU-6050, MPU-6500: `dtoverlay=i2c-sensor,mpu6050,int_pin=4`; "
            + "MPU-9250: `dtoverlay=i2c-sensor,mpu9250,int_pin=4`; BNO055: `dtoverlay=i2c-sensor,bno055`")
        let icm = IMUChip.all.first { $0.name == "ICM-20948" }!
        #expect(ChipWithoutDevice(chip: icm, bus: 1, address: 0x68, driver: .absent).advice.hasPrefix("RideGuard does not read the ICM-20948"))
    }
}
