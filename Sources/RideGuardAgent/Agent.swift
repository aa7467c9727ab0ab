import Foundation
import GPIOLines
import GPSDClient
import IIOSensor
import Logging
import RideGuardCore
import SerialModem
import ServiceLifecycle
import Storage
import Synchronization

/// `rideguard run`: the sampler feeds the detector on its own thread; crashes, button gestures,
/// timers and delivery reports go to the emergency workflow; alerts go through the durable outbox
/// to the modem. Every part is real or simulated by configuration, and a failing part is reported,
/// journaled and retried while detection goes on.
public final class Agent: Sendable {
    public let configuration: AgentConfiguration
    let database: RideGuardDatabase
    let clock: any ServiceClock
    let say: @Sendable (String) -> Void
    let service: EmergencyService
    let player: BuzzerPlayer
    let location = Mutex(LocationStore())
    /// gpsd's latest speed, put on every sample the sampler reads (the detector's GPS rules).
    let speeds = SpeedSnapshot()
    let stopping = Atomic<Bool>(false)
    /// A recording asked for with `rideguard ctl record`: the sampler collects a second of samples at
    /// a time and hands it to `files`, so the agent goes on protecting while it records.
    struct Recording {
        var file: RecordingFile
        var seconds: Double
        var until = Double.nan
        var nextHandoff = -Double.infinity
        var batch: [IMUSample] = []
    }
    let recording = Mutex<Recording?>(nil)
    /// Whether `recording` holds one: checked per sample without taking the lock; changed only under it.
    let recordingActive = Atomic<Bool>(false)
    /// Trace files (the crash window, recordings) are written here, never on the sampler's thread:
    /// a slow SD card holding the sampler for 0.5 s would look like a stalled IMU.
    let files = DispatchQueue(label: "rideguard.trace-files")
    struct RecordingRefused: Error {
        var reason: String
    }
    /// Set while the IMU sends nothing (stalled, or cannot be opened).
    let imuDown = Atomic<Bool>(false)
    let group = Mutex<ServiceGroup?>(nil)
    /// What `rideguard status` shows about the sensor.
    struct SensorStatus: Sendable {
        var samples = 0
        var lastSampleWall = Double.nan
        var windowStart = Double.nan
        var windowSamples = 0
        var rateHz = 0.0
        var lastFault: String?
        /// The low-passed specific force, g: about 1 at rest.
        var gravityG = Double.nan
        var lastWatchdogPing = -Double.infinity
    }
    let sensor = Mutex(SensorStatus())
    /// Rung when a message is queued: the outbox's sender waits on it instead of polling.
    let outboxBell = Doorbell()
    let modemHealth = Mutex<Modem?>(nil)
    /// Why the buzzer or the button cannot be used, by part, for `status` and `doctor`.
    final class PartProblems: Sendable {
        private let byPart = Mutex<[String: String]>([:])
        func set(_ part: String, _ problem: String?) { byPart.withLock { $0[part] = problem } }
        /// "button: …; buzzer: …", or nil when every part works.
        var summary: String? {
            let all = byPart.withLock { $0 }
            return all.isEmpty ? nil : all.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; ")
        }
    }
    let gpioProblems = PartProblems()

    /// `say` gets the lines a person watching the terminal (or journald) reads.
    public init(configuration: AgentConfiguration, clock: any ServiceClock = SystemServiceClock(),
                say: @escaping @Sendable (String) -> Void) throws {
        self.configuration = configuration
        self.clock = clock
        self.say = say
        database = try RideGuardDatabase(path: configuration.database)
        let output: any BuzzerOutput
        if configuration.gpio.simulated {
            output = SimulatedBuzzer()
        } else {
            let address = Agent.address(configuration.gpio.buzzer)
            let open: @Sendable () throws(GPIOError) -> GPIOLine = { () throws(GPIOError) -> GPIOLine in try GPIOLine.output(address) }
            let line: GPIOLine?
            do {
                line = try open()
            } catch {
                say("buzzer unavailable (\(error)): alarms are silent until it can be requested")
                gpioProblems.set("buzzer", "\(error)")
                line = nil
            }
            let problems = gpioProblems
            output = GPIOBuzzer(line: line, open: open) { event in
                switch event {
                case .lost(let error):
                    say("buzzer: \(error); requesting it again")
                    problems.set("buzzer", "\(error)")
                case .back:
                    say("buzzer back: \(address) works again")
                    problems.set("buzzer", nil)
                }
            }
        }
        player = BuzzerPlayer(output: output, clock: clock) { pattern in
            if configuration.gpio.simulated { say("buzzer: \(pattern.meaning)") }
        }
        let store = WorkflowStore(database: database)
        let database = self.database
        let holder = Mutex<Agent?>(nil)
        service = EmergencyService(
            configuration: configuration.workflow, store: store, clock: clock, buzzer: player,
            outputs: EmergencyService.Outputs(
                queueMessages: { kind, recipients in await holder.withLock { $0 }?.queue(kind, to: recipients) },
                cancelQueuedAlerts: { _ = try? database.outbox.cancelPending(kind: MessageKind.alert.rawValue, now: clock.now()) },
                journal: { entry in
                    try? database.journal(entry, at: clock.now())
                    say("\(entry.kind): \(entry.text)")
                },
                tracking: { on in say(on ? "tracking the rider's position" : "tracking stopped") }))
        holder.withLock { $0 = self }
    }

