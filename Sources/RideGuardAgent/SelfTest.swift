// SPDX-License-Identifier: Apache-2.0
import Logging
import RideGuardCore
import SerialModem
import ServiceLifecycle
import Storage
import SystemTime

/// The self-test SMS to the rider's own phone (`SelfTestSchedule`): queued when due or when the
/// rider asks (`rideguard selftest`, the page), its fate noted from the outbox. A test that could
/// not be sent degrades the protection until one goes out.
final class SelfTest: Sendable {
    private let database: RideGuardDatabase
    private let emergency: EmergencyService
    private let modem: Modem?
    private let whereabouts: Whereabouts
    private let sensor: SensorHealth
    private let messages: AgentConfiguration.Messages
    private let doorbell: Doorbell
    private let clock: any ServiceClock
    private let logger: Logger

    init(database: RideGuardDatabase, emergency: EmergencyService, modem: Modem?, whereabouts: Whereabouts, sensor: SensorHealth,
         messages: AgentConfiguration.Messages, doorbell: Doorbell, clock: any ServiceClock, logger: Logger) {
        self.database = database
        self.emergency = emergency
        self.modem = modem
        self.whereabouts = whereabouts
        self.sensor = sensor
        self.messages = messages
        self.doorbell = doorbell
        self.clock = clock
        self.logger = logger
    }

    /// At start: the first run is noted, and a failure from before the restart degrades again.
    func start() async {
        do {
            try database.noteSelfTestFirstRun(clock.now())
            if let problem = try database.selfTestRecord().problem {
                await emergency.handle(.health(.selfTest, problem: problem, at: clock.now()))
            }
        } catch {
            logger.error("self-test: its record cannot be read or written (\(error)); tried again in a minute")
        }
    }

    /// Queues the scheduled test when it is due and may go.
    func runIfDue() async {
        let now = clock.now()
        guard let record = try? database.selfTestRecord(), let firstRun = record.firstRun,
              SelfTestSchedule.isDue(now: now, days: messages.selfTestDays, firstRun: firstRun, lastSent: record.lastSent, lastQueued: record.lastQueued)
        else { return }
        switch await run(now: now) {
        case .success: break
        case .failure(let refusal):
            // Not during an emergency, nor while one waits: the next minute asks again. Without the
            // rider's phone there is nobody to send it to, which weakens the protection.
            if refusal.noPhone { fail(refusal.text) }
        }
    }

    struct Refusal: Error {
        var text: String
        var noPhone = false
    }

    /// Queues a test now (the rider asked), or says why not.
    func run(now: Double) async -> Result<String, Refusal> {
        let state = await emergency.state
        do {
            let refusal = SelfTestSchedule.refusal(now: now, emergency: WorkflowState.emergencyUnderWay.contains(state),
                                                   waiting: try database.outbox.hasWaiting(.selfTest),
                                                   lastSent: try database.selfTestRecord().lastSent, time: Times.localHourMinute)
            if let refusal { return .failure(Refusal(text: refusal)) }
            let profile = try database.profile()
            guard let phone = profile.phone else {
                return .failure(Refusal(text: "no phone of the rider's to send it to (rideguard profile set --phone NUMBER)", noPhone: true))
            }
            // Written again as it leaves (`body(now:)`): what is queued is what was so now.
            let body = MessageComposer.selfTest(await report(now: now, disregarding: []), language: profile.language ?? messages.language,
                                                crashDate: Self.crashDate)
            try database.queueSelfTest(to: phone, body: body, now: now)
            doorbell.ring()
            logger.info("self-test: queued to the rider's phone (\(PhoneNumber.mask(phone)))")
            return .success("a self-test SMS is on its way to \(PhoneNumber.mask(phone))")
        } catch {
            return .failure(Refusal(text: "the database refused it: \(error)"))
        }
    }

    /// The test's words as it leaves: how things stand at that moment, in the rider's language
    /// then. The modem, the SIM and the SMS path work (it is going out), so their problems, and
    /// the test's own, are not told: they would be the very fault its arrival disproves. nil when
    /// the profile cannot be read (the words queued go).
    func body(now: Double) async -> String? {
        guard let profile = try? database.profile() else { return nil }
        return MessageComposer.selfTest(await report(now: now, disregarding: [.modem, .sim, .sms, .selfTest]),
                                        language: profile.language ?? messages.language, crashDate: Self.crashDate)
    }

    private static func crashDate(_ time: Double) -> String { String(Times.iso8601(time).prefix(10)) }

    /// What the test says: protection (without the problems of `parts`), contacts, SIM, fix,
    /// sensor, last crash.
    private func report(now: Double, disregarding parts: Set<HealthPart>) async -> SelfTestReport {
        let contacts = (try? database.contacts()) ?? []
        var modemText: String?
        if let modem {
            // As it leaves, the network and signal asked now: the bring-up that lets it go does not read them.
            let health = parts.isEmpty ? await modem.health : await modem.checkHealth()
            modemText = ([health.registration?.description ?? "unknown"] + [health.signalDBm.map { "\($0) dBm" }].compactMap { $0 })
                .joined(separator: ", ")
        }
        let s = sensor.snapshot
        return SelfTestReport(protection: await emergency.protection(disregarding: parts), contacts: contacts.count,
                              confirmed: contacts.filter(\.standing.isConfirmed).count, modem: modemText,
                              fixAge: whereabouts.lastFix.map { max(0, now - $0.time) },
                              sensorRateHz: now - s.lastSampleWall <= 2 ? s.rateHz : nil,
                              lastCrash: try? database.lastCrashDetected())
    }

    /// How the test's SMS fared (from the outbox).
    func noted(_ outcome: SendOutcome) {
        switch outcome {
        case .sent:
            do { try database.noteSelfTest(sentAt: clock.now(), problem: nil) } catch {
                logger.error("self-test: sent, but the database refused to note it (\(error)): the next may come early")
            }
            emergency.post(.event(.health(.selfTest, problem: nil, at: clock.now())))
        case .gaveUp(let error):
            fail(error?.reason ?? "its message was damaged on the card")
        case .willRetry(let error):
            fail(error.reason + " (retrying)")
        }
    }

    private func fail(_ reason: String) {
        let problem = "the self-test SMS could not be sent: \(reason)"
        if (try? database.selfTestRecord().problem) != problem { try? database.noteSelfTest(sentAt: nil, problem: problem) }
        emergency.post(.event(.health(.selfTest, problem: problem, at: clock.now())))
    }
}

/// Asks the self-test whether it is due, once a minute.
struct SelfTestService: Service, CustomStringConvertible {
    static let everySeconds = 60.0

    let selfTest: SelfTest
    let clock: any ServiceClock
    var description: String { "self-test" }

    func run() async throws {
        await selfTest.start()
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await selfTest.runIfDue()
                try await clock.sleep(until: clock.now() + Self.everySeconds)
            }
        }
    }
}
