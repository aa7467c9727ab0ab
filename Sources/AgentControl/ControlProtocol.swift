// SPDX-License-Identifier: Apache-2.0
import SystemPackage
import FoundationEssentials
import Glibc
import RideGuardCore

/// What a client asks the running agent, one JSON line on the control socket:
/// `{"cmd":"status"}`, `{"cmd":"press","hold":1.5}`, `{"cmd":"record","name":"ride1","seconds":600}`,
/// `{"cmd":"record","stop":true}`.
package enum ControlRequest: Equatable, Sendable {
    case status
    /// The simulated button, held this many seconds.
    case press(hold: Double)
    case record(name: String, seconds: Double)
    case stopRecording
    /// The buzzer's check: one short pattern, refused during an emergency.
    case buzz
    /// The self-test SMS to the rider's own phone, now: refused during an emergency, while one
    /// waits, or within a day of the last.
    case selfTest
}

extension ControlRequest: Codable {
    enum CodingKeys: String, CodingKey { case cmd, hold, name, seconds, stop }

    package init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        switch try c.decode(String.self, forKey: .cmd) {
        case "status": self = .status
        case "buzz": self = .buzz
        case "selftest": self = .selfTest
        case "press": self = .press(hold: try c.decodeIfPresent(Double.self, forKey: .hold) ?? 0.3)
        case "record":
            if try c.decodeIfPresent(Bool.self, forKey: .stop) == true {
                self = .stopRecording
            } else {
                self = .record(name: try c.decodeIfPresent(String.self, forKey: .name) ?? "",
                               seconds: try c.decodeIfPresent(Double.self, forKey: .seconds) ?? 0)
            }
        case let other:
            throw DecodingError.dataCorruptedError(forKey: .cmd, in: c, debugDescription: "unknown command '\(other)': use status, press, record, buzz or selftest")
        }
    }

    package func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .status:
            try c.encode("status", forKey: .cmd)
        case .buzz:
            try c.encode("buzz", forKey: .cmd)
        case .selfTest:
            try c.encode("selftest", forKey: .cmd)
        case .press(let hold):
            try c.encode("press", forKey: .cmd)
            try c.encode(hold, forKey: .hold)
        case .record(let name, let seconds):
            try c.encode("record", forKey: .cmd)
            try c.encode(name, forKey: .name)
            try c.encode(seconds, forKey: .seconds)
        case .stopRecording:
            try c.encode("record", forKey: .cmd)
            try c.encode(true, forKey: .stop)
        }
    }
}

/// The agent's answer: `status` gives the agent's status; `press` and `record` give `ok` (with the
/// hold or the recording's path), or `error` says why not.
package struct ControlReply: Equatable, Sendable {
    package var status: AgentStatus?
    package var ok: Bool?
    package var holdSeconds: Double?
    package var path: String?
    /// What was done, for a person ("a self-test SMS is on its way to …").
    package var said: String?
    package var error: String?

    package init(status: AgentStatus? = nil, ok: Bool? = nil, holdSeconds: Double? = nil, path: String? = nil, said: String? = nil, error: String? = nil) {
        self.status = status
        self.ok = ok
        self.holdSeconds = holdSeconds
        self.path = path
        self.said = said
        self.error = error
    }

    package static func failed(_ reason: String) -> ControlReply { ControlReply(error: reason) }
}

extension ControlReply: Codable {
    enum CodingKeys: String, CodingKey {
        case ok, path, said, error
        case holdSeconds = "hold_s"
        case state
    }

    /// A status reply is the status itself, at the top level (what `rideguard status --json` prints).
    package init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        status = c.contains(.state) ? try AgentStatus(from: decoder) : nil
        ok = try c.decodeIfPresent(Bool.self, forKey: .ok)
        holdSeconds = try c.decodeIfPresent(Double.self, forKey: .holdSeconds)
        path = try c.decodeIfPresent(String.self, forKey: .path)
        said = try c.decodeIfPresent(String.self, forKey: .said)
        error = try c.decodeIfPresent(String.self, forKey: .error)
    }

    package func encode(to encoder: Encoder) throws {
        try status?.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(ok, forKey: .ok)
        try c.encodeIfPresent(holdSeconds, forKey: .holdSeconds)
        try c.encodeIfPresent(path, forKey: .path)
        try c.encodeIfPresent(said, forKey: .said)
        try c.encodeIfPresent(error, forKey: .error)
    }
}