    public static func address(_ text: String) -> GPIOLineAddress {
        let parts = text.split(separator: ":")
        if parts.count == 2, let offset = UInt32(parts[1]) { return .chip(String(parts[0]), offset: offset) }
        return .named(text)
    }

    // MARK: - Running

    /// Runs every part as a service of one ServiceGroup until `stop()`, or SIGTERM or SIGINT when
    /// `stopOnSignals` (systemd stops the service with SIGTERM; Ctrl-C is SIGINT). The parts start in order — the emergency
    /// workflow (resuming one saved before a restart), the outbox sender, gpsd, the button, the
    /// sampler, the control socket, arming — and stop in the reverse order, so the workflow saves
    /// its state last.
    public func run(stopOnSignals: Bool = false) async {
        // A peer that hangs up (a status client, gpsd, iiod) is an I/O error to handle, never a reason to die.
        signal(SIGPIPE, SIG_IGN)
        let parts: [any Service] = [
            Part("emergency workflow") { [self] in
                await service.resume()
                let inputs = Task { await service.run() }
                return { [self] in
                    service.finishInputs()
                    await inputs.value
                    await service.shutdown()
                }
            },
            Part("outbox sender") { [self] in
                let task = startSender()
                return {
                    task.cancel()
                    await task.value
                }
            },
            Part("gpsd") { [self] in startLocation() },
            Part("button") { [self] in startButton() },
            Part("sampler") { [self] in startSensors() },
            Part("control socket") { [self] in
                do {
                    let control = try ControlSocket(path: configuration.controlSocket) { [self] request in answer(request) }
                    return { control.close() }
                } catch {
                    let text = "\(error) (status and ctl press unavailable; detection goes on)"
                    say(text)
                    try? database.journal(JournalEntry("system", text), at: clock.now())
                    return {}
                }
            },
            Arming(agent: self),
        ]
        var settings = ServiceGroupConfiguration(services: parts, gracefulShutdownSignals: stopOnSignals ? [.sigterm, .sigint] : [],
                                                 logger: Logger(label: "rideguard", factory: { _ in SwiftLogNoOpLogHandler() }))
        // systemd waits 90 s before SIGKILL; a part that has not stopped after 10 s is cancelled.
        settings.maximumGracefulShutdownDuration = .seconds(10)
        let group = ServiceGroup(configuration: settings)
        StartupMemory.release()   // the configuration, the database and the command line are done with
        self.group.withLock { $0 = group }
        if stopping.load(ordering: .acquiring) { await group.triggerGracefulShutdown() }
        do {
            try await group.run()
        } catch {
            say("stopped on an error: \(error)")
            return
        }
        say("stopped")
    }

    /// Graceful shutdown, as on SIGTERM: the saved state stays for the next start.
    public func stop() {
        stopping.store(true, ordering: .releasing)
        if let group = group.withLock({ $0 }) { Task { await group.triggerGracefulShutdown() } }
    }

    /// Arms, or says why it cannot and checks again every 10 s (a contact or a message added while
    /// the agent runs arms it, no restart needed); then sleeps until the group shuts down.
    func keepArmed() async {
        try? await cancelWhenGracefulShutdown { [self] in
            var problems = armingProblems()
            await arm(problems: problems)
            while !problems.isEmpty {
                try await clock.sleep(until: clock.now() + 10)
                problems = armingProblems()
                if problems.isEmpty { await arm(problems: problems) }
            }
        }
        try? await gracefulShutdown()
        stopping.store(true, ordering: .releasing)
        SystemdNotify.send("STOPPING=1")
        say("stopping")
    }

