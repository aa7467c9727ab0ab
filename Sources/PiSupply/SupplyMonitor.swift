// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import RideGuardCore
import SystemPackage

/// The Raspberry Pi's voltage monitor (`rpi_volt` under /sys/class/hwmon, where the firmware has
/// one): its `in0_lcrit_alarm` is 1 while the 5 V input is below about 4.63 V. A sagging 12 V → 5 V
/// converter is the classic cause of a Pi resetting on a bike.
package struct SupplyMonitor: Sendable {
    /// The alarm file, or nil where there is no such monitor.
    package let alarm: String?

    package init(hwmon root: String = ProcessInfo.processInfo.environment["RIDEGUARD_HWMON"] ?? "/sys/class/hwmon") {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        alarm = entries.sorted().lazy.map { FilePath(root).appending($0).string }.first { folder in
            let name = try? String(contentsOfFile: FilePath(folder).appending("name").string, encoding: .utf8)
            return name?.trimmed() == "rpi_volt"
        }.map { FilePath($0).appending("in0_lcrit_alarm").string }
    }

    /// True while under-voltage; nil without a monitor or when the flag cannot be read.
    package func underVoltage() -> Bool? {
        guard let alarm, let text = try? String(contentsOfFile: alarm, encoding: .utf8) else { return nil }
        return text.trimmed() != "0"
    }

    package static let underVoltageText = "supply: under-voltage: the Pi's 5 V input sagged below 4.63 V (a weak 12 V → 5 V converter resets a Pi; see boards/wiring.md)"
}
