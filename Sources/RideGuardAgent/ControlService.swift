// SPDX-License-Identifier: Apache-2.0
import Dispatch
import Logging
import RideGuardCore
import SerialModem
import ServiceLifecycle
import Storage
import Synchronization
import AgentControl

/// The control socket (`rideguard status`, `ctl press`, `ctl record`): a request in, a reply out. A
/// socket that cannot be opened does not stop the agent: it goes on detecting, and says so.
struct ControlService: Service, CustomStringConvertible {
    let path: String
    let emergency: EmergencyService
    let sensor: SensorHealth
    let simulatedIMU: Bool
    /// The button's twin, or nil when the button is a real GPIO line (pressed by hand).
    let button: SimulatedButton?
    let gpioProblems: PartProblems
    let bike: BikeContext
    let whereabouts: Whereabouts
    /// The real modem, whose health `status` shows; nil for its simulated twin.
    let modem: Modem?
    let calls: CallSwitch
    let fleet: FleetStatus
    let recorder: Recorder
    let buzzer: BuzzerPlayer
    let selfTest: SelfTest
    let database: RideGuardDatabase
    let clock: any ServiceClock
    let logger: Logger
    var description: String { "control socket" }

    func run() async throws {
        let socket: ControlSocket
        do {
            socket = try ControlSocket(path: path) { request in answer(request) }
        } catch {
            let text = "\(error) (status and ctl press unavailable; detection goes on)"
            logger.error("\(text)")
            database.journal(JournalEntry(.system, text), at: clock.now())
            try? await gracefulShutdown()
            return
        }
        try? await gracefulShutdown()
        socket.close()
    }

    /// On the client's own thread, which waits for the reply.
    private func answer(_ request: ControlRequest) -> ControlReply {
        let box = Mutex(ControlReply())
        let done = DispatchSemaphore(value: 0)
        Task {
            let reply = await respond(request)
            box.withLock { $0 = reply }
            done.signal()
        }
        done.wait()
        return box.withLock { $0 }
    }

    private func respond(_ request: ControlRequest) async -> ControlReply {
        switch request {
        case .press(let hold):
            guard let button else { return .failed("the button is a real GPIO line: press it") }
            Task { await button.press(hold: min(max(hold, 0.05), 30)) }
            return ControlReply(ok: true, holdSeconds: hold)
        case .stopRecording:
            return recorder.stop().map { ControlReply(ok: true, path: $0) } ?? .failed("no recording is running")
        case .record(let name, let seconds):
            switch recorder.start(name: name, seconds: seconds) {
            case .success(let path): return ControlReply(ok: true, path: path)
            case .failure(let error): return .failed(error.reason)
            }
        case .status:
            return ControlReply(status: await status())
        case .buzz:
            let state = await emergency.state
            guard !WorkflowState.emergencyUnderWay.contains(state) else { return .failed("not during an emergency (\(state.rawValue))") }
            await buzzer.check(.acknowledge)
            return ControlReply(ok: true)
        case .selfTest:
            switch await selfTest.run(now: clock.now()) {
            case .success(let said): return ControlReply(ok: true, said: said)
            case .failure(let refusal): return .failed(refusal.text)
            }
        }
    }

    private func status() async -> AgentStatus {
        let snapshot = await emergency.snapshot
        let button = await emergency.button
        let now = clock.now()
        let s = sensor.snapshot
        let modemStatus: AgentStatus.Modem
        if let modem { modemStatus = AgentStatus.Modem(await modem.health) } else { modemStatus = .simulated }
        let contacts = (try? database.contacts()) ?? []
        return AgentStatus(
            state: snapshot.state, protection: snapshot.protection, countdownSeconds: snapshot.countdownRemaining(at: now), buzzer: snapshot.buzzer,
            sensor: AgentStatus.Sensor(simulated: simulatedIMU, samples: s.samples, rateHz: s.rateHz,
                                       lastSampleAgeSeconds: s.lastSampleWall.isNaN ? nil : now - s.lastSampleWall,
                                       gravityG: s.gravityG.isFinite ? s.gravityG : nil, lastFault: s.lastFault,
                                       rejectedSamples: s.rejected, device: s.device, readMode: s.readMode, deadAxis: s.deadAxis),
            gpio: AgentStatus.GPIO(simulated: self.button != nil, problem: gpioProblems.summary, buttonDown: button.down, lastPress: button.lastPress),
            fix: whereabouts.lastFix.map { AgentStatus.Position(latitude: $0.latitude, longitude: $0.longitude, ageSeconds: now - $0.time) },
            modem: modemStatus, pendingMessages: (try? database.outbox.countPending()) ?? -1,
            contacts: contacts.count, contactLines: contacts.map { AgentStatus.ContactLine($0, now: now) }, calls: calls.status, acknowledgement: snapshot.acknowledgement,
            bike: bike.status, storageProblem: database.storageProblem(), fleet: fleet.snapshot)
    }
}

extension AgentStatus.ContactLine {
    init(_ contact: Contact, now: Double) {
        self.init(name: contact.name, state: contact.standing.name, since: contact.standing.since, summary: contact.standing.summary(now: now))
    }
}
