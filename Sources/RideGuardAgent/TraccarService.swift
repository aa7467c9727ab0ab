// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Logging
import OsmAnd
import RideGuardCore
import ServiceLifecycle
import Storage
import SystemCalls

/// `traccar:` — the bike on a Traccar server, with its OsmAnd protocol (docs/fleet.md): a
/// position every `interval_s` while riding and every `parked_interval_s` otherwise,
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

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            // A CA someone else could have planted would let them stand in for the server.
            var said: String?
            while let caFile = settings.caFile, let problem = PrivateFiles.untrusted(caFile) {
                let text = "traccar: not using \(caFile): \(problem); trying again every minute (SMS alerts are not affected)"
                if text != said {
                    logger.error("\(text)")
                    database.journal(JournalEntry(.system, text), at: clock.now())
                    said = text
                }
                try await clock.sleep(until: clock.now() + 60)
            }
            try await serve(OsmAndClient(url: settings.url, caFile: settings.caFile))
        }
    }

    private func serve(_ client: OsmAndClient) async throws {
        let device = settings.device ?? FleetService.hostname()
        var cursor = try await EventCursor.start("traccar", database: database, clock: clock, logger: logger)
        var lastPosition: (sent: Double, fix: Fix)?
        var problem: String?
        // Asked every second; after a failure 2 s, doubling to 60 s.
        var backoff = Backoff(first: 2, limit: 60)
        var delay = 1.0
        while true {
            try Task.checkCancellation()
            let now = clock.now()
            var failed: String?
            // The alarms first, in the order they came.
            for event in cursor.events(limit: 20, at: now) {
                if event.name == .alerting {
                    let alarm = event.trigger == .sos ? "sos" : "fallDown"
                    // The event carries the position it had (none before the first fix).
                    let report = OsmAndReport(device: device, time: event.t, latitude: event.place?.latitude, longitude: event.place?.longitude,
                                              accuracy: event.place?.accuracy, alarm: alarm)
                    if let error = await send(report, client) {
                        failed = error
                        break
                    }
                    logger.info("traccar: alarm \(alarm) sent")
                }
                cursor.move(to: event.seq, at: now)
            }
            // The position, when due and new.
            if failed == nil, let fix = whereabouts.lastFix {
                let interval = bike.context == .riding ? settings.intervalSeconds : settings.parkedIntervalSeconds
                if isDue(since: lastPosition?.sent, now: now, every: interval) && lastPosition?.fix != fix {
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
                delay = backoff.next()
            } else {
                if problem != nil { logger.info("traccar: \(settings.url) answers again") }
                problem = nil
                backoff.reset()
                delay = 1
            }
            try await clock.sleep(until: now + delay)
        }
    }

    /// One request, on a thread of its own (libcurl blocks up to its 15 s timeout); nil when Traccar
    /// answered 200, else what went wrong. The agent stopping does not wait for it: the request is
    /// left to its thread, and counts as not answered (an alarm is sent again at the next start).
    private func send(_ report: OsmAndReport, _ client: OsmAndClient) async -> String? {
        let outcome = await onOwnThread("rg-traccar") { () -> String? in
            do {
                try client.send(report)
                return nil
            } catch {
                return "\(error)"
            }
        }
        guard let outcome else { return "stopping before \(settings.url) answered" }
        return outcome
    }
}