    public var state: WorkflowState { get async { await service.state } }

    /// What stops the agent from protecting the rider: nobody to alert, or nothing to tell them.
    func armingProblems() -> [String] {
        var problems: [String] = []
        if ((try? database.contacts()) ?? []).isEmpty { problems.append("no emergency contact (rideguard contacts add NAME NUMBER)") }
        if (try? database.profile().message) == nil { problems.append("no alert message (rideguard message set \"...\")") }
        return problems
    }

    /// Arms when there are no problems, otherwise says why not (journal, buzzer fault pattern,
    /// systemd status). systemd hears READY=1 only once the agent protects the rider, or carries on
    /// with an emergency resumed after a restart.
    func arm(problems: [String]) async {
        await service.handle(.arm(at: clock.now(), problems: problems))
        let state = await service.state
        if state == .armed {
            SystemdNotify.send("READY=1\n" + armedStatus)
        } else if state != .disarmed {
            SystemdNotify.send("READY=1\nSTATUS=emergency in progress (\(state.rawValue))")
        } else if !problems.isEmpty {
            SystemdNotify.send("STATUS=not protecting: " + problems.joined(separator: "; "))
        }
    }

    /// What systemd shows while armed.
    private var armedStatus: String {
        imuDown.load(ordering: .acquiring)
            ? "STATUS=armed but blind: the IMU sends no sample, crashes cannot be detected (rideguard doctor)"
            : "STATUS=protecting the rider"
    }

    private func imuWentDown() {
        if !imuDown.exchange(true, ordering: .acquiringAndReleasing) { Task { await reportArmedStatus() } }
    }

    /// `systemctl status` follows the IMU: armed and seeing, or armed but blind.
    func reportArmedStatus() async {
        if await service.state == .armed { SystemdNotify.send(armedStatus) }
    }

    /// The simulated button (and `rideguard ctl press`): pressed now, released after `hold` seconds.
    public func press(hold: Double) async {
        service.post(.buttonEdge(pressed: true, at: clock.now()))
        try? await clock.sleep(until: clock.now() + hold)
        service.post(.buttonEdge(pressed: false, at: clock.now()))
    }

    // MARK: - Parts

