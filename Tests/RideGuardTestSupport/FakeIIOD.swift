// SPDX-License-Identifier: Apache-2.0
import Foundation
import Synchronization

/// A small iiod for libiio's network backend (the text protocol of libiio 0.24's iiod, as libiio's
/// iiod/ and iiod-client.c speak it) serving an inv_mpu6050-like device: big-endian s16 accel/temp/gyro, little-endian s64
/// timestamp. Samples are produced in real time at the sampling frequency the client writes.
/// `split`: a chip its driver splits in two devices, as st_lsm6dsx does (`lsm6dsl_accel`,
/// `lsm6dsl_gyro`), each with its own FIFO buffer and timestamp; sample k of both is the same
/// instant, counted from the server's start, whenever each buffer was opened. `bufferless`: the
/// device goes by this name and has no buffer (no scan elements), as an MPU-6050 without its INT
/// line or an ADXL345 before Linux 6.15.
package final class FakeIIOD: @unchecked Sendable {
    package struct Channel {
        package var id: String
        package var bytes: Int
        package var format: String
        package var attributes: [String]
    }

    package static let channels = [
        Channel(id: "accel_x", bytes: 2, format: "be:S16/16&gt;&gt;0", attributes: ["raw", "scale", "scale_available"]),
        Channel(id: "accel_y", bytes: 2, format: "be:S16/16&gt;&gt;0", attributes: ["raw", "scale", "scale_available"]),
        Channel(id: "accel_z", bytes: 2, format: "be:S16/16&gt;&gt;0", attributes: ["raw", "scale", "scale_available"]),
        Channel(id: "temp", bytes: 2, format: "be:S16/16&gt;&gt;0", attributes: ["raw", "offset", "scale"]),
        Channel(id: "anglvel_x", bytes: 2, format: "be:S16/16&gt;&gt;0", attributes: ["raw", "scale"]),
        Channel(id: "anglvel_y", bytes: 2, format: "be:S16/16&gt;&gt;0", attributes: ["raw", "scale"]),
        Channel(id: "anglvel_z", bytes: 2, format: "be:S16/16&gt;&gt;0", attributes: ["raw", "scale"]),
        Channel(id: "timestamp", bytes: 8, format: "le:S64/64&gt;&gt;0", attributes: []),
    ]

    /// Raw values of sample `k`: accel, temp, gyro, and the timestamp in ns.
    package static func raw(_ k: Int, rate: Double) -> [Int64] {
        [Int64(100 + k % 50), Int64(-200 + k % 3), Int64(2046 + k % 5), 1000, Int64(k % 100 - 50), 7, -7,
         1_000_000_000 + Int64((Double(k) * 1e9 / rate).rounded())]
    }

    package struct State {
        package var accelScale = 0.000598
        package var gyroScale = 0.001064724
        package var rate = 50.0
        /// The sensor stops: the buffer sends nothing and raw reads fail.
        package var stalled = false
        /// The buffer sends nothing, while raw reads answer (the data-ready interrupt lost).
        package var silentBuffer = false
        /// Timestamps advance as if the sensor ran at rate × this (a drifting or misconfigured sensor).
        package var timestampRateFactor = 1.0
        package var listening: Int32 = -1
        package var clients: [Int32] = []
        package var openedMasks: [String] = []
        package var samplesServed = 0
        package var commands: [String] = []
        /// A triggered buffer whose trigger would come from an INT line that is not wired (a BMI160
        /// or a LIS3DH without it): no trigger set, and enabling the buffer is refused (EINVAL).
        package var untriggered = false
        /// A device that streams from its buffer with no trigger reported (GETTRIG answers 0 and
        /// none, as libiio's network backend can) and has no raw attributes to poll.
        package var streamsWithoutTrigger = false
        /// How long a raw read takes, seconds (a driver that powers the chip up for each read).
        package var rawReadSeconds = 0.0
        /// A split chip's gyro runs at this rate, Hz, whatever is asked of it (nil: as asked).
        package var splitGyroRate: Double?
        /// Device attributes written (a BNO055's `fusion_enable`, `in_accel_range_raw`), by name.
        package var deviceWrites: [String: String] = [:]
    }

    package let port: Int
    package let split: Bool
    package let bufferless: String?
    /// The device's name: a chip whose driver has device attributes of its own ("bno055": its
    /// fusion switch and its accelerometer's range, as drivers/iio/imu/bno055 has them).
    package let chip: String
    package let state = Mutex(State())
    /// Raw reads (`in_accel_x_raw`) give the sample due now, counted from here at the rate.
    private let started = Date()

    /// Below Linux's ephemeral ports (32768–60999), like GPSFake's.
    package init(port: Int = Int.random(in: 26_000...31_999), split: Bool = false, bufferless: String? = nil, chip: String = "mpu6050") throws {
        self.port = port
        self.split = split
        self.bufferless = bufferless
        self.chip = chip
        try start()
    }

    package func start() throws {
        let fd = try listenOnLoopback(port: port, name: "fake iiod")
        state.withLock { $0.listening = fd }
        Thread { [self] in
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 { return }
                state.withLock { $0.clients.append(client) }
                Thread { [self] in serve(client) }.start()
            }
        }.start()
    }

    /// The server goes away: listening socket and every connection closed.
    package func stop() {
        let (listening, clients) = state.withLock { s -> (Int32, [Int32]) in
            defer { s.listening = -1; s.clients = [] }
            return (s.listening, s.clients)
        }
        shutdown(listening, Int32(SHUT_RDWR))
        close(listening)
        for client in clients {
            shutdown(client, Int32(SHUT_RDWR))
            close(client)
        }
    }

    deinit { stop() }

    /// Each device's name and the indices (in `channels`) of its channels, in scan order.
    package var devices: [(name: String, channels: [Int])] {
        split ? [("lsm6dsl_accel", [0, 1, 2, 7]), ("lsm6dsl_gyro", [4, 5, 6, 7])] : [(bufferless ?? chip, Array(Self.channels.indices))]
    }

    package var xml: String {
        var x = "<?xml version=\"1.0\" encoding=\"utf-8\"?><!DOCTYPE context ["
            + "<!ELEMENT context (device | context-attribute)*><!ELEMENT context-attribute EMPTY>"
            + "<!ELEMENT device (channel | attribute | debug-attribute | buffer-attribute)*>"
            + "<!ELEMENT channel (scan-element?, attribute*)><!ELEMENT attribute EMPTY><!ELEMENT scan-element EMPTY>"
            + "<!ELEMENT debug-attribute EMPTY><!ELEMENT buffer-attribute EMPTY>"
            + "<!ATTLIST context name CDATA #REQUIRED version-major CDATA #REQUIRED version-minor CDATA #REQUIRED version-git CDATA #REQUIRED description CDATA #IMPLIED>"
            + "<!ATTLIST context-attribute name CDATA #REQUIRED value CDATA #REQUIRED>"
            + "<!ATTLIST device id CDATA #REQUIRED name CDATA #IMPLIED label CDATA #IMPLIED>"
            + "<!ATTLIST channel id CDATA #REQUIRED type (input|output) #REQUIRED name CDATA #IMPLIED>"
            + "<!ATTLIST scan-element index CDATA #REQUIRED format CDATA #REQUIRED scale CDATA #IMPLIED>"
            + "<!ATTLIST attribute name CDATA #REQUIRED filename CDATA #IMPLIED>"
            + "<!ATTLIST debug-attribute name CDATA #REQUIRED><!ATTLIST buffer-attribute name CDATA #REQUIRED>]>"
            + "<context name=\"network\" version-major=\"0\" version-minor=\"24\" version-git=\"fake000\" description=\"fake iiod\" >"
        for (number, device) in devices.enumerated() {
            x += "<device id=\"iio:device\(number)\" name=\"\(device.name)\" >"
            for (index, ch) in device.channels.map({ Self.channels[$0] }).enumerated() {
                x += "<channel id=\"\(ch.id)\" type=\"input\" >"
                if bufferless == nil { x += "<scan-element index=\"\(index)\" format=\"\(ch.format)\" />" }
                let rawless = state.withLock { $0.streamsWithoutTrigger }
                for attribute in ch.attributes where !(rawless && attribute == "raw") { x += "<attribute name=\"\(attribute)\" filename=\"in_\(ch.id)_\(attribute)\" />" }
                x += "</channel>"
            }
            if chip == "bno055" {
                x += "<attribute name=\"fusion_enable\" /><attribute name=\"in_accel_range_raw\" /><attribute name=\"in_accel_range_raw_available\" />"
            }
            x += "<attribute name=\"sampling_frequency\" /><attribute name=\"sampling_frequency_available\" />"
                + (bufferless == nil ? "<buffer-attribute name=\"length\" /><buffer-attribute name=\"enable\" />" : "") + "</device>"
        }
        return x + "</context>"
    }

    private func serve(_ fd: Int32) {
        var pending: [UInt8] = []
        /// The opened device's channels (indices in `channels`) and which of them are enabled.
        var own = devices[0].channels
        var mask: [Bool] = Array(repeating: false, count: own.count)
        var opened = Date()
        var sent = 0
        /// The first sample's index: 0 at each opening, or for a split chip the instant it opened.
        var first = 0
        func send(_ text: String) { sendBytes(Array(text.utf8)) }
        func sendBytes(_ bytes: [UInt8]) {
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
                if n <= 0 { return }
                offset += n
            }
        }
        func readLine() -> String? {
            while true {
                if let newline = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                    pending.removeSubrange(...newline)
                    return line
                }
                var chunk = [UInt8](repeating: 0, count: 4096)
                let n = read(fd, &chunk, chunk.count)
                if n <= 0 { return nil }
                pending += chunk[0..<n]
            }
        }
        func readBytes(_ count: Int) -> [UInt8]? {
            while pending.count < count {
                var chunk = [UInt8](repeating: 0, count: 4096)
                let n = read(fd, &chunk, chunk.count)
                if n <= 0 { return nil }
                pending += chunk[0..<n]
            }
            defer { pending.removeFirst(count) }
            return Array(pending.prefix(count))
        }
        while let line = readLine() {
            state.withLock { $0.commands.append(line) }
            let words = line.split(separator: " ").map(String.init)
            guard let keyword = words.first?.uppercased() else { continue }
            switch keyword {
            case "VERSION": send("0.24.fake000\n")
            case "PRINT":
                let xml = self.xml
                send("\(xml.utf8.count)\n\(xml)\n")
            case "ZPRINT": send("-22\n")
            case "TIMEOUT", "SETTRIG", "SET", "CLOSE": send("0\n")
            // As iiod answers for a device with no trigger/ folder (-ENOENT): its buffer is filled by
            // the chip itself, as an LSM6DSx's FIFO or our test module's. ("0", no trigger set, is a
            // triggered buffer whose trigger comes from an INT line that is not wired: see
            // FakeIIOD.untriggered.)
            case "GETTRIG": send(state.withLock { $0.untriggered || $0.streamsWithoutTrigger } ? "0\n" : "-2\n")
            case "OPEN" where state.withLock({ $0.untriggered }):
                send("-22\n")
            case "OPEN":
                let hex = words.count > 3 ? words[3] : "0"
                let bits = UInt64(hex, radix: 16) ?? 0
                // The mask's bits are the device's scan indices.
                let number = words.count > 1 ? Int(words[1].dropFirst("iio:device".count)) ?? 0 : 0
                own = devices[min(number, devices.count - 1)].channels
                mask = own.indices.map { bits & (1 << UInt64($0)) != 0 }
                sent = 0
                if split {
                    let rate = state.withLock { $0.rate }
                    first = Int(Date().timeIntervalSince(started) * rate)
                    opened = started.addingTimeInterval(Double(first) / rate)
                } else {
                    first = 0
                    opened = Date()
                }
                state.withLock { $0.openedMasks.append(hex) }
                send("0\n")
            case "READ" where words.last == "raw" && state.withLock({ $0.stalled }):
                send("-110\n")   // ETIMEDOUT: the chip does not answer on its bus
            case "READ":
                if words.last == "raw", case let delay = state.withLock({ $0.rawReadSeconds }), delay > 0 { usleep(UInt32(delay * 1e6)) }
                send(attributeValue(words))
            case "WRITE":
                guard let count = words.last.flatMap({ Int($0) }), let bytes = readBytes(count) else { return }
                let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: "\0\n "))
                // The BNO055's range is fixed while its fusion runs: EBUSY, as its driver answers.
                if chip == "bno055", words.count == 4, words[2] == "in_accel_range_raw", state.withLock({ $0.deviceWrites["fusion_enable"] != "0" }) {
                    send("-16\n")
                    continue
                }
                store(words, value: text)
                send("\(count)\n")
            case "READBUF":
                guard words.count >= 3, let requested = Int(words[2]) else { send("-22\n"); continue }
                let enabled = own.indices.filter { mask[$0] }.map { own[$0] }
                let size = Self.sampleSize(enabled)
                let count = max(1, requested / max(size, 1))
                let (rate, factor) = state.withLock { ($0.rate, $0.timestampRateFactor) }
                // Wait until those samples exist, or forever while stalled.
                while true {
                    let stalled = state.withLock { $0.stalled || $0.silentBuffer }
                    let due = opened.addingTimeInterval(Double(sent + count) / rate)
                    if !stalled && Date() >= due { break }
                    usleep(2000)
                    if state.withLock({ $0.listening }) < 0 { return }
                }
                var data: [UInt8] = []
                for k in (first + sent)..<(first + sent + count) { data += Self.sample(k, enabled: enabled, rate: rate * factor) }
                sent += count
                state.withLock { $0.samplesServed += count }
                let words32 = (own.count + 31) / 32
                var maskText = ""
                for w in stride(from: words32 - 1, through: 0, by: -1) {
                    var value: UInt32 = 0
                    for (i, on) in mask.enumerated() where on && i / 32 == w { value |= 1 << UInt32(i % 32) }
                    maskText += String(format: "%08x", value)
                }
                send("\(data.count)\n\(maskText)\n")
                sendBytes(data)
            case "EXIT", "QUIT":
                close(fd)
                return
            default:
                send("-22\n")
            }
        }
    }

    package static func sampleSize(_ enabled: [Int]) -> Int {
        var offset = 0, largest = 1
        for i in enabled {
            let size = channels[i].bytes
            offset = (offset + size - 1) / size * size + size
            largest = max(largest, size)
        }
        return (offset + largest - 1) / largest * largest
    }

    package static func sample(_ k: Int, enabled: [Int], rate: Double) -> [UInt8] {
        let values = raw(k, rate: rate)
        var out: [UInt8] = []
        for i in enabled {
            let size = channels[i].bytes
            while out.count % size != 0 { out.append(0) }
            if size == 2 {
                let v = UInt16(bitPattern: Int16(values[i]))
                out += [UInt8(v >> 8), UInt8(v & 0xFF)]                 // big-endian
            } else {
                let v = UInt64(bitPattern: values[i])
                out += (0..<8).map { UInt8((v >> (8 * UInt64($0))) & 0xFF) }   // little-endian
            }
        }
        while out.count % sampleSize(enabled) != 0 { out.append(0) }
        return out
    }

    private func attributeValue(_ words: [String]) -> String {
        // READ <dev> INPUT <channel> <attr>  or  READ <dev> <attr>
        let value: String? = state.withLock { s in
            if words.count >= 5 {
                let channel = words[3], attribute = words[4]
                switch (channel.hasPrefix("accel"), channel.hasPrefix("anglvel"), attribute) {
                case (true, _, "scale"): return String(s.accelScale)
                case (true, _, "scale_available"): return "0.000598 0.001196 0.002392 0.004785"
                case (_, true, "scale"): return String(s.gyroScale)
                case (_, _, "raw"):
                    guard let index = Self.channels.firstIndex(where: { $0.id == channel }) else { return nil }
                    return String(Self.raw(Int(Date().timeIntervalSince(started) * s.rate), rate: s.rate)[index])
                case (_, _, "offset"): return "12420"
                default: return channel == "temp" && attribute == "scale" ? "2.941176" : nil
                }
            }
            if words.count >= 3 {
                switch words[2] {
                case "sampling_frequency": return String(Int(words[1] == "iio:device1" ? s.splitGyroRate ?? s.rate : s.rate))
                case "sampling_frequency_available": return "10 20 50 100 200 500 1000"
                // The BNO055's (drivers/iio/imu/bno055): ±2, 4, 8, 16 g as raw range values; fusion on at probe.
                case "in_accel_range_raw_available" where chip == "bno055": return "1962 3924 7848 15696"
                case "in_accel_range_raw" where chip == "bno055": return s.deviceWrites["in_accel_range_raw"] ?? "3924"
                case "fusion_enable" where chip == "bno055": return s.deviceWrites["fusion_enable"] ?? "1"
                default: return nil
                }
            }
            return nil
        }
        guard let value else { return "-2\n" }
        return "\(value.utf8.count)\n\(value)\n"
    }

    private func store(_ words: [String], value: String) {
        state.withLock { s in
            if words.count == 4, ["fusion_enable", "in_accel_range_raw"].contains(words[2]) {
                s.deviceWrites[words[2]] = value
            } else if words.count >= 6, words[3].hasPrefix("accel"), words[4] == "scale", let scale = Double(value) {
                s.accelScale = scale
            } else if words.count >= 4, words[2] == "sampling_frequency", let rate = Double(value), !(words[1] == "iio:device1" && s.splitGyroRate != nil) {
                s.rate = min(1000, max(10, rate))
            }
        }
    }
}

