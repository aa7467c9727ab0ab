import FoundationEssentials
import RideGuardCore

/// A riding group over the fleet's broker (`group:`): each member publishes, retained, whether its
/// alert is out, on `<prefix>/group/<name>/<device>`, and hears the others there. A member's alert
/// is heard until its emergency ends or `dismiss_s` has passed; a member never raises an emergency
/// for another (the workflow only plays the group's pattern and journals who).
package struct RidingGroup {
    /// What a member publishes: its alert out or not, where it is, when (Unix seconds).
    package struct Report: Codable, Equatable, Sendable {
        var alert: Bool
        var lat: Double?
        var lon: Double?
        var t: Double?

        package init(alert: Bool, lat: Double? = nil, lon: Double? = nil, t: Double? = nil) {
            (self.alert, self.lat, self.lon, self.t) = (alert, lat, lon, t)
        }
    }

    package struct Member: Equatable {
        /// When this member's alert was first heard (the agent's clock).
        var since: Double
        var report: Report
    }

    let settings: AgentConfiguration.Group
    let device: String
    /// This member's topic, and the filter that hears every member.
    let topic: String
    let filter: String
    package private(set) var members: [String: Member] = [:]
    /// Alerts dismissed after `dismiss_s`, until the member's next report without one.
    private var dismissed: Set<String> = []

    package init(_ settings: AgentConfiguration.Group, prefix: String, device: String) {
        self.settings = settings
        self.device = device
        filter = "\(prefix)/group/\(settings.name)/+"
        topic = "\(prefix)/group/\(settings.name)/\(device)"
    }

    /// A report from another member (never this one's own); nil for any other message. A name
    /// is shown as printable text; a position off the globe is no position.
    package func report(topic: String, payload: [UInt8]) -> (device: String, report: Report)? {
        guard topic.hasPrefix(filter.dropLast()), let level = topic.split(separator: "/").last.map(String.init), level != device,
              payload.count <= 512, var report = try? JSONDecoder().decode(Report.self, from: Data(payload)) else { return nil }
        let member = level.printable(limit: 40)
        guard !member.isEmpty else { return nil }
        if !(report.lat.map { (-90...90).contains($0) } ?? false) || !(report.lon.map { (-180...180).contains($0) } ?? false) {
            (report.lat, report.lon) = (nil, nil)
        }
        return (member, report)
    }

    /// Takes the reports since the last look and dismisses alerts heard for `dismiss_s`; when the
    /// members needing help changed, the workflow's input that says so.
    package mutating func update(_ reports: [String: Report], now: Double, position: Fix?, mapLink: MapLinkStyle) -> WorkflowEvent? {
        let before = Set(members.keys)
        for (member, report) in reports {
            if report.alert && !dismissed.contains(member) {
                members[member] = Member(since: members[member]?.since ?? now, report: report)
            } else if !report.alert {
                members[member] = nil
                dismissed.remove(member)
            }
        }
        for (member, alert) in members where now < alert.since {
            members[member]?.since = now            // a clock set back: the wait starts again, it never ends early
        }
        for (member, alert) in members where now - alert.since >= settings.dismissSeconds {
            members[member] = nil
            dismissed.insert(member)
        }
        guard Set(members.keys) != before else { return nil }
        guard !members.isEmpty else { return .groupAlert(summary: nil, at: now) }
        let added = members.keys.filter { !before.contains($0) }
        guard !added.isEmpty else { return nil }       // one fewer: the others are still heard
        let summary = members.keys.sorted().map { member in
            "\(member) needs help" + (place(member, from: position, mapLink: mapLink).map { ", \($0)" } ?? "")
        }.joined(separator: "; ")
        return .groupAlert(summary: summary, at: now)
    }

    /// "11.1 km S, https://maps…", from this bike's position when known.
    func place(_ member: String, from position: Fix?, mapLink: MapLinkStyle) -> String? {
        guard let report = members[member]?.report, let lat = report.lat, let lon = report.lon else { return nil }
        let map = mapLink.link(Fix(time: report.t ?? 0, latitude: lat, longitude: lon))
        guard let position else { return map }
        return Bearing.text((position.latitude, position.longitude), (lat, lon)) + ", " + map
    }

    /// This member's own report, as published.
    static func json(alert: Bool, position: Fix?, now: Double) -> String {
        var line = JSONLine()
        line.add("alert", alert)
        if let position { line.append(contentsOf: position.fleetFacts(now: now)) }
        line.add("t", now, decimals: 0)
        return line.text
    }
}
