// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import RideGuardCore
import Synchronization
import SystemCalls
import SystemPackage

/// The agent's control socket: a Unix stream socket (mode 0660, the service's group, in a folder
/// of mode 0750) taking one `ControlRequest` per JSON line and answering one `ControlReply` JSON
/// line. Clients are served concurrently, each with a short deadline, within `ControlSlots`: a
/// client that says nothing delays nobody, and no user's silent clients keep root or the agent's
/// own user out.
package final class ControlSocket: Sendable {
    private final class Flags: Sendable {
        let running = Atomic<Bool>(true)
        let listening = Atomic<Int32>(-1)
        let slots = Mutex(ControlSlots())
    }

    /// A client has this long to send its request line, seconds.
    static let requestDeadline = 2.0

    package let path: String
    private let flags = Flags()

    /// Starts listening; `handle` answers one request (run on the client's own thread).
    ///
    /// Whatever the umask: the socket's folder is created 0750 (and refused when others may write
    /// to it), and the socket is bound inside a private folder (0700), given mode 0660 there and
    /// only then renamed into place, so nobody else can ever reach it with a looser mode.
    package init(path: String, handle: @escaping @Sendable (ControlRequest) -> ControlReply) throws {
        self.path = path
        guard path.utf8.count <= PathLimits.unixSocket else {
            throw ControlSocketError(path: path, reason: "path too long for a Unix socket (\(path.utf8.count) bytes, at most \(PathLimits.unixSocket))")
        }
        let folder = FilePath(path).removingLastComponent().string.isEmpty ? "." : FilePath(path).removingLastComponent().string
        try Self.prepare(folder: folder, for: path)
        let fd = try Self.bindPrivately(path, in: folder)
        flags.listening.store(fd, ordering: .releasing)
        let flags = self.flags
        startThread("rg-control") {
            while flags.running.load(ordering: .acquiring) {
                let client: Int32
                do throws(Errno) { client = try retryingInterrupts { accept(fd, nil, nil) } } catch {
                    if error == .connectionAbort { continue } else { return }      // close(): the socket is shut down
                }
                let user = Self.peerUser(client)
                if let refusal = flags.slots.withLock({ $0.take(user) }) {
                    Self.reply(.failed("busy: \(refusal); try again"), to: client)
                    Glibc.close(client)
                    continue
                }
                startThread("rg-control-peer") {
                    Self.serve(client, handle)
                    flags.slots.withLock { $0.release(user) }
                }
            }
        }
    }

    /// The connected client's user (SO_PEERCRED); nil when the kernel does not say.
    static func peerUser(_ client: Int32) -> uid_t? {
        // struct ucred (pid, uid, gid), which Glibc's module leaves out (it needs _GNU_SOURCE).
        var credentials: (pid: pid_t, uid: uid_t, gid: gid_t) = (0, 0, 0)
        var size = socklen_t(MemoryLayout<(pid_t, uid_t, gid_t)>.size)
        guard getsockopt(client, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0 else { return nil }
        return size == socklen_t(MemoryLayout<(pid_t, uid_t, gid_t)>.size) ? credentials.uid : nil
    }

    /// Creates the socket's folder 0750 when it is missing; refuses one that others may write to
    /// (they could replace the socket with their own).
    static func prepare(folder: String, for path: String) throws {
        do { try PrivateFiles.createFolder(folder) } catch { throw ControlSocketError(path: path, reason: "folder \(error)") }
        var info = stat()
        guard stat(folder, &info) == 0 else { throw ControlSocketError(path: path, reason: "folder \(folder): \(String(cString: strerror(errno)))") }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { throw ControlSocketError(path: path, reason: "\(folder) is not a folder") }
        guard info.st_mode & S_IWOTH == 0 else {
            throw ControlSocketError(path: path, reason: "refusing to listen: the folder \(folder) is writable by every user (mode 0\(String(info.st_mode & 0o7777, radix: 8))); use a folder of mode 0750 such as /run/rideguard")
        }
        // The whole way there: a folder another user could swap would let them serve a socket of their own.
        if let unsafe = PrivateFiles.replaceableFolder(on: path) {
            throw ControlSocketError(path: path, reason: "refusing to listen: \(unsafe); use a folder such as /run/rideguard")
        }
    }

    /// Binds and listens at a path inside a fresh private folder next to `path`, sets the socket's
    /// mode there, then renames it to `path`. Returns the listening descriptor.
    static func bindPrivately(_ path: String, in folder: String) throws -> Int32 {
        var template = Array("\(folder)/.control-XXXXXX".utf8CString)
        guard let staging = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }).map({ String(cString: $0) }) else {
            throw ControlSocketError(path: path, reason: "cannot create a private folder in \(folder): \(String(cString: strerror(errno)))")
        }
        defer { rmdir(staging) }
        let temporary = staging + "/s"
        guard temporary.utf8.count <= PathLimits.unixSocket else {
            throw ControlSocketError(path: path, reason: "the folder's path is too long for a Unix socket")
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ControlSocketError(path: path, reason: String(cString: strerror(errno))) }
        var address = SocketPath.address(temporary)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, chmod(temporary, 0o660) == 0, listen(fd, 16) == 0, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            unlink(temporary)
            throw ControlSocketError(path: path, reason: reason)
        }
        return fd
    }

    /// Reads one request line (within the deadline) and answers it.
    private static func serve(_ client: Int32, _ handle: (ControlRequest) -> ControlReply) {
        defer { Glibc.close(client) }
        let deadline = Date().addingTimeInterval(requestDeadline)
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while !buffer.contains(0x0A) && buffer.count < 8192 {
            var wait = [pollfd(fd: client, events: Int16(POLLIN), revents: 0)]
            guard let ready = try? poll(&wait, milliseconds: Int(max(0, deadline.timeIntervalSinceNow * 1000))), ready > 0,
                  let n = try? chunk.withUnsafeMutableBytes({ try FileDescriptor(rawValue: client).read(into: $0) }), n > 0 else { break }
            buffer += chunk[0..<n]
        }
        let line = buffer.split(separator: 0x0A).first.map { Data($0) } ?? Data()
        guard !buffer.isEmpty else {
            return reply(.failed("no request within \(Int(requestDeadline)) s (send {\"cmd\":\"status\"})"), to: client)
        }
        let request: ControlRequest
        do {
            request = try JSONDecoder().decode(ControlRequest.self, from: line)
        } catch DecodingError.dataCorrupted(let context) where !context.codingPath.isEmpty {
            return reply(.failed(context.debugDescription), to: client)
        } catch {
            return reply(.failed("not a control request (send {\"cmd\":\"status\"})"), to: client)
        }
        reply(handle(request), to: client)
    }

    static func reply(_ answer: ControlReply, to client: Int32) {
        let bytes = ((try? JSONEncoder().encode(answer)) ?? Data(#"{"error":"the reply could not be encoded"}"#.utf8)) + Data("\n".utf8)
        // Whole, however long (a status with a large group passed the socket's buffer, and one
        // non-blocking write cut it); a client that stops reading is let go after `replyStall`
        // seconds. A client gone before the answer (Ctrl-C on `rideguard status`) must not SIGPIPE the agent.
        var stall = timeval(tv_sec: Int(replyStall), tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &stall, socklen_t(MemoryLayout<timeval>.size))
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            sent += n
        }
    }

    /// Seconds a reply waits for a client that reads nothing.
    static let replyStall = 3

    package func close() {
        flags.running.store(false, ordering: .releasing)
        let fd = flags.listening.exchange(-1, ordering: .acquiringAndReleasing)
        if fd >= 0 {
            shutdown(fd, Int32(SHUT_RDWR))
            Glibc.close(fd)
        }
        unlink(path)
    }

    /// Sends one request line to a running agent and returns its answer line (within `timeout` seconds).
    static func request(_ json: String, path: String, timeout: Double = 10) throws -> String {
        // Never a socket another user could have put there (root's `rideguard ctl` would talk to them).
        if let unsafe = PrivateFiles.replaceableFolder(on: path, anyOwnerOfLast: true) {
            throw ControlSocketError(path: path, reason: "refusing to connect: \(unsafe)", errno: Errno(rawValue: EPERM))
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ControlSocketError(path: path, reason: String(cString: strerror(errno))) }
        defer { Glibc.close(fd) }
        var limit = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = SocketPath.address(path)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            throw ControlSocketError(path: path, reason: "\(String(cString: strerror(code))): is rideguard run running?", errno: Errno(rawValue: code))
        }
        let bytes = Array((json + "\n").utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n: Int
            do { n = try chunk.withUnsafeMutableBytes { try FileDescriptor(rawValue: fd).read(into: $0) } } catch Errno.resourceTemporarilyUnavailable {
                throw ControlSocketError(path: path, reason: "the agent did not answer within \(Int(timeout)) s", errno: Errno(rawValue: ETIMEDOUT))
            } catch {
                break
            }
            if n == 0 { break }
            out += chunk[0..<n]
        }
        return String(decoding: out, as: UTF8.self).trimmed()
    }
}
