// SPDX-License-Identifier: Apache-2.0
import CI2CBus
import FoundationEssentials
import Glibc
import RideGuardCore

/// Where no IMU's IIO device is found: which known chip answers on an I²C bus, read-only, at the
/// addresses no driver has claimed (a claimed one is its driver's), and whether the running kernel
/// has its driver. `root` stands for / (the tests' folders).
package struct IMUOnTheBus {
    package var root = ""

    package init(root: String = "") { self.root = root }

    /// Each known chip that answers without a device, with what its kernel has for it; and why the
    /// buses could not be read, when one could not.
    package func look() -> (chips: [ChipWithoutDevice], unreadable: String?) {
        // An ADXL345 bound to the input driver (Raspberry Pi OS builds adxl34x, not the IIO one):
        // an evdev device RideGuard cannot read, whatever the bus says.
        let input = (try? FileManager.default.contentsOfDirectory(atPath: root + "/sys/bus/i2c/drivers/adxl34x")) ?? []
        for device in input.sorted() {
            let parts = device.split(separator: "-")
            guard parts.count == 2, let bus = Int(parts[0]), let address = UInt8(parts[1], radix: 16),
                  let adxl = IMUChip.all.first(where: { $0.name == "ADXL345" }) else { continue }
            return ([ChipWithoutDevice(chip: adxl, bus: bus, address: address, driver: .inputOnly("adxl34x"))], nil)
        }
        let buses = ((try? FileManager.default.contentsOfDirectory(atPath: root + "/dev")) ?? [])
            .compactMap { $0.hasPrefix("i2c-") ? Int($0.dropFirst(4)) : nil }.sorted()
        guard !buses.isEmpty else { return ([], "no I²C bus (/dev/i2c-*): dtparam=i2c_arm=on in config.txt, and the i2c-dev module") }
        var chips: [ChipWithoutDevice] = []
        var unreadable: String?
        let kernel = kernelFiles()
        for bus in buses {
            let fd = open(root + "/dev/i2c-\(bus)", O_RDWR | O_CLOEXEC)
            guard fd >= 0 else {
                unreadable = "/dev/i2c-\(bus): \(String(cString: strerror(errno))) (run doctor with sudo to look on the I²C bus)"
                continue
            }
            defer { close(fd) }
            for address in Set(IMUChip.all.flatMap(\.addresses)).sorted() {
                // EBUSY: a driver has it, and an IIO device is its driver's to make.
                guard rg_i2c_select(fd, Int32(address)) == 0 else { continue }
                let chip = IMUChip.identify(address: address) { register in
                    let value = rg_i2c_read_byte_data(fd, Int32(register))
                    return value < 0 ? nil : UInt8(value)
                }
                guard let chip else { continue }
                chips.append(ChipWithoutDevice(chip: chip, bus: bus, address: address,
                                               driver: KernelDriver.find(chip, modulesAlias: kernel.alias, modulesBuiltin: kernel.builtin, config: kernel.config)))
            }
        }
        return (chips, unreadable)
    }

    /// The running kernel's modules.alias, modules.builtin and configuration, where readable.
    private func kernelFiles() -> (alias: String?, builtin: String?, config: String?) {
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        func text(_ path: String) -> String? { try? String(contentsOfFile: root + path, encoding: .utf8) }
        return (text("/lib/modules/\(release)/modules.alias"), text("/lib/modules/\(release)/modules.builtin"), text("/boot/config-\(release)"))
    }
}
