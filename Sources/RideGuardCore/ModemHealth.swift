// SPDX-License-Identifier: Apache-2.0
/// Where the modem stands on the network (27.007 +CREG/+CEREG <stat>), by the name `status` shows.
package enum Registration: String, Codable, Sendable, CustomStringConvertible {
    case home, roaming, searching, denied
    case notRegistered = "not registered"
    case unknown

    package init(status: Int) {
        self = switch status {
        case 1, 6: .home
        case 5, 7: .roaming
        case 2: .searching
        case 3: .denied
        case 0: .notRegistered
        default: .unknown
        }
    }

    package var registered: Bool { self == .home || self == .roaming }
    package var description: String { rawValue }
}

/// What the rest of the agent can know about the modem.
package struct ModemHealth: Codable, Equatable, Sendable {
    package var connected = false
    /// The SIM's state as `SIMState.name` says it ("ready", "not inserted"…); nil until asked.
    package var sim: String?
    /// Why the SIM, as the modem last found it, lets no alert leave (missing, locked, failing), with
    /// what to do; nil when it was ready or never asked.
    package var simFault: String?
    package var signalDBm: Int?
    package var registration: Registration?
    package var serviceCentre: String?
    /// Whether it can make voice calls (`AT+CLCC=?` answered OK); nil until brought up.
    package var voice: Bool?
    /// The SMS storage received messages are read from (27.005 +CPMS <mem1>, set to where the
    /// modem stores new ones, <mem3>), e.g. "SM" (the SIM) or "ME" (the modem); nil until known.
    package var messageStorage: String?
    package var problem: String?
    /// Optional bring-up steps the modem refused, each with what is done instead; nil when none.
    package var limitations: [String]?

    package var registered: Bool { registration?.registered ?? false }

    /// Why no alert can leave because of the SIM: its own fault, or the network refusing it; nil
    /// when neither.
    package var simProblem: String? {
        simFault ?? (registration == .denied ? SIMState.refusedByNetwork.problem() : nil)
    }

    package init() {}

    /// Nothing known yet.
    package static let unknown = ModemHealth()

}
