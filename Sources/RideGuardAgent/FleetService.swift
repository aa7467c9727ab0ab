// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import Logging
import MQTTLink
import RideGuardCore
import ServiceLifecycle
import Storage
import Synchronization
import AgentControl
import SystemCalls

/// `mqtt:` — the agent on a fleet's broker (docs/fleet.md): `status` (retained
/// `online`, the will `offline`), `state` (retained JSON on each change, and at most every
/// `state_interval_s` while riding and the position moves: a parked bike's GPS drift costs nothing), `event` (QoS 1, from the events table in `seq`
/// order, the cursor moved only by the broker's PUBACK: hours offline or a power cut lose nothing),
/// and `cmd` (an acknowledgement, or "publish the state now"; nothing there disarms, cancels or
/// changes a setting).
///
/// Off the emergency's path: the link runs on its own thread, this service reads the table and
/// posts at most an acknowledgement to the workflow; nothing else waits on the broker.
final class FleetService: Service, CustomStringConvertible {
    /// Events handed to the link and not yet acknowledged, at most.
    static let window = 20
    /// Events the broker has not acknowledged, kept at most (the oldest go, journaled).
    static let backlogLimit = 10_000
    /// A `cmd` message longer than this is not read.
    static let commandLimit = 512

    struct Topics {
        var status, state, event, cmd: String
        init(prefix: String, device: String) {
            let base = "\(prefix)/\(device)/"
            (status, state, event, cmd) = (base + "status", base + "state", base + "event", base + "cmd")
        }
    }

    /// What the link's thread reports, taken by the service's loop.
    private struct Inbox {
        var connections = 0
        var disconnected = false
        var refused: String?
        var acknowledged: [Int32] = []
        /// Who acknowledged through `cmd` (the first since the last look).
        var ack: Ack?
        var stateAsked = false
        var ignored = 0
        var ignoredExample: String?
        /// The riding group's members' reports, the latest of each.
        var groupReports: [String: RidingGroup.Report] = [:]
        /// Why the link is not connected, as it said last.
        var failed: String?
        /// What was last heard on this bike's own group topic (its own report, or someone else's).
        var ownTopic: RidingGroup.OwnTopic?
    }

    private let settings: AgentConfiguration.MQTT
    private let device: String
    private let topics: Topics
    private let emergency: EmergencyService
    private let announcer: FleetAnnouncer
    private let whereabouts: Whereabouts
    private let sensor: SensorHealth
    private let bike: BikeContext
    private let fleetStatus: FleetStatus
    private let database: RideGuardDatabase
    private let clock: any ServiceClock
    private let logger: Logger
    private let inbox = Mutex(Inbox())
    private let group: RidingGroup?
    private let mapLink: MapLinkStyle
    var description: String { "mqtt" }

    init(settings: AgentConfiguration.MQTT, emergency: EmergencyService, announcer: FleetAnnouncer, whereabouts: Whereabouts,
         sensor: SensorHealth, bike: BikeContext, status: FleetStatus, group: AgentConfiguration.Group?, mapLink: MapLinkStyle,
         database: RideGuardDatabase, clock: any ServiceClock, logger: Logger) {
        self.settings = settings
        device = settings.device ?? Self.hostname()
        topics = Topics(prefix: settings.topicPrefix, device: device)
        let device = self.device
        self.group = group.map { RidingGroup($0, prefix: settings.topicPrefix, device: device) }
        self.mapLink = mapLink
        self.emergency = emergency
        self.announcer = announcer
        self.whereabouts = whereabouts
        self.sensor = sensor
        self.bike = bike
        self.fleetStatus = status
        self.database = database
        self.clock = clock
        self.logger = logger
        status.set(AgentStatus.Fleet(broker: settings.url, device: device, connected: false))
    }

