// SPDX-License-Identifier: Apache-2.0
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
    /// Members dismissed who then said "no alert": not heard again before this time, so that none
    /// keeps every buzzer sounding by clearing and raising its alert each `dismiss_s`.
    private var quietUntil: [String: Double] = [:]
    /// Alerts not heard because `maxMembers` were already (said once in `status` and the journal).
    package private(set) var unheard = 0

    /// Members needing help kept and shown at once: a group is a few dozen bikes; a flood of made-up
    /// names must not grow memory, the journal or `status` without bound.
    package static let maxMembers = 32
    /// Names remembered as dismissed or quiet, at most.
    static let remembered = 256
    /// Reports taken from the broker between two looks (a second), at most.
    package static let reportsPerLook = 1024

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

    /// What is on this bike's own topic: its alert as published (by it, or by someone else), or
    /// something that is no report at all (someone else's).
    package enum OwnTopic: Equatable, Sendable {
        case alert(Bool)
        case unreadable
    }

    /// What a message on this bike's own topic says; nil for any other topic.
    package func ownTopic(topic: String, payload: [UInt8]) -> OwnTopic? {
        guard topic == self.topic else { return nil }
        guard payload.count <= 512, let report = try? JSONDecoder().decode(Report.self, from: Data(payload)) else { return .unreadable }
        return .alert(report.alert)
    }

    /// Takes the reports since the last look and dismisses alerts heard for `dismiss_s`; when the
    /// members needing help changed, the workflow's input that says so.
    package mutating func update(_ reports: [String: Report], now: Double, position: Fix?, mapLink: MapLinkStyle) -> WorkflowEvent? {
        let before = Set(members.keys)
        quietUntil = quietUntil.filter { $0.value > now && $0.value - now <= settings.dismissSeconds }   // a clock set back ends it
        var refused = 0
        for (member, report) in reports.sorted(by: { $0.key < $1.key }) {
            if report.alert && !dismissed.contains(member) && quietUntil[member] == nil {
                if members[member] == nil && members.count >= Self.maxMembers {
                    refused += 1
                    continue
                }
                members[member] = Member(since: members[member]?.since ?? now, report: report)
            } else if !report.alert {
                members[member] = nil
                if dismissed.remove(member) != nil { quietUntil[member] = now + settings.dismissSeconds }
            }
        }
        unheard += refused
        for (member, alert) in members where now < alert.since {
            members[member]?.since = now            // a clock set back: the wait starts again, it never ends early
        }
        for (member, alert) in members where now - alert.since >= settings.dismissSeconds {
            members[member] = nil
            dismissed.insert(member)
        }
        // Bounded: past `remembered` names, the oldest quiet ones are forgotten, then any dismissed.
        while quietUntil.count > Self.remembered, let first = quietUntil.min(by: { $0.value < $1.value }) { quietUntil[first.key] = nil }
        while dismissed.count > Self.remembered { dismissed.removeFirst() }
        guard Set(members.keys) != before else { return nil }
        guard !members.isEmpty else { return .groupAlert(summary: nil, at: now) }
        let added = members.keys.filter { !before.contains($0) }.sorted()
        guard !added.isEmpty else { return nil }       // one fewer: the others are still heard
        // What changed, never the whole list: a line stays short however large the group.
        var summary = added.prefix(3).map { member in
            "\(member) needs help" + (place(member, from: position, mapLink: mapLink).map { ", \($0)" } ?? "")
        }.joined(separator: "; ")
        if added.count > 3 { summary += "; and \(added.count - 3) more" }
        if refused > 0 { summary += " (\(refused) more alerts not heard: \(Self.maxMembers) members already need help)" }
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
