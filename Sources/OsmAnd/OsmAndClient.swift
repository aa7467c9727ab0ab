// SPDX-License-Identifier: Apache-2.0
import CCurl
import RideGuardCore
import Synchronization

/// One report of Traccar's OsmAnd protocol (traccar.org/osmand): the device, a position and its
/// time, and an alarm when there is one. Sent as query parameters; Traccar answers 200. Without a
/// position (an alarm before any fix) it says `valid=false` and no coordinates: never 0, 0.
package struct OsmAndReport: Equatable, Sendable {
    package var device: String
    /// Unix seconds.
    package var time: Double
    /// Degrees; nil when there is no position to send.
    package var latitude: Double?
    package var longitude: Double?
    /// Knots, as Traccar's OsmAnd decoder reads `speed`.
    package var speedKnots: Double?
    package var bearing: Double?
    package var altitude: Double?
    package var accuracy: Double?
    /// `sos`, `fallDown`… (Traccar's alarm names).
    package var alarm: String?

    package init(device: String, time: Double, latitude: Double?, longitude: Double?, speedKnots: Double? = nil, bearing: Double? = nil,
                 altitude: Double? = nil, accuracy: Double? = nil, alarm: String? = nil) {
        self.device = device
        self.time = time
        self.latitude = latitude
        self.longitude = longitude
        self.speedKnots = speedKnots
        self.bearing = bearing
        self.altitude = altitude
        self.accuracy = accuracy
        self.alarm = alarm
    }

    /// `id=…&timestamp=…&lat=…&lon=…[&speed…][&alarm=…]` (or `valid=false` for `lat`, `lon`), each value percent-encoded.
    package var query: String {
        var parameters = [("id", device), ("timestamp", String(Int(time)))]
        if let latitude, let longitude {
            parameters += [("lat", Self.decimal(latitude, 6)), ("lon", Self.decimal(longitude, 6))]
        } else {
            parameters.append(("valid", "false"))
        }
        if let speedKnots { parameters.append(("speed", Self.decimal(speedKnots, 1))) }
        if let bearing { parameters.append(("bearing", Self.decimal(bearing, 0))) }
        if let altitude { parameters.append(("altitude", Self.decimal(altitude, 0))) }
        if let accuracy { parameters.append(("accuracy", Self.decimal(accuracy, 0))) }
        if let alarm { parameters.append(("alarm", alarm)) }
        return parameters.map { "\($0.0)=\(Self.encoded($0.1))" }.joined(separator: "&")
    }

    private static func decimal(_ value: Double, _ decimals: Int) -> String { DecimalFormat.string(value, decimals: decimals) }

    private static func encoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 15)]], as: UTF8.self)
            }
        }
        return out
    }
}

package struct OsmAndError: Error, Equatable, CustomStringConvertible, Sendable {
    package var description: String
}

/// Sends OsmAnd reports to a Traccar server with libcurl. Blocking: call it from a thread of its
/// own, never from Swift's concurrency pool.
package final class OsmAndClient: Sendable {
    private let url: String
    private let caFile: String?
    private let timeoutSeconds: Int
    /// The easy handle keeps its connection alive between reports; one request at a time.
    private let handle: Mutex<UnsafeMutableRawPointer?>

    private static let initialised: Void = { _ = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    /// `url`: Traccar's OsmAnd port, `http(s)://host:5055`.
    package init(url: String, caFile: String? = nil, timeoutSeconds: Int = 15) {
        Self.initialised
        self.url = url.hasSuffix("/") ? String(url.dropLast()) : url
        self.caFile = caFile
        self.timeoutSeconds = timeoutSeconds
        handle = Mutex(curl_easy_init())
    }

    deinit { handle.withLock { if let h = $0 { curl_easy_cleanup(h) } } }

    /// Sends one report; returns when Traccar answered 200, else throws what went wrong.
    package func send(_ report: OsmAndReport) throws(OsmAndError) {
        let target = url + "/?" + report.query
        let result: Result<Int, OsmAndError> = handle.withLock { handle in
            guard let handle else { return .failure(OsmAndError(description: "libcurl could not start (out of memory?)")) }
            var status = 0
            var error = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE))
            let code = rideguard_curl_get(handle, target, timeoutSeconds, caFile, &status, &error)
            guard code == CURLE_OK else {
                let detail = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                return .failure(OsmAndError(description: detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail))
            }
            return .success(status)
        }
        let status = try result.get()
        guard status == 200 else { throw OsmAndError(description: "\(url) answered HTTP \(status)") }
    }
}
