// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import RideGuardCore
import AgentControl

/// Tells systemd (when it started us with Type=notify) that the agent is ready and alive.
enum SystemdNotify {
    /// systemd's socket, from the environment it started us with (read once: the watchdog is fed every second).
    private static let path = ProcessInfo.processInfo.environment["NOTIFY_SOCKET"] ?? ""

    static func send(_ message: String) {
        guard !path.isEmpty else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = SocketPath.address(path)
        let length = socklen_t(MemoryLayout<sa_family_t>.size + min(path.utf8.count, PathLimits.unixSocket))
        let payload = Array(message.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sockaddr in
                payload.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, 0, sockaddr, length) }
            }
        }
    }
}
