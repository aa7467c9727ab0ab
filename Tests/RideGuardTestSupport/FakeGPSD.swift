// SPDX-License-Identifier: Apache-2.0
import Foundation
import Synchronization

/// A gpsd on loopback speaking its JSON protocol (gpsd_json(5)): on each connection it sends the
/// VERSION banner, waits for the client's `?WATCH=…;`, answers DEVICES and WATCH as gpsd 3.22 does,
/// then sends the lines the test gives for that connection (the last list again for later ones),
/// each a `delay` apart, and keeps the connection open.
package final class FakeGPSD: @unchecked Sendable {
    package let port: Int
    private let listening: Int32
    private let state = Mutex<(connections: Int, clients: [Int32], running: Bool)>((0, [], true))

    /// Below Linux's ephemeral ports (32768–60999), like GPSFake's.
    package init(linesPerConnection: [[String]], delay: Double = 0.2, port: Int = Int.random(in: 22_000...25_999)) throws {
        self.port = port
        listening = try listenOnLoopback(port: port, name: "fake gpsd")
        let fd = listening
        Thread { [self] in
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 { return }
                let index = state.withLock { s -> Int in
                    s.clients.append(client)
                    s.connections += 1
                    return s.connections - 1
                }
                let lines = linesPerConnection[min(index, linesPerConnection.count - 1)]
                Thread { [self] in serve(client, lines, delay) }.start()
            }
        }.start()
    }

    package var connections: Int { state.withLock { $0.connections } }

    package func stop() {
        let clients = state.withLock { s -> [Int32] in
            s.running = false
            return s.clients
        }
        shutdown(listening, Int32(SHUT_RDWR))
        close(listening)
        for client in clients { shutdown(client, Int32(SHUT_RDWR)) }
    }

    private func serve(_ client: Int32, _ lines: [String], _ delay: Double) {
        send(client, #"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#)
        var buffer = [UInt8](repeating: 0, count: 256)
        var request = ""
        while !request.contains(";") {
            let n = recv(client, &buffer, buffer.count, 0)
            if n <= 0 { return }
            request += String(decoding: buffer[0..<n], as: UTF8.self)
        }
        send(client, #"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/ttyACM0","driver":"u-blox","activated":"2026-11-24T05:00:00.000Z","flags":1,"native":1,"bps":9600,"parity":"N","stopbits":1,"cycle":1.00}]}"#)
        send(client, #"{"class":"WATCH","enable":true,"json":true,"nmea":false,"raw":0,"scaled":false,"timing":false,"split24":false,"pps":false}"#)
        for line in lines {
            guard state.withLock({ $0.running }) else { return }
            usleep(useconds_t(delay * 1e6))
            send(client, line)
        }
    }

    private func send(_ client: Int32, _ line: String) {
        let bytes = Array((line + "\r\n").utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// A TPV report of a 3D fix at `time` (ISO 8601, as gpsd writes it).
    package static func tpv(time: String, latitude: Double, longitude: Double) -> String {
        #"{"class":"TPV","device":"/dev/ttyACM0","mode":3,"time":"\#(time)","ept":0.005,"lat":\#(latitude),"lon":\#(longitude),"altMSL":212.4,"epx":3.1,"epy":3.9,"eph":6.2,"track":90.0,"speed":12.5,"climb":0.0,"eps":0.8}"#
    }
}

/// A TCP socket listening on 127.0.0.1:`port`, for the fake peers.
package func listenOnLoopback(port: Int, name: String) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var yes: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0, listen(fd, 8) == 0 else {
        let code = errno
        close(fd)
        throw SpawnError(program: "\(name) on port \(port)", code: code)
    }
    return fd
}