    func run() async throws {
        guard let link = try? await cancelWhenGracefulShutdown({ [self] in try await connect() }) else { return }
        try? await cancelWhenGracefulShutdown { [self] in try await serve(link) }
        // A goodbye leaves no will: `offline` is said first (sent before the DISCONNECT). The stop
        // joins the link's thread, which may sit in a TCP connect to a silent host for minutes:
        // the other parts' stops do not wait on it longer than 3 s (the will says `offline` then).
        _ = await onOwnThread("rg-mqtt-stop", atMost: 3) { [topics, logger] in
            do { _ = try link.publish(MQTTMessage(topic: topics.status, payload: Array("offline".utf8), qos: 1, retain: true)) } catch {
                logger.info("mqtt: offline not published (\(error)): the broker's will says it")
            }
            link.stop()
        }
    }

    /// The link, once its settings can be read (the password file, the CA): a problem is said and
    /// tried again every minute; the agent goes on without the broker meanwhile.
    private func connect() async throws -> MQTTLink {
        var said: String?
        while true {
            do {
                return try MQTTLink(linkSettings()) { [self] event in
                    take(event)
                    announcer.doorbell.ring()
                }
            } catch {
                let problem = "\(error)"
                if problem != said {
                    logger.error("mqtt: \(problem); trying again every minute (SMS alerts are not affected)")
                    database.journal(JournalEntry(.system, "mqtt: \(problem)"), at: clock.now())
                    fleetStatus.update { $0.problem = problem }
                    said = problem
                }
                try await clock.sleep(until: clock.now() + 60)
            }
        }
    }

    private func linkSettings() throws -> MQTTSettings {
        guard let endpoint = settings.endpoint else { throw MQTTError("'\(settings.url)' is not mqtt://HOST[:PORT] or mqtts://HOST[:PORT]") }
        for file in [settings.caFile, settings.certFile, settings.keyFile, settings.passwordFile].compactMap({ $0 }) {
            if let problem = PrivateFiles.untrusted(file) { throw MQTTError("not using \(file): \(problem)") }
        }
        let password = try settings.passwordFile.map(MQTTSettings.password(fromFile:))
        return MQTTSettings(host: endpoint.host, port: endpoint.port, tls: endpoint.tls, caFile: settings.caFile, certFile: settings.certFile,
                            keyFile: settings.keyFile, username: settings.username, password: password, clientID: "rideguard-\(device)",
                            keepaliveSeconds: settings.keepaliveSeconds,
                            will: MQTTMessage(topic: topics.status, payload: Array("offline".utf8), qos: 1, retain: true))
    }

    /// On the link's thread: only notes what came (a flood of `cmd` costs a parse each, no more).
    private func take(_ event: MQTTLinkEvent) {
        if case .received(let topic, let payload, _) = event, topic != topics.cmd {
            if let own = group?.ownTopic(topic: topic, payload: payload) {
                inbox.withLock { $0.ownTopic = own }
                return
            }
            guard let (member, report) = group?.report(topic: topic, payload: payload) else { return }
            // A flood of made-up names costs a bounded dictionary a second, no more.
            inbox.withLock { i in
                if i.groupReports[member] != nil || i.groupReports.count < RidingGroup.reportsPerLook { i.groupReports[member] = report }
            }
            return
        }
        // A command kept by the broker from before (retained) is nobody's command now: ignored.
        let command: Command? = if case .received(_, let payload, false) = event { Command(payload) } else { nil }
        inbox.withLock { i in
            switch event {
            case .connected: i.connections += 1
            case .disconnected: i.disconnected = true
            case .refused(let reason): i.refused = reason
            case .failed(let reason): i.failed = reason
            case .acknowledged(let id): i.acknowledged.append(id)
            case .received(_, let payload, let retained):
                switch command {
                case .ack(let ack): if i.ack == nil { i.ack = ack }
                case .state: i.stateAsked = true
                case nil:
                    i.ignored += 1
                    if i.ignoredExample == nil { i.ignoredExample = (retained ? "(retained) " : "") + String(decoding: payload.prefix(60), as: UTF8.self) }
                }
            }
        }
    }

