// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import SystemPackage
import GPIOLines
import IIOSensor
import Logging
import RideGuardCore
import SerialModem
import ServiceLifecycle
import Storage
import Synchronization
import AgentControl
import SystemCalls
import SystemTime
import PiSupply

/// `rideguard run`: the wiring. The configuration chooses, once, each part's real adapter or its
/// simulated twin; the parts become services of one ServiceGroup around the emergency workflow's
/// ordered stream of inputs. They start in order — the workflow (resuming one saved before a
/// restart), the outbox, the modem's health, the calls, the location, the button, the ignition,
/// the supply, the sampler, the control socket, retention, arming — and stop in reverse, so the
/// workflow saves its state last.
package final class Agent: Sendable {
    package let configuration: AgentConfiguration
    private let logger: Logger
    private let clock: any ServiceClock
    private let emergency: EmergencyService
    private let services: [Supervised]
    private let button: SimulatedButton?
    private let modem: Modem?
    private let fleet: FleetStatus
    private let stopping = Atomic<Bool>(false)
    private let group = Mutex<ServiceGroup?>(nil)

    /// `database`: opened already (`openDatabase`), else opened here (it throws when it cannot be).
    package init(configuration: AgentConfiguration, database: RideGuardDatabase? = nil, clock: any ServiceClock = SystemServiceClock(),
                logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        self.clock = clock
        func part(_ name: String) -> Logger {
            var logger = logger
            logger[metadataKey: "part"] = "\(name)"
            return logger
        }
        let database = try database ?? RideGuardDatabase(path: configuration.database)
        let folder = FilePath(configuration.database).removingLastComponent().string
        let gpioProblems = PartProblems()
        let buzzer = BuzzerPlayer(output: Self.buzzer(configuration.gpio, clock: clock, problems: gpioProblems, logger: part("buzzer")), clock: clock) {
            [simulated = configuration.gpio.simulated, logger] pattern in
            if simulated { logger.info("buzzer: \(pattern.meaning)") }
        }
        let whereabouts = Whereabouts()
        let announcer = FleetAnnouncer(database: database, whereabouts: whereabouts, clock: clock)
        let fleetStatus = FleetStatus()
        fleet = fleetStatus
        let doorbell = Doorbell()
        let messages = MessageQueue(database: database, whereabouts: whereabouts, settings: configuration.messages,
                                    doorbell: doorbell, clock: clock, logger: part("messages"))
        let calls = CallSwitch()
        let workflowLogger = part("emergency")
        emergency = EmergencyService(
            configuration: configuration.workflow, store: WorkflowStore(database: database), clock: clock, buzzer: buzzer,
            outputs: EmergencyService.Outputs(
                queueMessages: { request in messages.queue(request) },
                cancelQueuedAlerts: {
                    // Not cancelled (the database cannot even be read): said; an alert that still goes
                    // out after the rider's cancel is followed by the all-clear (the workflow's delivered).
                    do { _ = try database.outbox.cancelPending(kind: .alert, now: clock.now()) } catch {
                        workflowLogger.error("could not cancel the alerts not yet sent (\(error)): any that goes is followed by the all-clear")
                        database.journal(JournalEntry(.alerts, "could not cancel the alerts not yet sent (\(error)): any that goes is followed by the all-clear"), at: clock.now())
                    }
                },
                journal: { entry in
                    database.journal(entry, at: clock.now())
                    workflowLogger.info("\(entry.kind): \(entry.text)")
                },
                tracking: { on in workflowLogger.info("\(on ? "tracking the rider's position" : "tracking stopped")") },
                calls: { on in calls.set(on) },
                announce: { event in announcer.announce(event) }))
        let location = LocationService(source: Self.location(configuration.gps), whereabouts: whereabouts, emergency: emergency,
                                       clock: clock, logger: part("location"))
        let sensor = SensorHealth(emergency: emergency, logger: part("sampler"))
        let bike = BikeContext()
        let recorder = Recorder(folder: FilePath(folder).appending("recordings").string, rateHz: configuration.imu.rateHz,
                                database: database, clock: clock, logger: part("recorder"))

        let incoming = IncomingSMS(database: database, emergency: emergency, messages: messages, sensor: sensor, web: configuration.web,
                                   clock: clock, logger: part("messages"))
        modem = configuration.modem.simulated ? nil
            : Modem(configuration: ModemConfiguration(configuration.modem), clock: clock, logger: part("modem"), pinRefusals: database) {
                await incoming.received($0)
            }
        let simulatedModem = SimulatedTransport(clock: clock, logger: part("modem"))
        let transport: any SMSTransport = modem ?? simulatedModem
        let caller: any VoiceCaller = modem ?? simulatedModem
        button = configuration.gpio.simulated ? SimulatedButton(emergency: emergency, clock: clock) : nil

        let selfTest = SelfTest(database: database, emergency: emergency, modem: modem, whereabouts: whereabouts, sensor: sensor,
                                messages: configuration.messages, doorbell: doorbell, clock: clock, logger: part("self-test"))
        var services: [any Service & CustomStringConvertible] = [
            EmergencyWorkflowService(emergency: emergency),
            OutboxService(outbox: database.outbox, database: database, transport: transport, doorbell: doorbell, emergency: emergency,
                          selfTest: selfTest, language: configuration.messages.language, clock: clock, logger: part("outbox")),
        ]
        if let modem {
            services.append(ModemHealthService(modem: modem, outbox: database.outbox, database: database, announcer: announcer, emergency: emergency,
                                               doorbell: doorbell, clock: clock,
                                               logger: part("modem")))
        }
        services.append(CallService(calls: calls, caller: caller, settings: configuration.calls, database: database, emergency: emergency,
                                    clock: clock, logger: part("calls")))
        services.append(location)
        if !configuration.gpio.simulated {
            services.append(ButtonService(address: GPIOLineAddress(configuration.gpio.button), activeLow: configuration.gpio.buttonActiveLow,
                                          problems: gpioProblems, emergency: emergency, clock: clock, logger: part("button")))
            if let ignition = configuration.gpio.ignition {
                services.append(IgnitionService(address: GPIOLineAddress(ignition), activeLow: configuration.gpio.ignitionActiveLow,
                                                power: configuration.power, bike: bike, problems: gpioProblems, emergency: emergency,
                                                database: database, clock: clock, logger: part("ignition")))
            }
        }
        services.append(SupplyService(monitor: SupplyMonitor(), bike: bike, database: database, clock: clock, logger: part("supply")))
        services += [
            SamplerService(source: Self.samples(configuration.imu), detector: configuration.detector, speeds: whereabouts.speeds,
                           crashWindow: CrashWindow(folder: FilePath(folder).appending("traces").string, rateHz: configuration.imu.rateHz,
                                                    database: database, clock: clock, logger: part("sampler")),
                           recorder: recorder, health: sensor, bike: bike, emergency: emergency, database: database, clock: clock,
                           logger: part("sampler")),
            ControlService(path: configuration.controlSocket, emergency: emergency, sensor: sensor, simulatedIMU: configuration.imu.simulated,
                           button: button, gpioProblems: gpioProblems, bike: bike, whereabouts: whereabouts, modem: modem, calls: calls,
                           fleet: fleetStatus, recorder: recorder, buzzer: buzzer, selfTest: selfTest,
                           database: database, clock: clock, logger: part("control")),
            RetentionService(database: database, keepDays: configuration.keepDays, clock: clock, logger: part("retention")),
            SelfTestService(selfTest: selfTest, clock: clock),
            ArmingService(emergency: emergency, database: database, clock: clock, logger: part("arming")),
        ]
        if let traccar = configuration.traccar {
            services.append(TraccarService(settings: traccar, whereabouts: whereabouts, bike: bike, database: database, clock: clock,
                                           logger: part("traccar")))
        }
        if let mqtt = configuration.mqtt {
            services.append(FleetService(settings: mqtt, emergency: emergency, announcer: announcer, whereabouts: whereabouts, sensor: sensor,
                                         bike: bike, status: fleetStatus, group: configuration.group, mapLink: configuration.messages.mapLink,
                                         database: database, clock: clock, logger: part("mqtt")))
        }
        // Each part retries its own I/O; one that ends anyway is started again, the workflow's end
        // restarts the agent (EndPolicy).
        let supervisor = part("agent")
        self.services = services.map { service in
            Supervised(service: service, policy: service is EmergencyWorkflowService ? .restartAgent : .restart, clock: clock, logger: supervisor) { text in
                database.journal(JournalEntry(.system, text), at: clock.now())
            }
        }
    }

    /// Runs the services until `stop()`, or SIGTERM or SIGINT when `stopOnSignals` (systemd stops
    /// the service with SIGTERM; Ctrl-C is SIGINT).
    package func run(stopOnSignals: Bool = false) async {
        // A peer that hangs up (a status client, gpsd, iiod) is an I/O error to handle, never a reason to die.
        signal(SIGPIPE, SIG_IGN)
        var settings = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: stopOnSignals ? [.sigterm, .sigint] : [],
                                                 logger: logger)
        // systemd waits 90 s before SIGKILL; a part that has not stopped after 10 s is cancelled.
        settings.maximumGracefulShutdownDuration = .seconds(10)
        let group = ServiceGroup(configuration: settings)
        StartupMemory.release()   // the configuration, the database and the command line are done with
        // And once every part has started (opened its device, resumed, armed): only the code that
        // keeps running stays.
        let settled = Task { [clock] in
            try await clock.sleep(until: clock.now() + StartupMemory.settleSeconds)
            StartupMemory.release()
        }
        defer { settled.cancel() }
        self.group.withLock { $0 = group }
        if stopping.load(ordering: .acquiring) { await group.triggerGracefulShutdown() }
        var failure: (any Error)?
        do { try await group.run() } catch { failure = error }
        // Every part has stopped: the serial port is let go (a next agent, or `rideguard sms`, may open it).
        await modem?.close()
        if let failure { logger.error("stopped on an error: \(failure)") } else { logger.info("stopped") }
    }

    /// Graceful shutdown, as on SIGTERM: the saved state stays for the next start.
    package func stop() {
        stopping.store(true, ordering: .releasing)
        if let group = group.withLock({ $0 }) { Task { await group.triggerGracefulShutdown() } }
    }

    package var state: WorkflowState { get async { await emergency.state } }
    /// Who acknowledged the emergency under way, if anybody has.
    package var acknowledgement: Acknowledgement? { get async { await emergency.snapshot.acknowledgement } }
    /// The emergency under way's id for the fleet (its acknowledgements name it), if one is.
    package var emergencyID: Int? { get async { await emergency.snapshot.emergencyID } }
    /// The broker, as `status` shows it; nil without `mqtt:`.
    package var fleetStatus: AgentStatus.Fleet? { fleet.snapshot }

    /// The simulated button, pressed for `hold` seconds (the demo); nothing when the button is real.
    package func press(hold: Double) async {
        await button?.press(hold: hold)
    }
}
