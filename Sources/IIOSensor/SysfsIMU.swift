// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import RideGuardCore
import SystemCalls
import SystemPackage

/// An IMU on this machine read through the kernel's own files, for when libiio cannot open the
/// machine's IIO devices (bookworm's libiio 0.24 refuses them all, EINVAL, while a BNO055's device is
/// there; trixie's 0.26 cannot name its channels either). The same reading as LibIIOIMU's, from the
/// kernel's ABI (Documentation/ABI/testing/sysfs-bus-iio): `in_<type>_<axis>_raw`, `_scale`,
/// `_offset`; `sampling_frequency`; the buffer's `scan_elements/` (`_en`, `_index`, `_type`),
/// `buffer/length`, `buffer/enable`, `trigger/current_trigger`; and its samples read from
/// `/dev/iio:deviceN`, laid out as ScanLayout says. A chip split in two devices is polled here.
final class SysfsIMU: IMUDevice {
    private let root: String
    private let devices: String
    private let folder: String
    private let gyroFolder: String?
    private let chip: String
    private let why: String
    let rate: Double
    let isLocal = true

    /// `why`: why libiio is not used, said with the device's name.
    init(configuration c: SamplerConfiguration, libiioRefused why: String, paths: IIOSampler.SysfsPaths) throws(IIOError) {
        let root = paths.devices
        self.root = root
        devices = paths.characterDevices
        self.why = why
        let present = SysfsFiles.entries(root).filter { $0.hasPrefix("iio:device") }.sorted().map { ($0, SysfsFiles.text("\(root)/\($0)/name") ?? "") }
        let wanted = c.device.map { [$0] } ?? SamplerConfiguration.knownDevices
        guard let found = wanted.lazy.compactMap({ name in present.first { $0.1 == name } }).first else {
            throw IMUNotFound.error(known: wanted, present: present.map(\.1), in: "\(c.uri) (\(why))")
        }
        folder = "\(root)/\(found.0)"
        chip = found.1
        let gyroName = String(chip.dropLast(6)) + "_gyro"
        gyroFolder = chip.hasSuffix("_accel") ? present.first { $0.1 == gyroName }.map { "\(root)/\($0.0)" } : nil
        rate = Self.setRate(folder, c.rateHz, type: "accel")
        _ = Self.setRate(gyroFolder ?? folder, c.rateHz, type: "anglvel")
        if c.widestRange {
            Self.widenRange(folder)
            Self.widestScale(gyroFolder ?? folder, type: "anglvel")
        }
    }

    var name: String {
        let shown = gyroFolder.flatMap { SysfsFiles.text("\($0)/name") }.map { chip + " + " + $0 } ?? chip
        return "\(shown) (read through sysfs: \(why))"
    }

    var bufferless: String? {
        let axes = ["x", "y", "z"].allSatisfy { access("\(folder)/scan_elements/in_accel_\($0)_en", F_OK) == 0 }
        guard gyroFolder == nil else { return "a chip split in two devices is read with both halves together only through libiio: polled here" }
        return axes ? nil : ReadPlan.bufferless(chip: chip)
    }

    // MARK: The trigger

    func currentTrigger() -> CurrentTrigger {
        guard access("\(folder)/trigger", F_OK) == 0 else { return .takesNone }
        guard let name = SysfsFiles.text("\(folder)/trigger/current_trigger"), !name.isEmpty else { return .unset }
        return .named(name)
    }

    private var timerFolder: String? {
        SysfsFiles.entries(root).filter { $0.hasPrefix("trigger") }.map { "\(root)/\($0)" }.first { SysfsFiles.text("\($0)/name") == TimerTrigger.name }
    }

    func timerListed() -> Bool { timerFolder != nil }

    func useTimer() -> Int32 {
        guard let timer = timerFolder else { return -ENODEV }
        // Assigned first (EBUSY while another reader has the buffer on: its rate is then left alone).
        let status = SysfsFiles.write(TimerTrigger.name, to: "\(folder)/trigger/current_trigger")
        if status == 0 { _ = SysfsFiles.write(SamplingRate.text(rate.rounded()), to: "\(timer)/sampling_frequency") }
        return status
    }

    // MARK: Reading

    /// A channel's raw value file, kept open and read again from its start for each sample.
    private struct RawFile {
        let descriptor: Int32
        let path: String
        let scale: Double
        let offset: Double

        /// Read again from its start into a buffer of the stack's: nothing is allocated per sample.
        func read() throws(IIOError) -> Double {
            var bytes: (UInt64, UInt64, UInt64) = (0, 0, 0)
            let n = withUnsafeMutableBytes(of: &bytes) { pread(descriptor, $0.baseAddress, $0.count, 0) }
            let raw = n > 0 ? withUnsafeBytes(of: &bytes) { SysfsFiles.integer(UnsafeRawBufferPointer(rebasing: $0[0..<n])) } : nil
            guard let raw else {
                throw IIOError(operation: "reading", target: path, errno: Errno(rawValue: n < 0 ? errno : EIO))
            }
            return (Double(raw) + offset) * scale
        }
    }

