import FoundationEssentials
import Logging
import OsmAnd
import RideGuardCore
import ServiceLifecycle
import Storage
import SystemCalls

/// `traccar:` — the bike on a Traccar server, with its OsmAnd protocol (README, "Fleets and
/// groups"): a position every `interval_s` while riding and every `parked_interval_s` otherwise,
/// `alarm=fallDown` once when a crash's alert goes out and `alarm=sos` once for the rider's SOS.
/// The alarms are read from the events table with a cursor of their own, moved only when Traccar
/// answered 200: a server away for hours gets them, in order, when it is back. Each request runs on
/// a thread of its own (libcurl blocks): nothing else waits on the server.
struct TraccarService: Service, CustomStringConvertible {
    let settings: AgentConfiguration.Traccar
    let whereabouts: Whereabouts
    let bike: BikeContext
    let database: RideGuardDatabase
    let clock: any ServiceClock
    let logger: Logger
    var description: String { "traccar" }

    private struct Event: Decodable {
        var event: String
        var trigger: String?
        var t: Double
        var lat: Double?
        var lon: Double?
        var accuracy_m: Double?
    }

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            try await serve(OsmAndClient(url: settings.url, caFile: settings.caFile))
        }
    }

    private func serve(_ client: OsmAndClient) async throws {
        let device = settings.device ?? FleetService.hostname()
        var cursor = try await database.startCursor("traccar", clock: clock, logger: logger)
        var lastPosition: (sent: Double, fix: Fix)?
        var problem: String?
        var delay = 1.0
        while true {
            let now = clock.now()
            var failed: String?
            // The alarms first, in the order they came.
            for stored in (try? database.events(after: cursor, limit: 20)) ?? [] {
                if let event = try? JSONDecoder().decode(Event.self, from: Data(stored.json.utf8)), event.event == "alerting" {
                    let alarm = event.trigger == "sos" ? "sos" : "fallDown"
                    let fix = whereabouts.lastFix
                    let report = OsmAndReport(device: device, time: event.t, latitude: event.lat ?? fix?.latitude ?? 0,
                                              longitude: event.lon ?? fix?.longitude ?? 0, accuracy: event.accuracy_m, alarm: alarm)
                    if event.lat == nil && fix == nil { logger.warning("traccar: the \(alarm) alarm goes without a position (no fix yet)") }
                    if let error = await send(report, client) {
                        failed = error
                        break
                    }
                    logger.info("traccar: alarm \(alarm) sent")
                }
                cursor = stored.seq
                try? database.setEventCursor("traccar", cursor)
            }
            // The position, when due and new.
            if failed == nil, let fix = whereabouts.lastFix {
                let interval = bike.context == .riding ? settings.intervalSeconds : settings.parkedIntervalSeconds
                if lastPosition.map({ now - $0.sent >= interval && $0.fix != fix }) ?? true {
                    let report = OsmAndReport(device: device, time: fix.time, latitude: fix.latitude, longitude: fix.longitude,
                                              speedKnots: fix.speed.map { $0 * 3600 / 1852 }, bearing: fix.track, altitude: fix.altitude,
                                              accuracy: fix.accuracy)
                    failed = await send(report, client)
                    if failed == nil { lastPosition = (now, fix) }
                }
            }
            if let failed {
                if failed != problem { logger.warning("traccar: \(failed); trying again (SMS alerts are not affected)") }
                problem = failed
                delay = min(delay * 2, 60)
            } else {
                if problem != nil { logger.info("traccar: \(settings.url) answers again") }
                problem = nil
                delay = 1
            }
            try await clock.sleep(until: now + delay)
        }
    }

    /// One request, on a thread of its own; nil when Traccar answered 200, else what went wrong.
    private func send(_ report: OsmAndReport, _ client: OsmAndClient) async -> String? {
        await withCheckedContinuation { (done: CheckedContinuation<String?, Never>) in
            startThread("rg-traccar") {
                do {
                    try client.send(report)
                    done.resume(returning: nil)
                } catch {
                    done.resume(returning: "\(error)")
                }
            }
        }
    }
}