    /// A dispatcher's acknowledgement, and which emergency it answers: its id (`emergency`, as the
    /// state and `countdown_started` give it), or the time it was given (`t`, Unix seconds). The
    /// workflow decides whether that is the one under way.
    struct Ack: Equatable {
        var by: String
        var answering: AcknowledgedEmergency
    }

    /// What `cmd` takes: `{"cmd":"ack","by":"…","emergency":ID}` and `{"cmd":"where"}`; anything else is ignored.
    enum Command: Equatable {
        case ack(Ack)
        case state

        init?(_ payload: [UInt8]) {
            struct Wire: Decodable {
                var cmd: String
                var by: String?
                var emergency: Int?
                var t: Double?
            }
            guard payload.count <= FleetService.commandLimit, let wire = try? JSONDecoder().decode(Wire.self, from: Data(payload)) else { return nil }
            switch wire.cmd {
            case "ack":
                // Shown in the journal and `status`: printable, one line, short.
                let by = (wire.by ?? "").printable(limit: 40)
                self = .ack(Ack(by: by.isEmpty ? "a dispatcher" : by,
                                answering: .named(id: wire.emergency, issuedAt: wire.t.flatMap { $0.isFinite ? $0 : nil })))
            case "where": self = .state
            default: return nil
            }
        }
    }