    private func startSensors() -> @Sendable () -> Void {
        let detector = Mutex(CrashDetector(configuration: configuration.detector))
        let ring = Mutex(SampleRing(seconds: 60, rateHz: max(configuration.imu.rateHz, 1000)))
        let pendingSave = Mutex<Double?>(nil)
        let nextProgress = Mutex(-Double.infinity)
        let simulated = configuration.imu.simulated
        let onSample: @Sendable (IMUSample) -> Void = { [self] incoming in
            let now = clock.now()
            var sample = incoming
            if sample.speed == nil { sample.speed = speeds.fresh(at: now) }
            var events: [DetectorEvent] = []
            let state = detector.withLock { d -> CrashDetector.State in
                d.process(sample) { events.append($0) }
                return d.state
            }
            if simulated, sample.t >= nextProgress.withLock({ $0 }) {
                nextProgress.withLock { $0 = sample.t + 5 }
                say("ride t=\(DecimalFormat.string(sample.t, decimals: 0)) s: \(state.phase.rawValue), \(DecimalFormat.string(state.smoothedG, decimals: 2)) g, posture \(DecimalFormat.string(state.postureDegrees, decimals: 0))°")
            }
            ring.withLock { $0.append(sample) }
            if recordingActive.load(ordering: .relaxed) { record(sample) }
            if imuDown.load(ordering: .relaxed), imuDown.exchange(false, ordering: .acquiringAndReleasing) {
                say("IMU: samples again")
                Task { await self.reportArmedStatus() }
            }
            let ping = sensor.withLock { s -> Bool in
                s.samples += 1
                s.lastSampleWall = now
                s.gravityG = state.smoothedG
                if s.windowStart.isNaN || now - s.windowStart >= 5 {
                    if !s.windowStart.isNaN { s.rateHz = Double(s.windowSamples) / (now - s.windowStart) }
                    s.windowStart = now
                    s.windowSamples = 0
                }
                s.windowSamples += 1
                guard now - s.lastWatchdogPing >= 1 else { return false }
                s.lastWatchdogPing = now
                return true
            }
            // The watchdog is fed from the sampler's path: a hung sampler gets the service restarted.
            if ping { SystemdNotify.send("WATCHDOG=1") }
            if let crashAt = pendingSave.withLock({ $0 }), sample.t >= crashAt + 30 {
                pendingSave.withLock { $0 = nil }
                let window = ring.withLock { $0.window(from: crashAt - 30, to: crashAt + 30) }
                files.async { self.saveTrace(window, crashAt: crashAt) }
            }
            for event in events {
                if case .crashDetected(let t, _) = event { pendingSave.withLock { $0 = t } }
                detected(event)
            }
        }
        // A stream that ends (or an agent that stops) before 30 s after a crash saves what it has.
        let saveWhatThereIs: @Sendable () -> Void = { [self] in
            finishRecording()
            if let crashAt = pendingSave.withLock({ value -> Double? in defer { value = nil }; return value }) {
                let window = ring.withLock { $0.window(from: crashAt - 30, to: crashAt + 30) }
                files.async { self.saveTrace(window, crashAt: crashAt) }
            }
            files.sync {}                  // everything written before the agent goes on (or exits)
        }
        if configuration.imu.simulated {
            let player = TracePlayer(path: configuration.imu.trace ?? "", speed: configuration.imu.speed, onSample: onSample) { [self] problem in
                say(problem.map { "simulated IMU: \($0)" } ?? "simulated IMU: end of the trace")
                saveWhatThereIs()
            }
            say("IMU: playing \(configuration.imu.trace ?? "") ×\(DecimalFormat.string(configuration.imu.speed, decimals: 1))")
            return {
                player.stop()
                saveWhatThereIs()
            }
        }
        var sampler = SamplerConfiguration(uri: configuration.imu.uri, device: configuration.imu.device, rateHz: configuration.imu.rateHz)
        sampler.stallSeconds = 0.5
        let iio = IIOSampler(configuration: sampler, onSample: onSample) { [self] event in
            switch event {
            case .opened(let device, let gyro, _, let rate, _):
                say("IMU: \(device) at \(Int(rate)) Hz\(gyro ? " with gyro" : "")")
            case .stalled(let seconds):
                sensor.withLock { $0.lastFault = "stalled" }
                imuWentDown()
                service.post(.event(.sensorFault(at: clock.now(), summary: "the IMU stalled: no sample for \(DecimalFormat.string(seconds, decimals: 1)) s")))
            case .failed(let reason, let retry):
                imuWentDown()
                say("IMU: \(reason); retrying in \(DecimalFormat.string(retry, decimals: 1)) s")
            case .dropped, .rateOff:
                break
            }
        }
        return {
            iio.stop()
            saveWhatThereIs()
        }
    }

    /// One sample into the recording, with its GPS speed (the `speed_mps` column). Once a second
    /// (trace time) the batch goes to `files`; no I/O here.
    private func record(_ sample: IMUSample) {
        let handoff = recording.withLock { r -> (batch: [IMUSample], file: RecordingFile, last: Bool)? in
            guard var current = r else { return nil }
            if current.until.isNaN { current.until = sample.t + current.seconds }
            current.batch.append(sample)
            let last = sample.t >= current.until
            guard last || sample.t >= current.nextHandoff else {
                r = current
                return nil
            }
            let batch = current.batch
            current.batch.removeAll(keepingCapacity: true)
            current.nextHandoff = sample.t + 1
            r = last ? nil : current
            if last { recordingActive.store(false, ordering: .relaxed) }
            return (batch, current.file, last)
        }
        guard let handoff else { return }
        files.async { [self] in
            handoff.file.write(handoff.batch)
            if handoff.last { finished(handoff.file) }
        }
    }

    /// Ends the recording, if any: what is collected is written, and the journal says where it is.
    func finishRecording() {
        guard let current = recording.withLock({ r -> Recording? in
            defer {
                r = nil
                recordingActive.store(false, ordering: .relaxed)
            }
            return r
        }) else { return }
        files.async { [self] in
            current.file.write(current.batch)
            finished(current.file)
        }
    }

    /// On `files`.
    private func finished(_ file: RecordingFile) {
        let text = file.close()
        say(text)
        try? database.journal(JournalEntry("system", text), at: clock.now())
    }

