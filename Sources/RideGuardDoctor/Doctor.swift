// SPDX-License-Identifier: Apache-2.0
import SystemPackage
import FoundationEssentials
import Glibc
import GPSDClient
import Logging
import RideGuardCore
import SerialModem
import Storage
import Synchronization
import RideGuardConfig
import AgentControl
import SystemCalls
import RideGuardLog
import SystemTime
import PiSupply

/// One line of `rideguard doctor`: a part, how it is, and what to do about it.
package struct DoctorCheck: Sendable, Equatable {
    package enum Outcome: String, Sendable {
        /// Works.
        case ok = "✓"
        /// Works, but something is degraded (no GPS fix yet, weak signal): the rider is still protected.
        case warning = "!"
        /// The agent cannot protect the rider until this is fixed.
        case failed = "✗"
    }

    package var part: String
    package var outcome: Outcome
    package var detail: String
    /// What the installer should do (for a warning or a failure).
    package var fix: String?

    package init(_ part: String, _ outcome: Outcome, _ detail: String, fix: String? = nil) {
        self.part = part
        self.outcome = outcome
        self.detail = detail
        self.fix = fix
    }
}

/// The checks that open the hardware itself, made where the agent (which holds it) is not running:
/// sampling the IMU at rest, requesting the GPIO lines. `rideguard doctor` and `setup` make them
/// (DoctorHardware's `LocalHardware`); the page's program has none, and links no IIO or GPIO library.
package protocol HardwareChecks: Sendable {
    func imu(_ imu: AgentConfiguration.IMU) -> DoctorCheck
    func gpio(_ gpio: AgentConfiguration.GPIO) -> DoctorCheck
    func ignition(_ gpio: AgentConfiguration.GPIO) -> DoctorCheck
}

