import Foundation
import Glibc

/// Debian's Mosquitto broker, started for one test on a loopback port: TLS only (a CA and a server
/// certificate made with openssl for the test), no anonymous clients, a password file and an ACL,
/// as a fleet's broker would be set up. Clients: the bike `bike1` (its own topics) and the
/// dispatcher `dispatch` (reads everything under `rideguard/`).
final class Mosquitto {
    let folder: URL
    let port: Int
    private var process: Process?
    static let passwords = ["bike1": "bike-secret", "dispatch": "dispatch-secret"]

    var caFile: String { folder.appendingPathComponent("ca.crt").path }

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("rideguard-mosquitto-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        port = try Self.freePort()
        let f = folder.path
        try Self.shell("""
            openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=rideguard-test-ca -keyout \(f)/ca.key -out \(f)/ca.crt
            openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout \(f)/server.key -out \(f)/server.csr
            printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > \(f)/san.ext
            openssl x509 -req -in \(f)/server.csr -CA \(f)/ca.crt -CAkey \(f)/ca.key -CAcreateserial -days 2 -extfile \(f)/san.ext -out \(f)/server.crt
            mosquitto_passwd -b -c \(f)/passwd bike1 \(Self.passwords["bike1"]!)
            mosquitto_passwd -b \(f)/passwd dispatch \(Self.passwords["dispatch"]!)
            chmod 0644 \(f)/server.key \(f)/passwd
            """)
        try """
            user bike1
            topic readwrite rideguard/bike1/#
            user dispatch
            topic read rideguard/#
            """.write(to: folder.appendingPathComponent("acl"), atomically: true, encoding: .utf8)
        try """
            per_listener_settings false
            allow_anonymous false
            password_file \(f)/passwd
            acl_file \(f)/acl
            persistence false
            log_dest stderr
            listener \(port) 127.0.0.1
            cafile \(f)/ca.crt
            certfile \(f)/server.crt
            keyfile \(f)/server.key
            """.write(to: folder.appendingPathComponent("mosquitto.conf"), atomically: true, encoding: .utf8)
    }

    /// Starts the broker and waits until it takes connections.
    func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
        process.arguments = ["-c", folder.appendingPathComponent("mosquitto.conf").path]
        // As root, Mosquitto runs as the user `mosquitto`: it writes its log to us, not to our folder.
        FileManager.default.createFile(atPath: logFile.path, contents: nil)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: logFile)
        try process.run()
        self.process = process
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if Self.accepts(port) { return }
            usleep(20_000)
        }
        throw BrokerError("mosquitto did not listen on \(port) within 10 s: \(log)")
    }

    /// Kills the broker (SIGKILL: the test runner blocks SIGTERM, and its children inherit that).
    func stop() {
        if let process { kill(process.processIdentifier, SIGKILL) }
        process?.waitUntilExit()
        process = nil
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: folder)
    }

    private var logFile: URL { folder.appendingPathComponent("mosquitto.log") }
    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// The first `count` messages on `topic` as the dispatcher sees them (retained ones included),
    /// each "topic payload", read by Debian's mosquitto_sub; `[]` after `seconds` without them.
    func subscribe(_ topic: String, count: Int = 1, seconds: Int = 10) throws -> [String] {
        let process = Process()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_sub")
        process.arguments = ["-h", "localhost", "-p", "\(port)", "--cafile", caFile, "-u", "dispatch", "-P", Self.passwords["dispatch"]!,
                             "-t", topic, "-v", "-C", "\(count)", "-W", "\(seconds)"]
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    private static func shell(_ script: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-ec", script]
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BrokerError("setting up the broker failed: \(String(decoding: message, as: UTF8.self))") }
    }

    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw BrokerError("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

struct BrokerError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
