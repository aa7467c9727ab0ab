// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc

/// Debian's Mosquitto broker, started for one test on a loopback port: TLS only (a CA and a server
/// certificate made with openssl for the test), no anonymous clients, a password file and an ACL,
/// as a fleet's broker would be set up. Clients: the bike `bike1` (its own topics) and the
/// dispatcher `dispatch` (reads everything under `rideguard/`, writes the bikes' `cmd`). Sessions
/// and their queued messages are saved when it stops (SIGTERM), as a broker restarted by systemd.
package final class Mosquitto: @unchecked Sendable {      // one test's, started and stopped by that test alone
    package let folder: URL
    /// Drawn below Linux's ephemeral range, like GPSFake's.
    package let port = Int.random(in: 20_000...25_999)
    private var process: Spawned?
    package static let passwords = ["bike1": "bike-secret", "bike2": "bike2-secret", "dispatch": "dispatch-secret"]

    package var caFile: String { folder.appendingPathComponent("ca.crt").path }
    private var logFile: String { folder.appendingPathComponent("mosquitto.log").path }
    package var log: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }

    package init() throws {
        folder = Scratch.path("rideguard-mosquitto")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let f = folder.path
        try Self.run(["/bin/sh", "-ec", """
            openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=rideguard-test-ca -keyout \(f)/ca.key -out \(f)/ca.crt
            openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout \(f)/server.key -out \(f)/server.csr
            printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > \(f)/san.ext
            openssl x509 -req -in \(f)/server.csr -CA \(f)/ca.crt -CAkey \(f)/ca.key -CAcreateserial -days 2 -extfile \(f)/san.ext -out \(f)/server.crt
            mosquitto_passwd -b -c \(f)/passwd bike1 \(Self.passwords["bike1"]!)
            mosquitto_passwd -b \(f)/passwd bike2 \(Self.passwords["bike2"]!)
            mosquitto_passwd -b \(f)/passwd dispatch \(Self.passwords["dispatch"]!)
            chmod 0644 \(f)/server.key \(f)/passwd
            mkdir -m 0777 \(f)/sessions   # Mosquitto, as its own user, saves its sessions there; the CA stays in a folder only root writes
            """], what: "setting up the broker")
        try """
            user bike1
            topic readwrite rideguard/bike1/#
            topic write owntracks/alex/bike1
            topic readwrite rideguard/group/sunday/#
            user bike2
            topic readwrite rideguard/bike2/#
            topic readwrite rideguard/group/sunday/#
            user dispatch
            topic read rideguard/#
            topic read owntracks/#
            topic write rideguard/+/cmd
            """.write(to: folder.appendingPathComponent("acl"), atomically: true, encoding: .utf8)
        // Started as root, Mosquitto runs as the user `mosquitto`: it logs to its stderr (our file).
        // Its default queue for a client (1,000 QoS 1 messages past the 20 in flight) drops the rest
        // when that client falls behind: on a loaded machine a test's flood of 10,000 `cmd` lost its
        // last message, the ack, there. The tests hold the agent to what it reads, so nothing is
        // dropped before it.
        try """
            per_listener_settings false
            max_queued_messages 0
            allow_anonymous false
            password_file \(f)/passwd
            acl_file \(f)/acl
            persistence true
            persistence_location \(f)/sessions/
            log_dest stderr
            log_type error
            log_type warning
            log_type notice
            log_type information
            log_type subscribe
            listener \(port) 127.0.0.1
            cafile \(f)/ca.crt
            certfile \(f)/server.crt
            keyfile \(f)/server.key
            """.write(to: folder.appendingPathComponent("mosquitto.conf"), atomically: true, encoding: .utf8)
    }

    /// Starts the broker and waits until it takes connections.
    package func start() throws {
        process = try Spawned(["/usr/sbin/mosquitto", "-c", folder.appendingPathComponent("mosquitto.conf").path], stderr: logFile)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if log.contains("mosquitto version") && log.contains("running") { return }
            usleep(20_000)
        }
        throw BrokerError("mosquitto did not start within 10 s: \(log)")
    }

    /// Kills the broker, as a crash or a power cut would.
    package func stop() {
        process?.kill(SIGKILL)
        process = nil
    }

    /// Stops the broker as systemd does (SIGTERM: it saves its sessions); `start()` brings it back.
    package func shutDown() throws {
        guard process?.terminate() == 0 else { throw BrokerError("mosquitto did not stop on SIGTERM: \(log)") }
        process = nil
    }

    /// Publishes each line of `lines` as one message on `topic`, as the dispatcher (Debian's mosquitto_pub).
    /// Waits until a client has subscribed to `topic` (the broker logs each subscription).
    package func waitForSubscription(to topic: String, seconds: Double = 30) throws {
        do {
            try waitFor(seconds) { log.split(separator: "\n").contains { $0.hasSuffix(" \(topic)") } }
        } catch {
            throw BrokerError("no subscription to \(topic) in \(seconds) s: \(log)")
        }
    }

    package func publish(_ topic: String, lines: [String], retain: Bool = false, as user: String = "dispatch") throws {
        let input = folder.appendingPathComponent("pub-\(UUID().uuidString).txt").path
        try (lines.joined(separator: "\n") + "\n").write(toFile: input, atomically: true, encoding: .utf8)
        try Self.run(["/usr/bin/mosquitto_pub", "-h", "localhost", "-p", "\(port)", "--cafile", caFile,
                      "-u", user, "-P", Self.passwords[user]!, "-t", topic, "-q", "1", "-l"] + (retain ? ["-r"] : []),
                     stdin: input, what: "mosquitto_pub")
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: folder)
    }

    /// The first `count` messages on `topic` as the dispatcher sees them (retained ones included),
    /// each "topic payload", read by Debian's mosquitto_sub; `[]` after `seconds` without them.
    /// With `session`, a persistent session of that client id (QoS 1): what was published while it
    /// was away is delivered now.
    package func subscribe(_ topic: String, count: Int = 1, seconds: Int = 10, session: String? = nil) throws -> [String] {
        let output = folder.appendingPathComponent("sub-\(UUID().uuidString).out").path
        let persistent = session.map { ["-c", "-i", $0, "-q", "1"] } ?? []
        try Self.run(["/usr/bin/mosquitto_sub", "-h", "localhost", "-p", "\(port)", "--cafile", caFile,
                      "-u", "dispatch", "-P", Self.passwords["dispatch"]!, "-t", topic, "-v", "-C", "\(count)", "-W", "\(seconds)"] + persistent,
                     stdout: output, what: "mosquitto_sub", anyExit: true)      // what it printed is the answer
        return ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    private static func run(_ arguments: [String], stdin: String = "/dev/null", stdout: String = "/dev/null", what: String, anyExit: Bool = false) throws {
        let errors = Scratch.path("rideguard-mosquitto.err").path
        defer { try? FileManager.default.removeItem(atPath: errors) }
        let process = try Spawned(arguments, stdin: stdin, stdout: stdout, stderr: errors)
        let code = process.wait(30)
        guard let code, code == 0 || anyExit else {
            throw BrokerError("\(what) failed (\(code.map(String.init) ?? "still running after 30 s")): \((try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")")
        }
    }
}

package struct BrokerError: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}
