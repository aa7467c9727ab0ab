// SPDX-License-Identifier: Apache-2.0
import Glibc
import RideGuardCore

/// Where the rider's phone finds the web page (`rideguard web`): `web.address`, or the address the
/// Pi has on its first network (its own hotspot, or the phone's), with the port it listens on.
package enum WebLink {
    /// `http://ADDRESS:PORT`, or nil when the Pi has no network address yet (no Wi-Fi).
    package static func base(_ web: AgentConfiguration.Web) -> String? {
        guard let endpoint = web.endpoint else { return nil }
        let host = web.address ?? (endpoint.host == "0.0.0.0" ? firstNetworkAddress() : endpoint.host)
        return host.map { "http://\($0):\(endpoint.port)" }
    }

    /// The one-time pairing link for `code`.
    package static func pairing(_ web: AgentConfiguration.Web, code: String) -> String? {
        base(web).map { "\($0)/pair?code=\(code)" }
    }

    /// What a request's Host may be: the page's own addresses and names, with its port or none (a page
    /// answering any Host could be reached through a name someone else controls: DNS rebinding).
    package static func ownHosts(_ web: AgentConfiguration.Web) -> Set<String> {
        guard let endpoint = web.endpoint else { return [] }
        var names = interfaceAddresses(loopback: true).map(\.address) + ["localhost"]
        if endpoint.host != "0.0.0.0" { names.append(endpoint.host) }
        if let address = web.address { names.append(address) }
        var host = [CChar](repeating: 0, count: 256)
        if gethostname(&host, host.count - 1) == 0 {
            let name = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            names += [name, name + ".local"]
        }
        // With its port, or without (some clients leave it out): what defends the page is the name.
        var hosts = Set<String>()
        for name in names {
            hosts.insert("\(name.lowercased()):\(endpoint.port)")
            hosts.insert(name.lowercased())
        }
        return hosts
    }

    /// The first IPv4 address that is up and not loopback (wlan0 before eth1 as the kernel lists them).
    package static func firstNetworkAddress() -> String? {
        let found = interfaceAddresses(loopback: false)
        // A Pi's Wi-Fi is where a phone is; a container's or a VPN's address is not.
        return (found.first { $0.name.hasPrefix("wl") } ?? found.first)?.address
    }

    /// The IPv4 addresses of the interfaces that are up, as the kernel lists them.
    static func interfaceAddresses(loopback: Bool) -> [(name: String, address: String)] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var found: [(name: String, address: String)] = []
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            let flags = Int32(entry.pointee.ifa_flags)
            guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                  flags & Int32(IFF_UP) != 0, loopback || flags & Int32(IFF_LOOPBACK) == 0 else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            let ok = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
                var raw = inet.pointee.sin_addr
                return inet_ntop(AF_INET, &raw, &text, socklen_t(INET_ADDRSTRLEN)) != nil
            }
            if ok { found.append((String(cString: entry.pointee.ifa_name), String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))) }
        }
        return found
    }
}

extension WebLink {
    /// Whether something accepts connections where the page listens (`doctor`, `web pair`).
    package static func isServing(_ web: AgentConfiguration.Web) -> Bool {
        guard let endpoint = web.endpoint else { return false }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        // A listen address that is not this machine's must not hold doctor up for TCP's minutes.
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(endpoint.port).bigEndian)
        inet_pton(AF_INET, endpoint.host == "0.0.0.0" ? "127.0.0.1" : endpoint.host, &address.sin_addr)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
