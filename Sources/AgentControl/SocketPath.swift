// SPDX-License-Identifier: Apache-2.0
import Glibc

/// Unix socket addresses (`sun_path` holds 108 bytes with the closing NUL).
package enum SocketPath {
    package static func address(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }    // abstract socket (systemd's notify socket may be one)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.prefix(raw.count - 1).enumerated() { raw[i] = b }
        }
        return address
    }
}
