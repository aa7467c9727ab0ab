#if canImport(Glibc)
import Glibc
#endif
import CGPS

/// A failed libgps call: on which gpsd, what for, and libgps' own explanation.
public struct GPSDError: Error, CustomStringConvertible, Sendable {
    public var operation: String
    public var server: String
    public var reason: String

    public var description: String { "\(operation) gpsd at \(server): \(reason)" }
}

/// A session with gpsd through libgps (3.22 or 3.25; the shim hides the differences).
public final class GPSDConnection {
    let data: UnsafeMutablePointer<gps_data_t>
    public let host: String
    public let port: String

    /// The libgps API this binary was compiled against (11 for gpsd 3.22, 14 for 3.25).
    public static var apiMajor: Int { Int(rg_gps_api_major()) }

    /// Wraps `gps_open` and `gps_stream(WATCH_ENABLE | WATCH_JSON)`.
    public init(host: String = "127.0.0.1", port: String = "2947") throws(GPSDError) {
        // Stored properties are set only on success: a class initializer that throws after setting
        // them all still runs deinit, which would close and free the session a second time.
        let session = UnsafeMutablePointer<gps_data_t>.allocate(capacity: 1)
        session.initialize(to: gps_data_t())
        errno = 0
        if gps_open(host, port, session) != 0 {
            let code = errno
            session.deallocate()
            throw GPSDError(operation: "connecting to", server: "\(host):\(port)", reason: String(cString: gps_errstr(code)))
        }
        if rg_gps_stream_watch(session, true) != 0 {
            let code = errno
            gps_close(session)
            session.deallocate()
            throw GPSDError(operation: "watching", server: "\(host):\(port)", reason: String(cString: gps_errstr(code)))
        }
        data = session
        self.host = host
        self.port = port
    }

    deinit {
        _ = rg_gps_stream_watch(data, false)
        gps_close(data)
        data.deallocate()
    }
}