    /// The loop: takes what the link reported, moves the cursor, publishes the events that follow
    /// it and the state; wakes on the link, a new event, or each second.
    private func serve(_ link: MQTTLink) async throws {
        var cursor = try await EventCursor.start("mqtt", database: database, clock: clock, logger: logger)
        var trouble = FleetTrouble("mqtt", database: database, logger: logger)
        var published = cursor.seq                   // the newest seq handed to the link
        var inFlight: [Int32: Int64] = [:]          // message id → seq, handed over and not acknowledged
        var online = false
        var lastState: (key: String, position: String, at: Double)?
        var lastIgnoredReport: Double?, ignored = 0
        var group = self.group
        var groupAlertSaid: Bool?             // this bike's alert as last told to the group
        while true {
            let news = inbox.withLock { i in
                defer { i = Inbox() }
                return i
            }
            let now = clock.now()
            if news.connections > 0 {
                online = true
                lastState = nil
                do { _ = try link.publish(MQTTMessage(topic: topics.status, payload: Array("online".utf8), qos: 1, retain: true)) } catch {
                    trouble.failed("publishing online on \(topics.status)", error, at: now)
                }
                for topic in [topics.cmd] + [group?.filter].compactMap({ $0 }) {
                    do {
                        try link.subscribe(topic)
                        trouble.worked("subscribing to \(topic)", at: now)
                    } catch {
                        trouble.failed("subscribing to \(topic)", error, at: now)
                    }
                }
                groupAlertSaid = nil
                logger.info("mqtt: connected to \(settings.url) as \(device)")
                fleetStatus.update { $0.connected = true; $0.since = now; $0.problem = nil }
            } else if news.disconnected && online {
                online = false
                logger.warning("mqtt: the connection to \(settings.url) dropped; connecting again (SMS alerts are not affected)")
                fleetStatus.update { $0.connected = false; $0.since = now }
            }
            if let reason = news.failed, !online, fleetStatus.snapshot?.problem != reason {
                logger.warning("mqtt: not connected: \(reason) (SMS alerts are not affected)")
                fleetStatus.update { $0.problem = reason }
            }
            if let reason = news.refused {
                let problem = "the broker \(settings.url) refused the connection: \(reason)"
                if fleetStatus.snapshot?.problem != problem {
                    logger.error("mqtt: \(problem)")
                    database.journal(JournalEntry(.system, "mqtt: \(problem)"), at: now)
                    fleetStatus.update { $0.problem = problem }
                }
            }
            // The cursor: every event up to it is the broker's (those before the oldest in flight).
            for id in news.acknowledged { inFlight[id] = nil }
            cursor.move(to: inFlight.values.min().map { $0 - 1 } ?? published, at: now)
            if let ack = news.ack {
                emergency.post(.event(.acknowledged(Acknowledgement(who: ack.by, channel: .mqtt, time: now), answering: ack.answering)))
            }
            ignored += news.ignored
            if ignored > 0 && isDue(since: lastIgnoredReport, now: now, every: 60) {
                logger.warning("mqtt: \(ignored) cmd message(s) ignored (only {\"cmd\":\"ack\",\"by\":\"…\"} and {\"cmd\":\"where\"} are read), such as: \(news.ignoredExample ?? "…")")
                lastIgnoredReport = now
                ignored = 0
            }
            let workflow = await emergency.snapshot
            let state = workflow.state
            if var current = group {
                if let change = current.update(news.groupReports, now: now, position: whereabouts.lastFix, mapLink: mapLink) {
                    emergency.post(.event(change))
                }
                let alert = WorkflowState.alertsOut.contains(state)
                // Someone else wrote on this bike's topic (cleared its alert, or forged one): said, and
                // put right at once. Only the broker's ACL can stop them writing (docs/fleet.md).
                if let own = news.ownTopic, let said = groupAlertSaid, own != .alert(said) {
                    let heard = if case .alert(let alert) = own { "alert \(alert)" } else { "not a report" }
                    let text = "riding group: someone else published on this bike's topic (\(heard)); published again (alert \(said))"
                    logger.warning("mqtt: \(text)")
                    database.journal(JournalEntry(.system, text), at: now)
                    groupAlertSaid = nil
                }
                if online && alert != groupAlertSaid {
                    let report = RidingGroup.json(alert: alert, position: whereabouts.lastFix, now: now)
                    do {
                        _ = try link.publish(MQTTMessage(topic: current.topic, payload: Array(report.utf8), qos: 1, retain: true))
                        groupAlertSaid = alert
                        trouble.worked("publishing to the riding group", at: now)
                    } catch {
                        trouble.failed("publishing to the riding group", error, at: now)
                    }
                }
                let position = whereabouts.lastFix
                fleetStatus.update { fleet in
                    fleet.group = current.members.keys.sorted().map { member in
                        AgentStatus.GroupMember(device: member, since: current.members[member]!.since,
                                                place: current.place(member, from: position, mapLink: mapLink))
                    }
                }
                group = current
            }
            if online {
                let room = Self.window - inFlight.count
                if room > 0 {
                    for event in cursor.events(after: published, limit: room, at: now) {
                        do {
                            inFlight[try link.publish(MQTTMessage(topic: topics.event, payload: Array(event.published.utf8), qos: 1))] = event.seq
                            published = event.seq
                            trouble.worked("publishing the events", at: now)
                        } catch {
                            // Handed over again at the next look, from the same event.
                            trouble.failed("publishing the events", error, at: now)
                            break
                        }
                    }
                }
                let contacts: [Contact]?
                do {
                    contacts = try database.contacts()
                    trouble.worked("reading the contacts for the state", at: now)
                } catch {
                    contacts = nil
                    trouble.failed("reading the contacts for the state", error, at: now)
                }
                let state = stateFacts(state, emergency: workflow.emergencyID, protection: workflow.protection, contacts: contacts, now: now)
                let due = FleetState.due(last: lastState, key: state.key, position: state.position, asked: news.stateAsked,
                                        riding: bike.context == .riding, now: now, every: settings.stateIntervalSeconds)
                if due {
                    do {
                        _ = try link.publish(MQTTMessage(topic: topics.state, payload: Array(state.json.utf8), qos: 1, retain: true))
                        lastState = (state.key, state.position, now)
                        trouble.worked("publishing the state", at: now)
                        if let user = settings.owntracksUser, let fix = whereabouts.lastFix {
                            _ = try link.publish(MQTTMessage(topic: "owntracks/\(user)/\(device)", payload: Array(Self.ownTracks(fix, device: device).utf8),
                                                             qos: 1, retain: true))
                        }
                    } catch {
                        trouble.failed("publishing the state", error, at: now)
                    }
                }
            }
            do {
                let newest = try database.lastEventSeq()
                try trimBacklog(after: max(cursor.seq, published), newest: newest, now: now)
                fleetStatus.update { $0.backlog = Int(max(0, newest - cursor.seq)) }
                trouble.worked("trimming the events never acknowledged", at: now)
            } catch {
                trouble.failed("trimming the events never acknowledged", error, at: now)
            }
            await announcer.doorbell.wait(until: now + 1, clock: clock)
            try Task.checkCancellation()
        }
    }

