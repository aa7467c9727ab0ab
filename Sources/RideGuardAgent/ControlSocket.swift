import Foundation
import RideGuardCore
import Synchronization

/// The agent's control socket: a Unix stream socket (mode 0660, the service's group) taking one
/// JSON request per line and answering one JSON line: {"cmd":"status"}, {"cmd":"press","hold":1.5}.
public final class ControlSocket: Sendable {
    private final class Flags: Sendable {
        let running = Atomic<Bool>(true)
        let listening = Atomic<Int32>(-1)
    }

    let path: String
    private let flags = Flags()

    /// Starts listening; `handle` answers one request (run on the socket's thread).
    init(path: String, handle: @escaping @Sendable ([String: Any]) -> String) throws {
        self.path = path
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty { try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ControlSocketError(path: path, reason: String(cString: strerror(errno))) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            Glibc.close(fd)
            throw ControlSocketError(path: path, reason: "path too long for a Unix socket")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, 8) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw ControlSocketError(path: path, reason: reason)
        }
        chmod(path, 0o660)
        flags.listening.store(fd, ordering: .releasing)
        let flags = self.flags
        let thread = Thread {
            while flags.running.load(ordering: .acquiring) {
                let client = accept(fd, nil, nil)
                if client < 0 { if errno == EINTR { continue } else { return } }
                ControlSocket.serve(client, handle)
            }
        }
        thread.name = "rideguard-control"
        thread.start()
    }

    private static func serve(_ client: Int32, _ handle: ([String: Any]) -> String) {
        defer { Glibc.close(client) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while !buffer.contains(0x0A) && buffer.count < 8192 {
            let n = read(client, &chunk, chunk.count)
            if n <= 0 { break }
            buffer += chunk[0..<n]
        }
        let line = buffer.split(separator: 0x0A).first.map { Data($0) } ?? Data()
        let answer: String
        if let request = (try? JSONSerialization.jsonObject(with: line)) as? [String: Any] {
            answer = handle(request)
        } else {
            var error = JSONLine()
            error.add("error", "not a JSON request (send {\"cmd\":\"status\"})")
            answer = error.text
        }
        let bytes = Array((answer + "\n").utf8)
        // A client gone before the answer (Ctrl-C on `rideguard status`) must not SIGPIPE the agent.
        _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    func close() {
        flags.running.store(false, ordering: .releasing)
        let fd = flags.listening.exchange(-1, ordering: .acquiringAndReleasing)
        if fd >= 0 {
            shutdown(fd, Int32(SHUT_RDWR))
            Glibc.close(fd)
        }
        unlink(path)
    }

    /// Sends one request to a running agent and returns its answer.
    public static func request(_ json: String, path: String) throws -> String {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ControlSocketError(path: path, reason: String(cString: strerror(errno))) }
        defer { Glibc.close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in Array(path.utf8).prefix(raw.count - 1).enumerated() { raw[i] = b }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            throw ControlSocketError(path: path, reason: "\(String(cString: strerror(code))): is rideguard run running?", errno: code)
        }
        let bytes = Array((json + "\n").utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fd, &chunk, chunk.count)
            if n <= 0 { break }
            out += chunk[0..<n]
        }
        return String(decoding: out, as: UTF8.self).trimmingCharacters(in: .newlines)
    }
}

public struct ControlSocketError: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var reason: String
    public var errno: Int32 = 0
    public var description: String { "control socket \(path): \(reason)" }
}

/// Tells systemd (when it started us with Type=notify) that the agent is ready and alive.
enum SystemdNotify {
    static func send(_ message: String) {
        guard let path = ProcessInfo.processInfo.environment["NOTIFY_SOCKET"], !path.isEmpty else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }    // abstract socket
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.prefix(raw.count - 1).enumerated() { raw[i] = b }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let payload = Array(message.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sockaddr in
                payload.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, 0, sockaddr, length) }
            }
        }
    }
}

/// The commands' side of the control socket.
public enum ControlClient {
    public static func request(_ json: String, path: String) throws -> String {
        try ControlSocket.request(json, path: path)
    }
}