    /// Starts a recording of `seconds` into the `recordings` folder next to the database.
    func startRecording(name: String, seconds: Double) -> Result<String, RecordingRefused> {
        guard !name.isEmpty, name.count <= 64, name.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }), !name.hasPrefix(".") else {
            return .failure(RecordingRefused(reason: "a recording's name is letters, digits, '-', '_' and '.', e.g. ride-2026-11-22"))
        }
        guard seconds > 0 && seconds <= 7200 else { return .failure(RecordingRefused(reason: "a recording lasts 1 s to 2 h")) }
        let folder = ((configuration.database as NSString).deletingLastPathComponent as NSString).appendingPathComponent("recordings")
        let path = (folder as NSString).appendingPathComponent(name.hasSuffix(".csv") ? name : name + ".csv")
        guard !FileManager.default.fileExists(atPath: path) else { return .failure(RecordingRefused(reason: "\(path) exists already")) }
        do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
            return .failure(RecordingRefused(reason: "cannot create \(folder): \(error.localizedDescription)"))
        }
        let file = RecordingFile(path: path, metadata: [
            ("rate_hz", String(Int(configuration.imu.rateHz))), ("source", "rideguard run (ctl record)"),
            ("recorded", ISO8601DateFormatter().string(from: Date())),
        ])
        let started = recording.withLock { r -> Bool in
            guard r == nil else { return false }
            r = Recording(file: file, seconds: seconds)
            recordingActive.store(true, ordering: .relaxed)
            return true
        }
        guard started else { return .failure(RecordingRefused(reason: "a recording is already running (rideguard ctl record --stop)")) }
        say("recording \(Int(seconds)) s of the IMU to \(path)")
        return .success(path)
    }

    /// On the sampler's thread: posts to the workflow in the detector's order; no I/O here.
    private func detected(_ event: DetectorEvent) {
        switch event {
        case .crashDetected(_, let evidence):
            service.post(.event(.crashDetected(at: clock.now(), summary: evidence.summary, evidence: evidence)))
        case .sensorFault(_, let fault):
            if fault.isDroppedSample { return }
            sensor.withLock { $0.lastFault = fault.summary }
            service.post(.event(.sensorFault(at: clock.now(), summary: fault.summary)))
        case .impact(_, let peak, _, _):
            let at = clock.now()
            files.async { [self] in try? database.journal(JournalEntry("detections", "impact \(DecimalFormat.string(peak, decimals: 1)) g"), at: at) }
            say("impact \(DecimalFormat.string(peak, decimals: 1)) g")
        case .uprightLearned, .rearmed:
            break
        }
    }

    private func saveTrace(_ samples: [IMUSample], crashAt: Double) {
        let folder = ((configuration.database as NSString).deletingLastPathComponent as NSString).appendingPathComponent("traces")
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let stamp = ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "-")
        let path = (folder as NSString).appendingPathComponent("crash-\(stamp).csv")
        do {
            let writer = try TraceFileWriter(path: path, hasGyro: samples.first?.gyro != nil, hasSpeed: false,
                                             metadata: [("source", "rideguard run: 30 s before and after the crash at \(crashAt) s")])
            for sample in samples { try writer.append(sample) }
            try writer.flush()
            try? database.journal(JournalEntry("detections", "saved the trace around the crash: \(path)"), at: clock.now())
        } catch {
            say("could not save the trace around the crash: \(error)")
        }
    }

    /// The button's line, watched on its own thread and reopened with backoff after an error: a
    /// loose connector must not leave the rider unable to cancel. While it is gone the fault is
    /// journaled, shown in `status` and, when armed, sounded; "button back" when it returns.
    private func startButton() -> @Sendable () -> Void {
        guard !configuration.gpio.simulated else { return {} }
        let address = Agent.address(configuration.gpio.button)
        let activeLow = configuration.gpio.buttonActiveLow
        let lost = Atomic<Bool>(false)
        let watcher = ButtonWatcher(open: { () throws(GPIOError) -> GPIOLine in
            try GPIOLine.input(address, activeLow: activeLow)
        }, onEdge: { [self] edge in
            // Kernel timestamps are monotonic; the workflow's time is the wall clock.
            var ts = timespec()
            clock_gettime(CLOCK_MONOTONIC, &ts)
            let age = Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9 - edge.monotonicSeconds
            let at = clock.now() - max(0, age)
            service.post(.buttonEdge(pressed: edge.pressed, at: at))
        }, onEvent: { [self] event in
            switch event {
            case .opened:
                gpioProblems.set("button", nil)
                if lost.exchange(false, ordering: .acquiringAndReleasing) {
                    service.post(.event(.partRecovered(at: clock.now(), summary: "button back: \(address) works again")))
                }
            case .failed(let error, let retry):
                gpioProblems.set("button", "\(error); retrying")
                say("button: \(error); retrying in \(DecimalFormat.string(retry, decimals: 1)) s")
                if !lost.exchange(true, ordering: .acquiringAndReleasing) {
                    service.post(.event(.sensorFault(at: clock.now(), summary: "button lost: \(error); retrying until it is back")))
                }
            }
        })
        return { watcher.stop() }
    }

    /// Messages queued by another process (`rideguard setup`'s test SMS) ring no doorbell: the
    /// sender looks at the outbox at least this often, seconds.
    static let outboxFallbackSeconds = 5.0

    private func startSender() -> Task<Void, Never> {
        let transport: any SMSTransport
        if configuration.modem.simulated {
            transport = SimulatedTransport(show: say)
        } else {
            var modem = ModemConfiguration(device: configuration.modem.device, baud: configuration.modem.baud, pin: configuration.modem.pin)
            modem.registrationTimeout = 60
            let real = Modem(configuration: modem) { [say] line in say(line) }
            modemHealth.withLock { $0 = real }
            transport = real
        }
        let outbox = database.outbox
        let sender = OutboxSender(outbox: outbox, modem: transport, clock: clock, log: say) { [self] message, _ in
            guard message.kind == MessageKind.alert.rawValue else { return }
            service.post(.event(.alertDelivered(contact: message.recipient, at: clock.now())))
            let pendingAlerts = ((try? outbox.all()) ?? []).contains {
                $0.kind == MessageKind.alert.rawValue && ($0.status == .pending || $0.status == .sending)
            }
            if !pendingAlerts { service.post(.event(.allAlertsDelivered(at: clock.now()))) }
        }
        let modem = modemHealth.withLock { $0 }
        return Task { [self, clock] in
            _ = try? await sender.resume()
            var nextHealthCheck = clock.now()
            var lastHealth: String?
            while !Task.isCancelled {
                var waiting = 1
                var wake = clock.now() + 1          // after a database error: try again soon
                do {
                    waiting = try await sender.sendDue()
                    wake = min(clock.now() + Self.outboxFallbackSeconds, try outbox.nextAttempt() ?? .infinity)
                } catch {}
                // The modem is checked when idle (never between a send's commands), so an
                // unplugged modem or a lost network shows in `status` and the journal before a crash.
                if let modem, waiting == 0, clock.now() >= nextHealthCheck {
                    nextHealthCheck = clock.now() + 60
                    let health = await modem.checkHealth()
                    let summary = health.problem ?? (health.registered
                        ? "ready, network \(health.registration ?? "?")"
                        : "not registered (\(health.registration ?? "unknown"))")
                    if summary != lastHealth {
                        lastHealth = summary
                        try? database.journal(JournalEntry("system", "modem: \(summary)"), at: clock.now())
                        say("modem: \(summary)" + (health.signalDBm.map { ", \($0) dBm" } ?? ""))
                    }
                }
                if modem != nil && waiting == 0 { wake = min(wake, nextHealthCheck) }
                // Until a message is queued (the doorbell), one falls due, or the modem's check.
                await outboxBell.wait(until: wake, clock: clock)
            }
        }
    }

    /// Answers one control-socket request (on the client's own thread, which waits for it).
    func answer(_ request: ControlRequest) -> ControlReply {
        let box = Mutex(ControlReply())
        let done = DispatchSemaphore(value: 0)
        Task { [self] in
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
            guard configuration.gpio.simulated else { return .failed("the button is a real GPIO line: press it") }
            Task { await press(hold: min(max(hold, 0.05), 30)) }
            return ControlReply(ok: true, holdSeconds: hold)
        case .stopRecording:
            let path = recording.withLock { $0?.file.path }
            finishRecording()
            return path.map { ControlReply(ok: true, path: $0) } ?? .failed("no recording is running")
        case .record(let name, let seconds):
            switch startRecording(name: name, seconds: seconds) {
            case .success(let path): return ControlReply(ok: true, path: path)
            case .failure(let error): return .failed(error.reason)
            }
        case .status:
            return ControlReply(status: await status())
        }
    }

    private func status() async -> AgentStatus {
        let snapshot = await service.snapshot
        let now = clock.now()
        let s = sensor.withLock { $0 }
        let modem: AgentStatus.Modem
        if let real = modemHealth.withLock({ $0 }) { modem = AgentStatus.Modem(await real.health) } else { modem = .simulated }
        return AgentStatus(
            state: snapshot.state, countdownSeconds: snapshot.countdownRemaining(at: now), buzzer: snapshot.buzzer,
            sensor: AgentStatus.Sensor(simulated: configuration.imu.simulated, samples: s.samples, rateHz: s.rateHz,
                                       lastSampleAgeSeconds: s.lastSampleWall.isNaN ? nil : now - s.lastSampleWall,
                                       gravityG: s.gravityG.isFinite ? s.gravityG : nil, lastFault: s.lastFault),
            gpio: AgentStatus.GPIO(simulated: configuration.gpio.simulated, problem: gpioProblems.summary),
            fix: location.withLock { $0.lastFix }.map { AgentStatus.Position(latitude: $0.latitude, longitude: $0.longitude, ageSeconds: now - $0.time) },
            modem: modem, pendingMessages: (try? database.outbox.countPending()) ?? -1,
            contacts: ((try? database.contacts()) ?? []).count)
    }

    /// Writes the messages the workflow asks for into the outbox, one per recipient. A database
    /// that fails is never read as "no contacts": the failure is journaled (to stdout too, the
    /// journal may be what failed), sounded, and the queueing retried on its own task, 1 s doubling
    /// to 30 s, while the emergency still wants the messages.
    func queue(_ kind: MessageKind, to recipients: Recipients) async {
        var queued: Set<String> = []
        do {
            try queueNow(kind, to: recipients, about: await service.snapshot, skipping: &queued)
        } catch {
            say("messages: could not queue the \(kind.rawValue): \(error); retrying")
            // Posted, not awaited: this runs inside the workflow's batch, which the event follows.
            service.post(.event(.messagesBlocked(at: clock.now(), summary: "could not queue the \(kind.rawValue): \(error); retrying")))
            Task { [queued] in await retryQueue(kind, to: recipients, skipping: queued) }
        }
    }

    private func retryQueue(_ kind: MessageKind, to recipients: Recipients, skipping alreadyQueued: Set<String>) async {
        var queued = alreadyQueued
        var delay = 1.0
        var attempts = 1
        while !stopping.load(ordering: .acquiring) {
            try? await clock.sleep(until: clock.now() + delay)
            let state = await service.state
            guard kind == .allClear || [.emergencySending, .emergencySent, .emergencySendingFailed].contains(state) else {
                try? database.journal(JournalEntry("messages", "\(kind.rawValue) no longer needed (\(state.rawValue)): not queued"), at: clock.now())
                return
            }
            attempts += 1
            do {
                try queueNow(kind, to: recipients, about: await service.snapshot, skipping: &queued)
                service.post(.event(.partRecovered(at: clock.now(), summary: "\(kind.rawValue) queued after \(attempts) attempts")))
                return
            } catch {
                say("messages: could not queue the \(kind.rawValue) (attempt \(attempts)): \(error)")
                delay = min(30, delay * 2)
            }
        }
    }

    /// Queues one message per recipient not in `queued` (those a failed attempt already queued),
    /// adding each to it. What the messages say of the emergency (crash or SOS, when, the crash's
    /// evidence) comes from its persisted state, never from an earlier one.
    private func queueNow(_ kind: MessageKind, to recipients: Recipients, about emergency: EmergencyWorkflow,
                          skipping queued: inout Set<String>) throws {
        let crash = emergency.crash
        let trigger = emergency.trigger ?? .manual
        let startedAt = crash?.time ?? emergency.countdownStart
        let contacts = try database.contacts()
        let numbers: [String] = switch recipients {
        case .everyContact: contacts.map(\.number)
        case .only(let list): list
        }
        let profile = try database.profile()
        let fix = location.withLock { $0.lastFix }
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm"
        let motion = crash.flatMap { c in location.withLock { $0.motion(before: c.time) } }
        let context = MessageContext(
            riderName: profile.name ?? "the rider", riderMessage: profile.message ?? "RideGuard: I may have crashed.",
            medicalNote: profile.medicalNote, language: configuration.messages.language, mapLink: configuration.messages.mapLink,
            trigger: trigger, crashTime: startedAt.map { formatter.string(from: Date(timeIntervalSince1970: $0)) },
            evidence: crash?.evidence, fix: fix, fixAge: fix.map { clock.now() - $0.time },
            speedBefore: motion?.speed ?? crash?.evidence?.speedBefore, headingBefore: motion?.heading)
        let text: String = switch kind {
        case .alert: MessageComposer.alert(context)
        case .locationUpdate: MessageComposer.locationUpdate(context)
        case .allClear: MessageComposer.allClear(context)
        }
        for number in numbers where !queued.contains(number) {
            _ = try database.outbox.enqueue(recipient: number, kind: kind.rawValue, body: text, now: clock.now())
            queued.insert(number)
            outboxBell.ring()
        }
        let who = numbers.map(PhoneNumber.mask).joined(separator: ", ")
        try? database.journal(JournalEntry("messages", "\(kind.rawValue) queued for \(numbers.count) contact\(numbers.count == 1 ? "" : "s"): \(who)"),
                              at: clock.now())
    }

    /// Fixes from gpsd, or a simulated position refreshed every second; the first fix is reported
    /// to the workflow (an alert sent without a position is followed by one).
    private func startLocation() -> @Sendable () -> Void {
        guard configuration.gps.simulated else {
            let parts = configuration.gps.gpsd.split(separator: ":").map(String.init)
            let seenFix = Atomic<Bool>(false)
            let watcher = GPSDWatcher(host: parts[0], port: parts.count > 1 ? parts[1] : "2947") { [self] event in
                switch event {
                case .fix(let fix):
                    location.withLock { $0.update(fix) }
                    if let speed = fix.speed { speeds.store(speed, at: clock.now()) }
                    if !seenFix.exchange(true, ordering: .acquiringAndReleasing) {
                        service.post(.event(.locationFix(at: clock.now())))
                    }
                case .connected: say("gpsd: connected")
                case .disconnected(let reason, let retry): say("gpsd: \(reason); retrying in \(DecimalFormat.string(retry, decimals: 1)) s")
                }
            }
            return { watcher.stop() }
        }
        guard let position = configuration.gps.fixedPosition, position.count == 2 else { return {} }
        Task { [self] in
            var first = true
            while !stopping.load(ordering: .acquiring) {
                location.withLock { $0.update(Fix(time: clock.now(), latitude: position[0], longitude: position[1], speed: 0, accuracy: 5)) }
                if first {
                    first = false
                    service.post(.event(.locationFix(at: clock.now())))
                }
                try? await clock.sleep(until: clock.now() + 1)
            }
        }
        return {}
    }
}