/// What the running agent is doing, for `status`, `doctor` and `setup`.
package struct AgentStatus: Codable, Equatable, Sendable {
    package struct Sensor: Codable, Equatable, Sendable {
        package var simulated: Bool
        package var samples: Int
        package var rateHz: Double
        package var lastSampleAgeSeconds: Double?
        /// The low-passed specific force, g: about 1 at rest.
        package var gravityG: Double?
        package var lastFault: String?
        /// Non-physical samples dropped this run (nil from an older agent).
        package var rejectedSamples: Int?
        /// The IIO device read (`mpu6050`, `lsm6dsl_accel + lsm6dsl_gyro`), once opened.
        package var device: String?
        /// How it is read: "buffer, trigger …", "buffer (the chip's FIFO)", "polled: <why>", with what
        /// sysfs says of a local chip ("; driver inv-mpu6050-i2c, mount matrix identity").
        package var readMode: String?
        /// An accelerometer axis found dead this run ("axis z shows no signal…"); nil while every one works.
        package var deadAxis: String?

        enum CodingKeys: String, CodingKey {
            case simulated, samples
            case rejectedSamples = "rejected_samples"
            case rateHz = "rate_hz"
            case lastSampleAgeSeconds = "last_sample_age_s"
            case gravityG = "gravity_g"
            case lastFault = "last_fault"
            case device
            case readMode = "read_mode"
            case deadAxis = "dead_axis"
        }

        package init(simulated: Bool, samples: Int, rateHz: Double, lastSampleAgeSeconds: Double?, gravityG: Double?, lastFault: String?,
                    rejectedSamples: Int? = nil, device: String? = nil, readMode: String? = nil, deadAxis: String? = nil) {
            self.rejectedSamples = rejectedSamples
            self.deadAxis = deadAxis
            self.device = device
            self.readMode = readMode
            self.simulated = simulated
            self.samples = samples
            self.rateHz = rateHz
            self.lastSampleAgeSeconds = lastSampleAgeSeconds
            self.gravityG = gravityG
            self.lastFault = lastFault
        }

        /// A sensor that sent nothing for a second cannot see a crash.
        package var blind: Bool { (lastSampleAgeSeconds ?? .infinity) > 1 }
    }

    package struct GPIO: Codable, Equatable, Sendable {
        package var simulated: Bool
        /// Why the buzzer or the button cannot be used, if one cannot.
        package var problem: String?
        /// The button held down now, and when it was last pressed (Unix time); nil from an older agent.
        package var buttonDown: Bool?
        package var lastPress: Double?

        enum CodingKeys: String, CodingKey {
            case simulated, problem
            case buttonDown = "button_down"
            case lastPress = "last_press"
        }

        package init(simulated: Bool, problem: String?, buttonDown: Bool? = nil, lastPress: Double? = nil) {
            self.simulated = simulated
            self.problem = problem
            self.buttonDown = buttonDown
            self.lastPress = lastPress
        }
    }

    package struct Position: Codable, Equatable, Sendable {
        package var latitude: Double
        package var longitude: Double
        package var ageSeconds: Double

        enum CodingKeys: String, CodingKey {
            case latitude = "lat", longitude = "lon", ageSeconds = "age_s"
        }

        package init(latitude: Double, longitude: Double, ageSeconds: Double) {
            self.latitude = latitude
            self.longitude = longitude
            self.ageSeconds = ageSeconds
        }
    }

    package struct Modem: Codable, Equatable, Sendable {
        /// False for the simulated modem, whose messages are printed.
        package var real: Bool
        package var connected: Bool
        package var registration: String?
        package var signalDBm: Int?
        package var sim: String?
        /// Why the SIM lets no alert leave, with what to do (`ModemHealth.simProblem`).
        package var simProblem: String?
        package var problem: String?
        /// Whether it can make voice calls; nil when not known yet.
        package var voice: Bool?
        /// Optional bring-up steps the modem refused, each with what is done instead.
        package var limitations: [String]?

        enum CodingKeys: String, CodingKey {
            case real, connected, registration, sim, problem, voice, limitations
            case signalDBm = "signal_dbm"
            case simProblem = "sim_problem"
        }

        package static let simulated = Modem(real: false, connected: true)

        package init(real: Bool, connected: Bool, registration: String? = nil, signalDBm: Int? = nil, sim: String? = nil, problem: String? = nil) {
            self.real = real
            self.connected = connected
            self.registration = registration
            self.signalDBm = signalDBm
            self.sim = sim
            self.problem = problem
        }

        package init(_ health: ModemHealth) {
            self.init(real: true, connected: health.connected, registration: (health.registration ?? .unknown).rawValue,
                      signalDBm: health.signalDBm, sim: health.sim, problem: health.problem)
            voice = health.voice
            limitations = health.limitations
            simProblem = health.simProblem
        }

        package var health: ModemHealth {
            var health = ModemHealth.unknown
            health.connected = connected
            health.registration = registration.flatMap(Registration.init(rawValue:))
            health.signalDBm = signalDBm
            health.sim = sim
            health.simFault = simProblem
            health.problem = problem
            health.voice = voice
            health.limitations = limitations
            return health
        }
    }

    /// Who is with the bike: the detector's context, the ignition, the last parked fall, the supply.
    package struct Bike: Codable, Equatable, Sendable {
        /// riding, stopped or parked.
        package var context: String
        /// "on" or "off"; nil where no ignition line is wired (or it is lost).
        package var ignition: String?
        /// When the parked bike last fell over (Unix time), this run.
        package var lastParkedFall: Double?
        /// The Pi's under-voltage flag; nil where there is no Raspberry Pi voltage monitor.
        package var underVoltage: Bool?

        enum CodingKeys: String, CodingKey {
            case context, ignition
            case lastParkedFall = "last_parked_fall"
            case underVoltage = "under_voltage"
        }

        package init(context: String, ignition: String?, lastParkedFall: Double?, underVoltage: Bool?) {
            self.context = context
            self.ignition = ignition
            self.lastParkedFall = lastParkedFall
            self.underVoltage = underVoltage
        }
    }

    /// The fleet's broker (`mqtt:`): where, connected or not and since when, what is wrong, how many
    /// events wait for it.
    package struct Fleet: Codable, Equatable, Sendable {
        package var broker: String
        package var device: String
        package var connected: Bool
        package var since: Double?
        package var problem: String?
        package var backlog = 0
        /// The riding group's members who need help (nil without a group).
        package var group: [GroupMember]?

        package init(broker: String, device: String, connected: Bool) {
            self.broker = broker
            self.device = device
            self.connected = connected
        }
    }

    /// A member of the rider's group who needs help: who, since when, how far and which way.
    package struct GroupMember: Codable, Equatable, Sendable {
        package var device: String
        package var since: Double
        /// "11.1 km S, https://maps…", when the member's position is known.
        package var place: String?

        package init(device: String, since: Double, place: String?) {
            self.device = device
            self.since = since
            self.place = place
        }
    }

    /// A contact as `status`, the page and MQTT show them: whether they know they are one.
    package struct ContactLine: Codable, Equatable, Sendable {
        package var name: String
        /// `ContactStanding.name`: unasked, waiting, confirmed, declined, unreachable.
        package var state: String
        package var since: Double?
        /// "confirmed by reply 2 h ago", "asked 3 min ago, no reply yet"…
        package var summary: String

        package init(name: String, state: String, since: Double?, summary: String) {
            self.name = name
            self.state = state
            self.since = since
            self.summary = summary
        }
    }

    package var state: WorkflowState
    /// Whether an alert would reach someone now, as the workflow says it (the one answer the
    /// buzzer, the page and the fleet follow); nil from an agent older than this field.
    package var protection: Protection?
    package var countdownSeconds: Double?
    package var buzzer: BuzzerPattern
    package var sensor: Sensor
    package var gpio: GPIO
    package var fix: Position?
    package var modem: Modem
    package var pendingMessages: Int
    package var contacts: Int
    /// Each contact and their standing, in order; nil from an agent older than this field.
    package var contactLines: [ContactLine]?
    /// What the calls to the contacts are doing, or did last.
    package var calls: String?
    /// Who acknowledged the emergency (answered a call, replied OK), and how.
    package var acknowledgement: Acknowledgement?
    /// Nil from an agent older than this field.
    package var bike: Bike?
    /// Why the database cannot be written (protecting, degraded); nil when it can.
    package var storageProblem: String?
    /// Nil when no broker is configured.
    package var fleet: Fleet?

    package init(state: WorkflowState, protection: Protection? = nil, countdownSeconds: Double?, buzzer: BuzzerPattern, sensor: Sensor, gpio: GPIO, fix: Position?,
                modem: Modem, pendingMessages: Int, contacts: Int, contactLines: [ContactLine]? = nil, calls: String? = nil, acknowledgement: Acknowledgement? = nil,
                bike: Bike? = nil, storageProblem: String? = nil, fleet: Fleet? = nil) {
        self.fleet = fleet
        self.bike = bike
        self.storageProblem = storageProblem
        self.state = state
        self.protection = protection
        self.countdownSeconds = countdownSeconds
        self.buzzer = buzzer
        self.sensor = sensor
        self.gpio = gpio
        self.fix = fix
        self.modem = modem
        self.pendingMessages = pendingMessages
        self.contacts = contacts
        self.contactLines = contactLines
        self.calls = calls
        self.acknowledgement = acknowledgement
    }

    enum CodingKeys: String, CodingKey {
        case state, protection, buzzer, sensor, gpio, fix, modem, contacts, calls, acknowledgement, bike, fleet
        case storageProblem = "storage_problem"
        case countdownSeconds = "countdown_s"
        case pendingMessages = "pending_messages"
        case contactLines = "contact_lines"
    }
}