    /// The scale and offset of `type`'s `axis`: the axis's own, else the type's (st_sensors has them
    /// per axis, most drivers per type), else 1 and 0.
    private static func scaleAndOffset(_ folder: String, _ type: String, _ axis: String) -> (Double, Double) {
        func number(_ attribute: String) -> Double? {
            SysfsFiles.text("\(folder)/in_\(type)_\(axis)_\(attribute)").flatMap(Double.init) ?? SysfsFiles.text("\(folder)/in_\(type)_\(attribute)").flatMap(Double.init)
        }
        return (number("scale") ?? 1, number("offset") ?? 0)
    }

    func poll(reason: String, into sink: inout SampleSink) throws(IIOError) {
        func open(_ folder: String, _ type: String) -> [RawFile]? {
            var files: [RawFile] = []
            for axis in ["x", "y", "z"] {
                let path = "\(folder)/in_\(type)_\(axis)_raw"
                let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
                guard descriptor >= 0 else {
                    for file in files { close(file.descriptor) }
                    return nil
                }
                let (scale, offset) = Self.scaleAndOffset(folder, type, axis)
                files.append(RawFile(descriptor: descriptor, path: path, scale: scale, offset: offset))
            }
            return files
        }
        guard let accel = open(folder, "accel") else {
            throw IIOError(operation: "finding in_accel_x/y/z_raw on", target: chip, errno: Errno(rawValue: ENOENT))
        }
        let gyro = open(gyroFolder ?? folder, "anglvel")
        defer { for file in accel + (gyro ?? []) { close(file.descriptor) } }
        sink.event(.opened(device: name, gyro: gyro != nil, timestamps: false, rateHz: rate, accelScale: accel[0].scale, mode: .polled(reason: reason)))
        try PolledLoop.run(rate: rate, into: &sink) { () throws(IIOError) in
            let a = Vector3(try accel[0].read(), try accel[1].read(), try accel[2].read())
            guard let gyro else { return (a, nil) }
            return (a, Vector3(try gyro[0].read(), try gyro[1].read(), try gyro[2].read()))
        }
    }