    /// A broker away for days: the oldest events beyond `backlogLimit` go, and the journal says so.
    private func trimBacklog(after seq: Int64, newest: Int64, now: Double) throws {
        guard newest - seq > Int64(Self.backlogLimit) + 100 else { return }
        let dropped = try database.trimEventBacklog(after: seq, keep: Self.backlogLimit)
        guard dropped > 0 else { return }
        let text = "mqtt: \(dropped) events the broker never acknowledged were dropped (more than \(Self.backlogLimit) waiting); the seq numbers show the gap"
        logger.warning("\(text)")
        database.journal(JournalEntry(.system, text), at: now)
    }

    /// The retained state: `key` is what is published at once when it changes (the workflow's
    /// state, the bike's context, the sensor), `position` what is published at most every
    /// `state_interval_s`.
    private func stateFacts(_ state: WorkflowState, emergency: Int?, protection: Protection, contacts: [Contact]?, now: Double) -> (json: String, key: String, position: String) {
        var key = JSONLine()
        key.add("state", Self.stateName(state))
        if let id = emergency { key.add("emergency", id) }
        // The workflow's verdict, as the buzzer, `status` and the page have it.
        key.add("protection", protection.level.rawValue)
        if !protection.reasons.isEmpty { key.add("reasons", protection.reasons.joined(separator: "; ")) }
        key.add("context", bike.context.rawValue)
        // Each contact's standing, in order (confirmed, waiting…): never a name or a number.
        if let contacts {
            key.addRaw("contacts", "[" + contacts.map { "\"\($0.standing.name)\"" }.joined(separator: ",") + "]")
        }
        let s = sensor.snapshot
        let seeing = !s.lastSampleWall.isNaN && now - s.lastSampleWall <= 2
        key.add("sensor", seeing ? "ok" : "no samples")
        let fix = whereabouts.lastFix
        var position = fix?.fleetFacts(now: nil) ?? JSONLine()
        if let speed = fix?.speed { position.add("speed", speed * 3.6, decimals: 0) }
        var line = key
        line.append(contentsOf: position)
        if let fix { line.add("fix_age_s", max(0, now - fix.time), decimals: 0) }
        line.add("rate_hz", s.rateHz, decimals: 0)
        line.add("t", now, decimals: 0)
        return (line.text, key.text, position.text)
    }

    /// A location as OwnTracks' apps and recorder read it (`_type: location`; `vel` in km/h).
    static func ownTracks(_ fix: Fix, device: String) -> String {
        var line = JSONLine()
        line.add("_type", "location")
        line.add("tid", String(device.suffix(2)))
        line.add("lat", fix.latitude, decimals: 6)
        line.add("lon", fix.longitude, decimals: 6)
        line.add("tst", Int(fix.time))
        if let accuracy = fix.accuracy { line.add("acc", Int(accuracy.rounded())) }
        if let speed = fix.speed { line.add("vel", Int((speed * 3.6).rounded())) }
        if let track = fix.track { line.add("cog", Int(track.rounded())) }
        line.add("t", "p")
        return line.text
    }

    /// The workflow's state as the contract names it (snake case, like the events).
    static func stateName(_ state: WorkflowState) -> String {
        state.rawValue.reduce(into: "") { name, c in name += c.isUppercase ? "_" + c.lowercased() : String(c) }
    }

    static func hostname() -> String {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return "rideguard" }
        let text = String(cString: name)
        return text.isEmpty ? "rideguard" : text.filter { !"/+#".contains($0) }
    }
}