/// One part of the agent as a service: started when the group runs it, stopped when the group
/// shuts down gracefully.
struct Part: Service, CustomStringConvertible {
    let description: String
    let start: @Sendable () async -> @Sendable () async -> Void

    init(_ name: String, start: @escaping @Sendable () async -> @Sendable () async -> Void) {
        description = name
        self.start = start
    }

    func run() async throws {
        let stop = await start()
        try? await gracefulShutdown()
        await stop()
    }
}

/// The arming loop, last to start and first to stop.
struct Arming: Service, CustomStringConvertible {
    let agent: Agent
    var description: String { "arming" }

    func run() async throws {
        await agent.keepArmed()
    }
}

/// The file of a recording, used only on the agent's `files` queue: opened with the first batch
/// (which says whether there is a gyro), written a batch at a time.
final class RecordingFile: @unchecked Sendable {
    let path: String
    private let metadata: [(key: String, value: String)]
    private var writer: TraceFileWriter?
    private var problem: String?

    init(path: String, metadata: [(key: String, value: String)]) {
        self.path = path
        self.metadata = metadata
    }

    func write(_ batch: [IMUSample]) {
        guard problem == nil, let first = batch.first else { return }
        do {
            if writer == nil { writer = try TraceFileWriter(path: path, hasGyro: first.gyro != nil, hasSpeed: true, metadata: metadata) }
            for sample in batch { try writer?.append(sample) }
            try writer?.flush()
        } catch {
            problem = "\(error)"
        }
    }

    /// What happened, for the journal.
    func close() -> String {
        if let problem { return "recording \(path) stopped: \(problem)" }
        return "recording saved: \(path) (\(writer?.samplesWritten ?? 0) samples)"
    }
}