/// The commands' side of the control socket: one request, its typed reply.
package enum ControlClient {
    /// Throws `ControlSocketError` when the agent cannot be reached or does not answer in time.
    package static func send(_ request: ControlRequest, path: String, timeout: Double = 10) throws -> ControlReply {
        let text = String(decoding: try JSONEncoder().encode(request), as: UTF8.self)
        let answer = try ControlSocket.request(text, path: path, timeout: timeout)
        do {
            return try JSONDecoder().decode(ControlReply.self, from: Data(answer.utf8))
        } catch {
            throw ControlSocketError(path: path, reason: "unexpected answer: \(answer.prefix(80))", errno: Errno(rawValue: EPROTO))
        }
    }

    /// Whether an agent answers on `socket`, and its status when it does.
    package enum RunningAgent: Sendable {
        case running(AgentStatus)
        case notRunning
        /// A socket is there, but cannot be used (the reason: permission denied, no answer in time…).
        case unreachable(String)
    }

    /// Asks the agent on `socket` for its status. A socket nobody listens on (left behind by an
    /// agent that was killed) is an agent not running.
    package static func agentStatus(_ socket: String, timeout: Double = 10) -> RunningAgent {
        guard FileManager.default.fileExists(atPath: socket) else { return .notRunning }
        do {
            let reply = try send(.status, path: socket, timeout: timeout)
            guard let status = reply.status else { return .unreachable(reply.error ?? "no status in the answer") }
            return .running(status)
        } catch let error as ControlSocketError where error.errno == .permissionDenied {
            return .unreachable("permission denied")
        } catch let error as ControlSocketError where error.errno == Errno(rawValue: EPROTO) || error.errno == .timedOut {
            return .unreachable(error.reason)
        } catch {
            return .notRunning
        }
    }
}