    /// The driver's buffer: the accelerometer's (and gyro's, and timestamp's) scan elements enabled
    /// and every other one disabled, the buffer enabled, and its scans read from the character device
    /// as they come. Empty since it was enabled for four stall times: returns how long.
    func readBuffer(trigger: String?, stallSeconds: Double, into sink: inout SampleSink) throws(IIOError) -> Double? {
        let scan = "\(folder)/scan_elements"
        let gyroAxes = ["x", "y", "z"].allSatisfy { access("\(scan)/in_anglvel_\($0)_en", F_OK) == 0 }
        var wanted = ["in_accel_x", "in_accel_y", "in_accel_z"]
        if gyroAxes { wanted += ["in_anglvel_x", "in_anglvel_y", "in_anglvel_z"] }
        let timed = access("\(scan)/in_timestamp_en", F_OK) == 0
        if timed { wanted.append("in_timestamp") }
        var elements: [(index: Int, format: ScanFormat)] = []
        for element in wanted {
            guard let index = SysfsFiles.text("\(scan)/\(element)_index").flatMap(Int.init),
                  let format = SysfsFiles.text("\(scan)/\(element)_type").flatMap(ScanFormat.init) else {
                throw IIOError(operation: "reading the scan element", target: "\(scan)/\(element)_index, _type", errno: Errno(rawValue: EINVAL))
            }
            elements.append((index, format))
        }
        for file in SysfsFiles.entries(scan) where file.hasSuffix("_en") {
            let status = SysfsFiles.write(wanted.contains(String(file.dropLast(3))) ? "1" : "0", to: "\(scan)/\(file)")
            guard status == 0 || !wanted.contains(String(file.dropLast(3))) else {
                throw IIOError(operation: "enabling", target: "\(scan)/\(file)", errno: Errno(rawValue: -status))
            }
        }
        let layout = ScanLayout(elements)
        let samplesPerRead = max(1, Int(rate / 25))
        let buffer = access("\(folder)/buffer0", F_OK) == 0 && access("\(folder)/buffer", F_OK) != 0 ? "\(folder)/buffer0" : "\(folder)/buffer"
        _ = SysfsFiles.write(String(samplesPerRead * 4), to: "\(buffer)/length")
        _ = SysfsFiles.write(String(samplesPerRead), to: "\(buffer)/watermark")
        let character = "\(devices)/\(folder.split(separator: "/").last ?? "")"
        let descriptor = Glibc.open(character, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw IIOError(operation: "opening", target: character, errno: Errno(rawValue: errno)) }
        defer { close(descriptor) }
        let enabled = SysfsFiles.write("1", to: "\(buffer)/enable")
        // The kernel refuses (EINVAL) a buffer that has no trigger to fill it.
        guard enabled == 0 else { throw IIOError(operation: "enabling the buffer of", target: chip, errno: Errno(rawValue: -enabled)) }
        defer { _ = SysfsFiles.write("0", to: "\(buffer)/enable") }

        let accelChannels = ["x", "y", "z"].map { Self.scaleAndOffset(folder, "accel", $0) }
        let gyroChannels = gyroAxes ? ["x", "y", "z"].map { Self.scaleAndOffset(folder, "anglvel", $0) } : []
        sink.liveness.restartClock()
        sink.event(.opened(device: name, gyro: gyroAxes, timestamps: timed, rateHz: rate, accelScale: accelChannels[0].0, mode: .buffer(trigger: trigger)))
        let period = 1 / rate
        var bytes = [UInt8](repeating: 0, count: layout.size * samplesPerRead * 4)
        var pending = 0
        var filled = false
        var waiting = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        while sink.running {
            waiting[0].revents = 0
            let ready: Int
            do { ready = try SystemCalls.poll(&waiting, milliseconds: 100) } catch { throw IIOError(operation: "waiting for samples from", target: character, errno: error) }
            sink.beat()
            if ready == 0 {
                let quiet = sink.liveness.quiet
                if !filled && quiet >= stallSeconds * 4 { return quiet }
                continue
            }
            let n = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + pending, $0.count - pending) }
            if n < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                throw IIOError(operation: "reading samples from", target: character, errno: Errno(rawValue: errno))
            }
            // Ready and nothing to read: the buffer was disabled under us (another reader, the
            // driver gone); reopened from the start rather than spun on.
            guard n > 0 else { throw IIOError(operation: "reading samples from", target: character, errno: Errno(rawValue: ENODATA)) }
            pending += n
            let count = pending / layout.size
            guard count > 0 else { continue }
            filled = true
            sink.arrived()
            let now = monotonicSeconds()
            bytes.withUnsafeBytes { all in
                for i in 0..<count {
                    let scanBytes = UnsafeRawBufferPointer(rebasing: all[(i * layout.size)..<((i + 1) * layout.size)])
                    func value(_ element: Int, _ channel: (Double, Double)) -> Double {
                        (Double(elements[element].format.value(in: scanBytes, at: layout.offsets[element])) + channel.1) * channel.0
                    }
                    let a = Vector3(value(0, accelChannels[0]), value(1, accelChannels[1]), value(2, accelChannels[2]))
                    let w = gyroAxes ? Vector3(value(3, gyroChannels[0]), value(4, gyroChannels[1]), value(5, gyroChannels[2])) : nil
                    let t = timed ? Double(elements[elements.count - 1].format.value(in: scanBytes, at: layout.offsets[elements.count - 1])) / 1e9
                        : now - Double(count - 1 - i) * period
                    sink.deliver(IMUSample(t: t, accel: a, gyro: w), gaps: true)
                }
            }
            let used = count * layout.size
            // What is left of a scan moves to the front, in place.
            bytes.withUnsafeMutableBytes { all in _ = memmove(all.baseAddress!, all.baseAddress! + used, pending - used) }
            pending -= used
        }
        return nil
    }

    // MARK: Set-up

    /// As LibIIOIMU's: the device's `sampling_frequency`, else the type's.
    private static func setRate(_ folder: String, _ rate: Double, type: String) -> Double {
        let attribute = ["sampling_frequency", "in_\(type)_sampling_frequency"].first { access("\(folder)/\($0)", F_OK) == 0 }
        guard let attribute else { return rate }
        let path = "\(folder)/\(attribute)"
        _ = SysfsFiles.write(SamplingRate.text(rate), to: path)
        if let actual = SysfsFiles.text(path).flatMap(Double.init), actual > 0, abs(actual / rate - 1) < 0.01 { return actual }
        if let listed = SysfsFiles.text(path + "_available"), let other = SamplingRate.choose(rate, available: listed) { _ = SysfsFiles.write(SamplingRate.text(other), to: path) }
        return SysfsFiles.text(path).flatMap(Double.init).flatMap { $0 > 0 ? $0 : nil } ?? rate
    }

    /// As LibIIOIMU's: the BNO055's fusion off, then the widest range the driver offers.
    private static func widenRange(_ folder: String) {
        if access("\(folder)/fusion_enable", F_OK) == 0 { _ = SysfsFiles.write("0", to: "\(folder)/fusion_enable") }
        if let widest = SysfsFiles.text("\(folder)/in_accel_range_raw_available")?.split(separator: " ").compactMap({ Int64($0) }).max() {
            _ = SysfsFiles.write(String(widest), to: "\(folder)/in_accel_range_raw")
        }
        widestScale(folder, type: "accel")
    }

    /// As LibIIOIMU's: the type's largest scale, where the driver lists them.
    private static func widestScale(_ folder: String, type: String) {
        guard let widest = SysfsFiles.text("\(folder)/in_\(type)_scale_available")?.split(separator: " ").max(by: { (Double($0) ?? 0) < (Double($1) ?? 0) }) else { return }
        let own = "\(folder)/in_\(type)_scale"
        for path in access(own, F_OK) == 0 ? [own] : ["x", "y", "z"].map({ "\(folder)/in_\(type)_\($0)_scale" }) {
            _ = SysfsFiles.write(String(widest), to: path)
        }
    }
}
