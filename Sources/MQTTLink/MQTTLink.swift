// SPDX-License-Identifier: Apache-2.0
import CMosquitto
import Glibc
import Synchronization
import SystemCalls
import RideGuardCore

/// Where and how to reach an MQTT broker. The password is read from a file by the caller (never
/// written in the configuration).
package struct MQTTSettings: Equatable, Sendable {
    package var host: String
    package var port: Int
    /// TLS: the broker's certificate is checked against `caFile`, or the system's CAs without one.
    package var tls: Bool
    package var caFile: String?
    /// A client certificate and its key, for brokers that ask for one.
    package var certFile: String?
    package var keyFile: String?
    package var username: String?
    package var password: String?
    package var clientID: String
    package var keepaliveSeconds: Int
    /// Published by the broker when the connection drops without a goodbye (a power cut, kill -9).
    package var will: MQTTMessage?
    /// A broker that takes the connection and has not answered it (CONNACK) in this long is left, seconds.
    package var answerSeconds = 10

    package init(host: String, port: Int, tls: Bool = false, caFile: String? = nil, certFile: String? = nil, keyFile: String? = nil,
                 username: String? = nil, password: String? = nil, clientID: String, keepaliveSeconds: Int = 30,
                 will: MQTTMessage? = nil) {
        self.host = host
        self.port = port
        self.tls = tls
        self.caFile = caFile
        self.certFile = certFile
        self.keyFile = keyFile
        self.username = username
        self.password = password
        self.clientID = clientID
        self.keepaliveSeconds = keepaliveSeconds
        self.will = will
    }
}

