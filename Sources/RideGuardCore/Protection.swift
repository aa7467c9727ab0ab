// SPDX-License-Identifier: Apache-2.0
/// A part of the agent whose health decides whether an alert would reach anyone. Each part reports
/// its problem, or that it works again; the workflow keeps them, and from them and its state says
/// whether the rider is protected (`EmergencyWorkflow.protection`).
package enum HealthPart: String, Codable, CodingKeyRepresentable, CaseIterable, Sendable, Comparable {
    /// The IMU sends no sample (stalled, unplugged, not opened): no crash can be seen.
    case imu
    /// At rest the IMU does not read about 1 g (gravity partly on a dead axis, or a range misread):
    /// the detector takes that reading as the upright and judges postures conservatively.
    case imuReading = "imu_reading"
    /// The modem does not answer: no alert can leave the bike.
    case modem
    /// The SIM is missing, locked or refused by the network (`SIMState`): no alert can leave the bike.
    case sim
    /// One accelerometer axis is dead: the detector works on the others.
    case imuAxis = "imu_axis"
    /// The database cannot be written: alerts are kept in memory and sent.
    case storage
    /// The button cannot be read: a false alarm cannot be cancelled on the bike.
    case button
    /// The IMU gives far fewer samples than the detector needs (read polled, through a driver that
    /// powers the chip up for every read): a fall is still seen, a short impact may not be.
    case imuRate = "imu_rate"
    /// The SIM cannot send SMS (no credit, barred, not provisioned): the modem's network said so
    /// when one was sent. Until one goes out again, no alert would leave the bike by SMS.
    case sms
    /// No contact has confirmed their number, or one declined or cannot be reached.
    case contacts
    /// The scheduled self-test SMS to the rider's own phone could not be sent.
    case selfTest = "self_test"

    /// Whether a problem of this part means an alert would reach no one (NOT protecting), rather
    /// than protecting with a weakness (degraded).
    package var blocksAlerts: Bool {
        switch self {
        case .imu, .modem, .sim, .sms: true
        case .imuReading, .imuAxis, .storage, .button, .imuRate, .contacts, .selfTest: false
        }
    }

    /// What the journal says when the part's problem is over.
    package var recovered: String {
        switch self {
        case .imu: "the IMU sends samples again"
        case .imuReading: "the IMU reads about 1 g at rest again (an upright learned from it)"
        case .modem: "the modem answers again"
        case .sim: "the SIM is ready again"
        case .imuAxis: "every IMU axis works again"
        case .storage: "the database can be written again; what was kept in memory is written"
        case .button: "the button works again"
        case .imuRate: "the IMU gives the samples asked for again"
        case .sms: "the SIM sends SMS again"
        case .contacts: "the contacts are in order: one at least has confirmed, none declined or unreachable"
        case .selfTest: "the self-test SMS was sent"
        }
    }

    package static func < (a: HealthPart, b: HealthPart) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// Whether an alert would reach someone now: the one answer the buzzer, the journal, `status`, the
/// phone's page, systemd and the fleet all read (`EmergencyWorkflow.protection`).
package struct Protection: Codable, Equatable, Sendable {
    package enum Level: String, Codable, Sendable {
        /// Armed, every part working: a crash would be seen and its alert sent.
        case protecting
        /// Armed, and an alert would still go out, with a weakness the reasons name.
        case degraded
        /// A crash would not be seen, or its alert would reach no one: the reasons say why.
        case notProtecting = "not_protecting"
        /// A countdown or an alert is under way.
        case emergency
    }

    package var level: Level
    /// Why not protecting, or what is degraded; empty when protecting or in an emergency.
    package var reasons: [String]

    package init(_ level: Level, reasons: [String] = []) {
        self.level = level
        self.reasons = reasons
    }

    /// One line for a person: "protecting the rider", "NOT protecting: …", "protecting, degraded: …".
    package var summary: String {
        switch level {
        case .protecting: "protecting the rider"
        case .degraded: "protecting, degraded: " + reasons.joined(separator: "; ")
        case .notProtecting: "NOT protecting: " + reasons.joined(separator: "; ")
        case .emergency: "emergency in progress"
        }
    }

    /// The buzzer's warning while nothing of an emergency sounds: nil when protecting.
    package var warning: BuzzerPattern? {
        switch level {
        case .notProtecting: .fault
        case .degraded: .degraded
        case .protecting, .emergency: nil
        }
    }
}