/// `rideguard doctor`: checks the installation in the order the agent starts, like a boot
/// sequence: configuration, database, the running agent, IMU, GPIO, gpsd, modem, contacts.
/// When the agent is running it holds the IMU, the GPIO lines and the modem's port, so their
/// checks read the agent's status instead of opening the hardware a second time.
package struct Doctor: Sendable {
    package var configurationPath: String
    /// How long to wait for a GPS fix.
    package var fixWait = 5.0
    /// How long to wait for the modem to answer and register.
    package var modemWait = 30.0
    /// What opens the IMU and the GPIO lines (and the modem's port) here when the agent, which
    /// holds them, is not running. nil for the page's service, which sees no devices
    /// (PrivateDevices=yes): there a check of them could only be wrong, so it says it was not made.
    package var hardware: (any HardwareChecks)?

    package init(configurationPath: String, hardware: (any HardwareChecks)?) {
        self.configurationPath = configurationPath
        self.hardware = hardware
    }

    /// Runs every check in order, handing each to `report` as soon as it is known (from a thread of
    /// the doctor's). Returns true when nothing stops the agent from protecting the rider.
    ///
    /// Almost every check blocks (the configuration file and SQLite, the control socket, sampling
    /// the IMU, gpsd's socket, the contacts): those run on threads of their own, never on Swift's
    /// concurrency pool, so that the page's other requests, which need a pool thread to resume, never
    /// wait behind a doctor talking to a peer that hangs. Only the modem's check is asynchronous.
    package func run(report: @escaping @Sendable (DoctorCheck) -> Void) async -> Bool {
        let canProtect = Atomic<Bool>(true)
        let note: @Sendable (DoctorCheck) -> Void = { check in
            if check.outcome == .failed { canProtect.store(false, ordering: .relaxed) }
            report(check)
        }
        guard let found = await onOwnThread("rg-doctor", { self.checksBeforeTheModem(note) }) else { return false }
        // The modem as the agent sees it, or as asked here: the SMS check reads the SIM's state from it.
        let modem: ModemHealth?
        if let status = found.status {
            modem = status.modem.real ? status.modem.health : nil
            note(modemFromAgent(status))
        } else if hardware != nil {
            let (check, health) = await checkModem(found.configuration.modem, database: found.database)
            modem = health
            note(check)
        } else {
            modem = nil
            note(unseen("modem"))
        }
        guard await onOwnThread("rg-doctor", { self.checksAfterTheModem(found, modem: modem, note) }) != nil else { return false }
        return canProtect.load(ordering: .relaxed)
    }

    /// What the first checks found, for the ones after the modem's.
    struct Found: Sendable {
        let configuration: AgentConfiguration
        let database: RideGuardDatabase?
        let status: AgentStatus?
    }

    func unseen(_ part: String) -> DoctorCheck {
        DoctorCheck(part, .warning, "not checked: the agent, which reads it, is not running, and the page cannot open the hardware",
                    fix: "start the agent, or run rideguard doctor on the Pi")
    }

    /// Configuration, database, agent, IMU, GPIO, ignition, supply, gpsd: blocking, on the caller's thread.
    func checksBeforeTheModem(_ note: (DoctorCheck) -> Void) -> Found {
        // Whatever is wrong with the file, every other part is still checked: with the defaults.
        let configuration: AgentConfiguration
        if !FileManager.default.fileExists(atPath: configurationPath) {
            configuration = AgentConfiguration()
            note(DoctorCheck("configuration", .warning, "no \(configurationPath): using the defaults",
                             fix: "rideguard config example > \(configurationPath) to write one"))
        } else {
            do {
                configuration = try ConfigurationFile.load(path: configurationPath)
                note(DoctorCheck("configuration", .ok, configurationPath))
            } catch {
                configuration = AgentConfiguration()
                note(DoctorCheck("configuration", .failed, error.description + "; checking the rest with the defaults",
                                 fix: "correct the file (rideguard config example prints every key with its default), then run doctor again"))
            }
        }
        let database: RideGuardDatabase?
        do {
            let opened = try RideGuardDatabase(path: configuration.database)
            database = opened
            if let problem = opened.startupProblem {
                note(DoctorCheck("database", .failed, problem, fix: "restore a backup of \(configuration.database), or add the contacts again"))
            } else if let problem = opened.storageProblem() {
                note(DoctorCheck("database", .failed, problem + " (the agent protects, degraded)",
                                 fix: "free space, or check the SD card: dmesg, then fsck at the next boot"))
            } else {
                note(DoctorCheck("database", .ok, "\(configuration.database) (\(opened.sizeOnDisk >> 10) KiB; records kept \(configuration.keepDays) days)"))
            }
        } catch {
            database = nil
            note(DoctorCheck("database", .failed, "\(configuration.database): \(error)",
                             fix: "the folder must exist and be writable by the service user (sudo install -d -o rideguard -g rideguard /var/lib/rideguard)"))
        }
        let agent = ControlClient.agentStatus(configuration.controlSocket)
        switch agent {
        case .running(let status):
            note(DoctorCheck("agent", .ok, "running, \(status.state.rawValue); the IMU, GPIO and modem checks below come from it"))
        case .unreachable(let reason):
            note(DoctorCheck("agent", .failed, "the control socket \(configuration.controlSocket) exists but cannot be used: \(reason)",
                             fix: "run doctor with sudo, or as a member of the rideguard group"))
        case .notRunning where hardware != nil:
            note(DoctorCheck("agent", .warning, "not running: checking the hardware directly",
                             fix: "start it when the checks pass: sudo systemctl start rideguard"))
        case .notRunning:
            note(DoctorCheck("agent", .failed, "not running: nothing protects the rider",
                             fix: "start it: sudo systemctl start rideguard (the journal says why it stopped: journalctl -u rideguard)"))
        }
        let status: AgentStatus? = if case .running(let s) = agent { s } else { nil }
        note(status.map { imuFromAgent($0, configuration) } ?? hardware?.imu(configuration.imu) ?? unseen("IMU"))
        note(status.map { gpioFromAgent($0, configuration.gpio) } ?? hardware?.gpio(configuration.gpio) ?? unseen("GPIO"))
        if let ignition = configuration.gpio.ignition, !configuration.gpio.simulated {
            note(status.map { ignitionFromAgent($0, line: ignition) } ?? hardware?.ignition(configuration.gpio) ?? unseen("ignition"))
        }
        if let supply = checkSupply() { note(supply) }
        note(checkGPS(configuration.gps))
        return Found(configuration: configuration, database: database, status: status)
    }

    /// Contacts, the fleet's broker, the page: blocking, on the caller's thread.
    func checksAfterTheModem(_ found: Found, modem: ModemHealth?, _ note: (DoctorCheck) -> Void) {
        let configuration = found.configuration
        note(found.database.map { checkContacts($0, language: (try? $0.profile().language) ?? configuration.messages.language) }
             ?? DoctorCheck("contacts", .failed, "not checked: the database cannot be opened", fix: "fix the database first (above)"))
        note(found.database.map { checkSMS($0, modem: modem) }
             ?? DoctorCheck("sms", .failed, "not checked: the database cannot be opened", fix: "fix the database first (above)"))
        if let database = found.database { note(checkSelfTest(database, days: configuration.messages.selfTestDays)) }
        if let mqtt = configuration.mqtt { note(fleetCheck(mqtt, found.status)) }
        note(webCheck(configuration.web, found.database))
    }

    /// The broker (`mqtt:`), as the running agent sees it: never a reason not to protect (SMS needs
    /// no IP link), a warning when there is no connection.
    func fleetCheck(_ mqtt: AgentConfiguration.MQTT, _ status: AgentStatus?) -> DoctorCheck {
        guard let fleet = status?.fleet else {
            return DoctorCheck("mqtt", .warning, "\(mqtt.url): not checked, the agent is not running", fix: "start it: sudo systemctl start rideguard")
        }
        let waiting = fleet.backlog > 0 ? "; \(fleet.backlog) event(s) waiting for it" : ""
        guard fleet.connected else {
            return DoctorCheck("mqtt", .warning, "\(fleet.device) NOT connected to \(fleet.broker)\(fleet.problem.map { ": \($0)" } ?? "")\(waiting) (SMS alerts are not affected)",
                               fix: "the Pi needs an IP link (Wi-Fi to the phone's hotspot or a depot, or the modem's data): ip route; then the broker's address, password and CA")
        }
        return DoctorCheck("mqtt", .ok, "\(fleet.device) connected to \(fleet.broker)\(waiting)")
    }

    /// The page for the rider's phone (`rideguard web`): on or off, and where. Optional: off is no fault.
    func webCheck(_ web: AgentConfiguration.Web, _ database: RideGuardDatabase?) -> DoctorCheck {
        guard WebLink.isServing(web) else {
            return DoctorCheck("web page", .ok, "off (optional: the rider's phone as a screen): sudo systemctl enable --now rideguard-web")
        }
        let phones = ((try? database?.webSessions()) ?? nil)?.count ?? 0
        let place = WebLink.base(web) ?? "\(web.listen) (the Pi has no network address yet)"
        return DoctorCheck("web page", .ok, "on at \(place); \(phones) phone(s) paired (rideguard web pair adds one)")
    }

    // MARK: - The running agent

    func imuFromAgent(_ status: AgentStatus, _ configuration: AgentConfiguration) -> DoctorCheck {
        let sensor = status.sensor
        let rate = sensor.rateHz
        if let fault = sensor.lastFault, let age = sensor.lastSampleAgeSeconds, sensor.blind {
            return DoctorCheck("IMU", .failed, "no sample for \(DecimalFormat.string(age, decimals: 1)) s (\(fault))",
                               fix: "check the IMU's wiring and its overlay in config.txt; the agent's journal says more (journalctl -u rideguard)")
        }
        guard !sensor.blind else {
            return DoctorCheck("IMU", .failed, "no sample from the sensor yet",
                               fix: "check the IMU's wiring and its overlay in config.txt (journalctl -u rideguard)")
        }
        if configuration.imu.simulated {
            return DoctorCheck("IMU", .ok, "simulated: \(configuration.imu.trace ?? "") playing, \(Int(rate.rounded())) samples/s")
        }
        var check = Self.rateAndGravity(rate: rate, expected: configuration.imu.rateHz, gravity: sensor.gravityG,
                                   deadAxis: sensor.deadAxis)
        if let device = sensor.device {
            check.detail = Self.describe(device: device, how: sensor.readMode) + check.detail
        }
        return check
    }

    /// "mpu6050 (buffer, trigger mpu6050-dev1; driver inv-mpu6050-i2c, mount matrix identity): ":
    /// the chip, and how it is read where that is known.
    package static func describe(device: String, how: String?) -> String {
        how.map { "\(device) (\($0)): " } ?? "\(device): "
    }

    func gpioFromAgent(_ status: AgentStatus, _ configuration: AgentConfiguration.GPIO) -> DoctorCheck {
        if let problem = status.gpio.problem {
            return DoctorCheck("GPIO", .failed, problem, fix: Self.gpioFix)
        }
        if configuration.simulated { return DoctorCheck("GPIO", .ok, "simulated: presses come from rideguard ctl press") }
        return DoctorCheck("GPIO", .ok, "buzzer \(configuration.buzzer) and button \(configuration.button) held by the agent")
    }

    func modemFromAgent(_ status: AgentStatus) -> DoctorCheck {
        guard status.modem.real else { return DoctorCheck("modem", .ok, "simulated: messages are printed, not sent") }
        return Self.judge(status.modem.health)
    }

    // MARK: - Direct checks

    package static let gpioFix = "check the line names in the configuration (gpioinfo lists them) and that the service user is in the gpio group"

    /// An IMU's rate and gravity at rest, as sampled here or as the agent saw them.
    package static func rateAndGravity(rate: Double, expected: Double, gravity: Double?, deadAxis: String?) -> DoctorCheck {
        let rateText = "\(Int(rate.rounded())) Hz (configured \(Int(expected)))"
        if let deadAxis {
            return DoctorCheck("IMU", .failed, "\(rateText); \(deadAxis): a dead axis",
                               fix: "replace the sensor or resolder it: a dead axis hides falls along it")
        }
        guard abs(rate - expected) <= 0.2 * expected else {
            return DoctorCheck("IMU", .failed, "samples at \(rateText)",
                               fix: "set imu.rate_hz to a rate the sensor supports (cat /sys/bus/iio/devices/iio:device0/sampling_frequency_available)")
        }
        guard let gravity else { return DoctorCheck("IMU", .ok, rateText) }
        let gText = "\(DecimalFormat.string(gravity, decimals: 2)) g at rest"
        guard gravity >= 0.85 && gravity <= 1.15 else {
            return DoctorCheck("IMU", .failed, "\(rateText), \(gText) where about 1 g is expected",
                               fix: "keep the bike still while doctor runs; if it was still, the sensor's scale is wrong or an axis is dead")
        }
        return DoctorCheck("IMU", .ok, "\(rateText), \(gText)")
    }

    func ignitionFromAgent(_ status: AgentStatus, line: String) -> DoctorCheck {
        if let problem = status.gpio.problem, problem.contains("ignition") {
            return DoctorCheck("ignition", .failed, problem, fix: Self.gpioFix)
        }
        let level = status.bike?.ignition ?? "not read yet"
        return DoctorCheck("ignition", .ok, "\(line) held by the agent: ignition \(level), the bike \(status.bike?.context ?? "unknown")")
    }

    /// The Pi's under-voltage flag, where the firmware has a voltage monitor (nil elsewhere).
    func checkSupply() -> DoctorCheck? {
        switch SupplyMonitor().underVoltage() {
        case true?:
            return DoctorCheck("supply", .warning, "under-voltage now: the Pi's 5 V input is below 4.63 V",
                               fix: "a 12 V → 5 V converter of 3 A or more, short thick wires (boards/wiring.md): a sagging supply resets the Pi")
        case false?: return DoctorCheck("supply", .ok, "5 V input normal (Raspberry Pi voltage monitor)")
        case nil: return nil
        }
    }

    /// gpsd reachable, and a fix with its age. Without a fix alerts still go out, with the last
    /// known position or none, so this is never a failure.
    func checkGPS(_ gps: AgentConfiguration.GPS) -> DoctorCheck {
        if gps.simulated {
            let position = gps.fixedPosition.map { "\($0[0]), \($0[1])" } ?? "no position"
            return DoctorCheck("gpsd", .ok, "simulated: \(position)")
        }
        guard let address = GPSDAddress(gps.gpsd) else {
            return DoctorCheck("gpsd", .failed, "gps.gpsd '\(gps.gpsd)' is not HOST:PORT", fix: "set gps.gpsd, e.g. 127.0.0.1:2947")
        }
        let result = GPSDWatcher.probe(host: address.host, port: String(address.port), seconds: fixWait)
        if let fix = result.fix {
            let age = max(0, Date().timeIntervalSince1970 - fix.time)
            return DoctorCheck("gpsd", .ok, "fix \(DecimalFormat.string(fix.latitude, decimals: 5)), \(DecimalFormat.string(fix.longitude, decimals: 5)), \(DecimalFormat.string(age, decimals: 0)) s old")
        }
        if result.connected {
            return DoctorCheck("gpsd", .warning, "gpsd at \(gps.gpsd) answers but has no fix after \(Int(fixWait)) s",
                               fix: "take the bike outside with a view of the sky; alerts meanwhile go out without a position (cgps shows the satellites)")
        }
        return DoctorCheck("gpsd", .warning, "cannot reach gpsd at \(gps.gpsd): \(result.problem ?? "no answer")",
                           fix: "sudo apt-get install gpsd and point DEVICES in /etc/default/gpsd at the receiver; alerts meanwhile go out without a position")
    }

    /// The modem answers, the SIM is ready, the modem registers; the signal is reported.
    /// `database`: where a PIN the SIM refused is remembered (never entered again). Returns the
    /// check and the modem's health (nil for a simulated modem).
    func checkModem(_ configuration: AgentConfiguration.Modem, database: RideGuardDatabase?) async -> (DoctorCheck, ModemHealth?) {
        if configuration.simulated { return (DoctorCheck("modem", .ok, "simulated: messages are printed, not sent"), nil) }
        var settings = ModemConfiguration(configuration)
        settings.registrationTimeout = modemWait
        let modem = Modem(configuration: settings, clock: SystemServiceClock(), logger: .silent, pinRefusals: database)
        let deadline = Date().addingTimeInterval(modemWait)
        var health = await modem.checkHealth()
        // A modem just powered needs a few seconds to find its network.
        while health.problem == nil, !health.registered, health.registration != .denied, Date() < deadline {
            try? await Task.sleep(for: .seconds(2))
            health = await modem.checkHealth()
        }
        await modem.close()
        return (Self.judge(health, device: configuration.device), health)
    }

    static func judge(_ health: ModemHealth, device: String? = nil) -> DoctorCheck {
        let name = device.map { "\($0): " } ?? ""
        if let problem = health.simProblem {
            let (what, advice) = SIMState.parts(of: problem)
            return DoctorCheck("modem", .failed, "\(name)\(what): no alert can be sent", fix: advice)
        }
        if let problem = health.problem, !health.connected {
            let fix = "check modem.device (ls -l /dev/rideguard-modem-at /dev/ttyUSB*; the udev rules in /usr/lib/udev/rules.d/77-rideguard-modem.rules name the AT port) and that the service user is in the dialout group"
            return DoctorCheck("modem", .failed, name + problem, fix: fix)
        }
        let signal = health.signalDBm.map { "\($0) dBm" } ?? "signal unknown"
        guard health.registered else {
            return DoctorCheck("modem", .failed, "\(name)SIM \(health.sim ?? "?"), network \(health.registration ?? .unknown), \(signal)",
                               fix: "check the antenna; the modem keeps searching (a SIM with no plan for this network is refused: then ask its operator)")
        }
        let text = "\(name)SIM ready, network \(health.registration?.rawValue ?? "?"), \(signal)"
        if let dBm = health.signalDBm, dBm < -105 {
            return DoctorCheck("modem", .warning, text + " (weak)", fix: "move the antenna away from the engine and the frame")
        }
        return DoctorCheck("modem", .ok, text)
    }

    /// What the last SMS the modem tried says of the path: sent, or why not, and whose trouble
    /// that is (the SIM's, a contact's number, the network's for now). `modem`: the modem's health
    /// now, so that a failure the SIM caused is not told as if it still held once the SIM is ready.
    func checkSMS(_ database: RideGuardDatabase, modem: ModemHealth?) -> DoctorCheck {
        let last: OutboxMessage?
        do { last = try database.outbox.lastTried() } catch {
            return DoctorCheck("sms", .failed, "the outbox cannot be read: \(error)", fix: "restore a backup of the database")
        }
        guard let last else { return DoctorCheck("sms", .ok, "no SMS tried yet") }
        let when = Times.localHourMinute(last.updatedAt)
        let what = "the last SMS (\(Self.kindName(last.kind)), to \(PhoneNumber.mask(last.recipient)))"
        guard last.status != .sent else { return DoctorCheck("sms", .ok, "\(what) went out at \(when)") }
        let reason = last.lastError ?? "no reason kept"
        let failed = last.status == .failed ? "was given up" : "failed, and is retried"
        let cause = SMSCause(reason: reason)
        // Held back by the SIM (missing, locked) at bring-up, or refused by it: is it so still?
        let simSaid = cause?.party == .sim || SIMState.parts(of: reason).advice != ""
        if simSaid, let modem, modem.simProblem == nil, modem.sim == SIMState.ready.name {
            return DoctorCheck("sms", .warning, "\(what) \(failed) at \(when) (\(SIMState.parts(of: reason).what)); the SIM is ready now",
                               fix: last.status == .failed ? "send it again if it still matters" : "the agent sends it at its next try")
        }
        switch cause {
        case let cause? where cause.party == .sim:
            return DoctorCheck("sms", .failed, "\(what) \(failed) at \(when): \(reason)", fix: "the SIM cannot send SMS: \(cause.advice)")
        case let cause?:
            return DoctorCheck("sms", .warning, "\(what) \(failed) at \(when): \(reason)", fix: cause.advice)
        case nil:
            return DoctorCheck("sms", .warning, "\(what) \(failed) at \(when): \(SIMState.parts(of: reason).what)",
                               fix: simSaid ? SIMState.parts(of: reason).advice : "see the modem's check above")
        }
    }

    /// A message's kind as a person says it.
    static func kindName(_ kind: OutboxKind) -> String {
        switch kind {
        case .alert: "an alert"
        case .locationUpdate: "a position update"
        case .allClear: "the all-clear"
        case .parkedFall: "the parked bike's fall"
        case .reply: "an answer to an SMS"
        case .test: "the test SMS"
        case .manual: "one sent by hand"
        case .confirmation: "a contact's question"
        case .selfTest: "the self-test"
        case .other(let raw): raw
        }
    }

    /// The self-test to the rider's own phone: when it last went out, or why it could not; said
    /// whatever other SMS went out since.
    func checkSelfTest(_ database: RideGuardDatabase, days: Int) -> DoctorCheck {
        guard days > 0 else { return DoctorCheck("self-test", .ok, "off (messages.self_test_days: 0)") }
        let record: SelfTestRecord
        do { record = try database.selfTestRecord() } catch {
            return DoctorCheck("self-test", .warning, "its record cannot be read: \(error)", fix: "restore a backup of the database")
        }
        if let problem = record.problem {
            return DoctorCheck("self-test", .warning, problem, fix: "rideguard selftest sends one now, once the cause is put right")
        }
        guard let sent = record.lastSent else {
            return DoctorCheck("self-test", .ok, "none sent yet: the first goes \(days) days after the agent first ran (rideguard selftest sends one now)")
        }
        return DoctorCheck("self-test", .ok, "the last went out on \(String(Times.iso8601(sent).prefix(10))) at \(Times.localHourMinute(sent)); every \(days) days")
    }

    func checkContacts(_ database: RideGuardDatabase, language: MessageLanguage) -> DoctorCheck {
        let contacts = (try? database.contacts()) ?? []
        let message = (try? database.profile().message) ?? nil
        if contacts.isEmpty {
            return DoctorCheck("contacts", .failed, "no emergency contact", fix: "sudo rideguard setup, or rideguard contacts add NAME NUMBER")
        }
        let now = Date().timeIntervalSince1970
        let names = contacts.map { "\($0.name) \(PhoneNumber.mask($0.number)) (\($0.standing.brief(now: now)))" }.joined(separator: ", ")
        if let problem = ContactStanding.problem(contacts.map { ($0.name, $0.standing) }) {
            let waiting = contacts.first { !$0.standing.isConfirmed }?.name ?? "NAME"
            return DoctorCheck("contacts", .warning, "\(contacts.count): \(names); \(problem)",
                               fix: "rideguard contacts ask \(waiting) sends the question again; rideguard contacts confirm \(waiting) once you have called them")
        }
        guard message != nil else {
            return DoctorCheck("contacts", .warning, "\(contacts.count): \(names); no alert message of your own: alerts start with the default one",
                               fix: "rideguard message set \"...\" puts your own words first (the default: \"\(MessageComposer.suggestedMessage(language))\")")
        }
        return DoctorCheck("contacts", .ok, "\(contacts.count): \(names); alert message set")
    }
}