extension MQTTSettings {
    /// The password in `file` (its first line, without surrounding blanks), or an error naming the
    /// file and why it cannot be read.
    package static func password(fromFile file: String) throws(MQTTError) -> String {
        guard let handle = fopen(file, "r") else { throw MQTTError("cannot read the password file \(file): \(String(cString: strerror(errno)))") }
        defer { fclose(handle) }
        var line = [CChar](repeating: 0, count: 1024)
        guard fgets(&line, Int32(line.count), handle) != nil else { throw MQTTError("the password file \(file) is empty") }
        var text = Substring(String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        while text.first?.isWhitespace == true { text.removeFirst() }
        while text.last?.isWhitespace == true { text.removeLast() }
        return String(text)
    }
}

package struct MQTTMessage: Equatable, Sendable {
    package var topic: String
    package var payload: [UInt8]
    /// 0: at most once; 1: at least once (the broker acknowledges it).
    package var qos: Int32
    package var retain: Bool

    package init(topic: String, payload: [UInt8], qos: Int32 = 1, retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }
}

/// What the link reports, from its network thread.
package enum MQTTLinkEvent: Equatable, Sendable {
    /// The broker accepted the connection (again, after a drop: subscriptions must be made again).
    case connected
    /// The broker refused the connection (bad password, not authorised): the reason, in words.
    case refused(String)
    /// The connection dropped; the link connects again by itself.
    case disconnected
    /// Why the link is not connected, in words (a name that does not resolve, a refused or silent
    /// connection, a TLS handshake that failed: a wrong CA); it goes on trying.
    case failed(String)
    /// The broker acknowledged the QoS 1 message with this id (PUBACK): it is the broker's now.
    case acknowledged(messageID: Int32)
    /// A message on a subscribed topic; `retained` when the broker kept it from before.
    case received(topic: String, payload: [UInt8], retained: Bool)
}

package struct MQTTError: Error, Equatable, CustomStringConvertible, Sendable {
    package var description: String
    init(_ what: String, _ code: Int32) {
        // A system error's own words (ECONNREFUSED, ENOENT…), not libmosquitto's "unknown error".
        let reason = code == MOSQ_ERR_ERRNO.rawValue ? String(cString: strerror(errno)) : String(cString: mosquitto_strerror(code))
        description = "\(what): \(reason)"
    }
    package init(_ description: String) { self.description = description }
}

/// One connection to a broker through libmosquitto, on a network thread of its own that
/// reconnects after any loss (1 s, doubling to 60 s). Not libmosquitto's own threaded loop: it
/// gives up for good after a TLS error, and a broker killed mid-session reads as one.
/// Unacknowledged QoS 1 messages are kept in memory only, across reconnections: what must survive a
/// power cut is the caller's to keep, and `acknowledged` is when it may forget it. Its thread keeps
/// it alive until `stop()` or `drop()`.
package final class MQTTLink: @unchecked Sendable {
    // @unchecked: the handle is used through libmosquitto's thread-safe calls (publish, subscribe,
    // disconnect, the loop on our thread) and destroyed once, in `finish`, after that thread ended.
    private let handle: OpaquePointer
    private let settings: MQTTSettings
    private let onEvent: @Sendable (MQTTLinkEvent) -> Void
    private struct State {
        var stopping = false
        var finished = false
        /// The broker answered the connection under way (CONNACK, accepted or refused).
        var answered = false
        var thread: pthread_t?
    }
    private let state = Mutex(State())

    /// Debian's CA certificates, hashed (ca-certificates): what a broker with a public certificate is checked against.
    static let systemCAs = "/etc/ssl/certs"

    private static let initialised: Void = { _ = mosquitto_lib_init() }()

    package init(_ settings: MQTTSettings, onEvent: @escaping @Sendable (MQTTLinkEvent) -> Void) throws(MQTTError) {
        Self.initialised
        self.settings = settings
        self.onEvent = onEvent
        guard let handle = mosquitto_new(settings.clientID, false, nil) else { throw MQTTError("mosquitto_new failed (out of memory?)") }
        self.handle = handle
        do {
            try configure()
        } catch {
            mosquitto_destroy(handle)
            throw error
        }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        guard pthread_create(&thread, nil, { context in
            let link = Unmanaged<MQTTLink>.fromOpaque(context!).takeRetainedValue()
            link.run()
            return nil
        }, context) == 0 else {
            Unmanaged<MQTTLink>.fromOpaque(context).release()
            mosquitto_destroy(handle)
            throw MQTTError("cannot start the MQTT network thread")
        }
        state.withLock { $0.thread = thread }
    }

    private func configure() throws(MQTTError) {
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        try check("threads", mosquitto_threaded_set(handle, true))
        try check("MQTT 3.1.1", mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, Int32(MQTT_PROTOCOL_V311)))
        if settings.username != nil || settings.password != nil {
            try check("username and password", mosquitto_username_pw_set(handle, settings.username, settings.password))
        }
        if settings.tls {
            let caPath = settings.caFile == nil ? Self.systemCAs : nil
            try check("TLS (CA \(settings.caFile ?? caPath!))", mosquitto_tls_set(handle, settings.caFile, caPath, settings.certFile, settings.keyFile, nil))
        }
        if let will = settings.will {
            try check("the will", will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set(handle, will.topic, Int32(bytes.count), bytes.baseAddress, will.qos, will.retain)
            })
        }
        mosquitto_connect_callback_set(handle) { _, context, code in
            guard let link = MQTTLink.from(context) else { return }
            link.state.withLock { $0.answered = true }
            link.onEvent(code == 0 ? .connected : .refused(String(cString: mosquitto_connack_string(code))))
        }
        mosquitto_disconnect_callback_set(handle) { _, context, _ in MQTTLink.from(context)?.onEvent(.disconnected) }
        mosquitto_publish_callback_set(handle) { _, context, mid in MQTTLink.from(context)?.onEvent(.acknowledged(messageID: mid)) }
        mosquitto_message_callback_set(handle) { _, context, message in
            guard let link = MQTTLink.from(context), let message = message?.pointee, let topic = message.topic else { return }
            let payload = message.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(message.payloadlen))) } ?? []
            link.onEvent(.received(topic: String(cString: topic), payload: payload, retained: message.retain))
        }
    }

    private static func from(_ context: UnsafeMutableRawPointer?) -> MQTTLink? {
        context.map { Unmanaged<MQTTLink>.fromOpaque($0).takeUnretainedValue() }
    }

    private var stopping: Bool { state.withLock { $0.stopping } }

    /// The network thread: connect, serve the connection until it fails (any error: lost, refused,
    /// TLS) and wait before connecting again, 1 s doubling to 60 s; until `stop` or `drop`.
    private func run() {
        var backoff = Backoff(first: 1, limit: 60)
        var connectedOnce = false
        while !stopping {
            var code = connectedOnce ? mosquitto_reconnect(handle)
                                     : mosquitto_connect(handle, settings.host, Int32(settings.port), Int32(settings.keepaliveSeconds))
            if code == MOSQ_ERR_SUCCESS.rawValue {
                connectedOnce = true
                backoff.reset()
                // A broker that takes the connection and never answers it (no CONNACK) is said, and
                // left; the loop's own code after that disconnect ("no connection") says less.
                state.withLock { $0.answered = false }
                let answerBy = monotonicSeconds() + Double(settings.answerSeconds)
                while !stopping {
                    code = mosquitto_loop(handle, 1000, 1)
                    guard code == MOSQ_ERR_SUCCESS.rawValue else { break }
                    if monotonicSeconds() >= answerBy && !state.withLock({ $0.answered }) {
                        onEvent(.failed("\(settings.host):\(settings.port) took the connection but has not answered in \(settings.answerSeconds) s (not an MQTT broker, or a stuck one)"))
                        mosquitto_disconnect(handle)
                        code = MOSQ_ERR_SUCCESS.rawValue
                        break
                    }
                }
            }
            if !stopping && code != MOSQ_ERR_SUCCESS.rawValue { onEvent(.failed(Self.reason(code, host: settings.host, port: settings.port))) }
            var left = backoff.next()
            while left > 0 && !stopping {
                usleep(100_000)
                left -= 0.1
            }
        }
    }

    /// Why a connection failed, in words a person can act on.
    static func reason(_ code: Int32, host: String, port: Int) -> String {
        switch code {
        case MOSQ_ERR_EAI.rawValue: "the broker's name \(host) does not resolve (no DNS, or a wrong name)"
        case MOSQ_ERR_TLS.rawValue: "the TLS handshake with \(host):\(port) failed (a wrong ca_file, an expired or mismatched certificate, or not TLS)"
        case MOSQ_ERR_CONN_LOST.rawValue: "the connection to \(host):\(port) was lost"
        case MOSQ_ERR_KEEPALIVE.rawValue: "\(host):\(port) stopped answering (keepalive)"
        case MOSQ_ERR_ERRNO.rawValue: "\(host):\(port): \(String(cString: strerror(errno)))"
        default: "\(host):\(port): \(String(cString: mosquitto_strerror(code)))"
        }
    }

    /// Hands a message to libmosquitto; returns its id (the one `acknowledged` will carry for QoS 1).
    /// While disconnected a QoS 1 message is queued in memory and sent after the reconnection; a
    /// QoS 0 one cannot be, and throws.
    @discardableResult
    package func publish(_ message: MQTTMessage) throws(MQTTError) -> Int32 {
        var id: Int32 = 0
        try check("publish to \(message.topic)", message.payload.withUnsafeBytes { bytes in
            mosquitto_publish(handle, &id, message.topic, Int32(bytes.count), bytes.baseAddress, message.qos, message.retain)
        }, allow: message.qos > 0 ? [MOSQ_ERR_NO_CONN.rawValue] : [])
        return id
    }

    /// Subscribes now; after a reconnection, again (on `connected`).
    package func subscribe(_ topic: String, qos: Int32 = 1) throws(MQTTError) {
        try check("subscribe to \(topic)", mosquitto_subscribe(handle, nil, topic, qos), allow: [MOSQ_ERR_NO_CONN.rawValue])
    }

    /// Says goodbye (no will is published), ends the network thread and frees the connection.
    package func stop() { finish(goodbye: true) }

    /// Drops the connection without a goodbye, as a power cut would: the broker publishes the will.
    package func drop() { finish(goodbye: false) }

    private func finish(goodbye: Bool) {
        guard let thread = state.withLock({ s -> pthread_t? in
            guard !s.finished else { return nil }
            s.finished = true
            s.stopping = true
            return s.thread
        }) else { return }
        if !goodbye {
            // The connection is cut first, so the DISCONNECT below cannot reach the broker.
            let socket = mosquitto_socket(handle)
            if socket >= 0 { _ = shutdown(socket, Int32(SHUT_RDWR)) }
        }
        _ = mosquitto_disconnect(handle)        // also what ends the loop in `run`
        pthread_join(thread, nil)
        mosquitto_destroy(handle)
    }

    private func check(_ what: String, _ code: Int32, allow: [Int32] = []) throws(MQTTError) {
        guard code != MOSQ_ERR_SUCCESS.rawValue, !allow.contains(code) else { return }
        throw MQTTError(what, code)
    }
}
