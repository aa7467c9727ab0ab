// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import Glibc
import SystemCalls
import GPSDClient
import IIOSensor
import RideGuardAgent
import RideGuardConfig
import RideGuardCore
import AgentControl
import Storage
import Synchronization
import SystemTime

/// Set by SIGTERM or SIGINT while recording: a plain handler storing an atomic (async-signal-safe)
/// lets the synchronous recording loop finish the file. The agent uses ServiceLifecycle instead.
let terminationRequested = Atomic<Bool>(false)

func installTerminationHandlers() {
    signal(SIGTERM) { _ in terminationRequested.store(true, ordering: .relaxed) }
    signal(SIGINT) { _ in terminationRequested.store(true, ordering: .relaxed) }
}

struct Record: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Record the IMU to a trace file (CSV v1) for replay and field testing.",
        discussion: "The file is flushed every second, so a power cut loses at most a second. Ctrl-C stops cleanly."
    )

    @Option(help: "The trace file to write.")
    var out: String

    @Option(help: "libiio context: local: on the Pi, ip:HOST[:PORT] for a remote iiod.")
    var uri = "local:"

    @Option(help: "IIO device name (default: the first known IMU found).")
    var device: String?

    @Option(help: "Sampling rate, Hz.")
    var rate: Double = 200

    @Option(help: "Stop after this many seconds (default: until Ctrl-C).")
    var duration: Double?

    @Option(help: "Also record GPS speed from gpsd at HOST:PORT (the speed_mps column).")
    var gpsd: String?

    /// The running agent, if any: it holds the IMU.
    @OptionGroup var agent: SocketOption

    func validate() throws {
        guard rate >= 10 && rate <= 4000 else { throw ValidationError("--rate must be 10...4000 Hz") }
        if let gpsd, GPSDAddress(gpsd) == nil { throw ValidationError("--gpsd must be HOST:PORT") }
        if let duration, duration <= 0 { throw ValidationError("--duration must be positive") }
    }

    /// The accelerometer's scale, m/s² a count: the range follows from it and the sample's width,
    /// which differs by chip (16 bits on the MPU-6050, 12 on the LIS3DH, whose counts also run
    /// past its nominal range), so the scale is what is said.
    private func scaleText(_ scale: Double) -> String {
        "\(DecimalFormat.string(scale, decimals: 6)) m/s² a count; "
    }

    func run() throws {
        // A second reader changes what the agent reads: the chip's rate (and with it the filters'
        // timing), or its buffer and trigger. So recording is refused while an agent reads a real
        // IMU, or may (its socket is there but does not answer: a hung agent still holds the IMU).
        // A configuration that does not load is no reason not to record: the default socket is asked.
        let socket = agent.socket ?? (try? ConfigurationFile.load(path: agent.configuration.config))?.controlSocket
            ?? AgentConfiguration().controlSocket
        let instead = "Let the agent record while it protects: sudo rideguard ctl record --name NAME --duration SECONDS "
            + "(the trace goes to its recordings folder)"
        switch ControlClient.agentStatus(socket, timeout: 3) {
        case .running(let status) where !status.sensor.simulated:
            Output.error("the agent is running and reads the IMU\(status.sensor.device.map { " (\($0))" } ?? ""): "
                + "recording beside it would change its sampling rate under it. \(instead)")
            throw ExitCode(1)
        case .unreachable(let reason):
            Output.error("the agent's control socket \(socket) is there but cannot be asked (\(reason)): an agent may be reading "
                + "the IMU, and recording beside it would change its sampling rate under it. \(instead), or stop it first "
                + "(sudo systemctl stop rideguard)")
            throw ExitCode(1)
        case .running, .notRunning:
            break
        }
        struct Progress: Sendable {
            var samples = 0
            var dropped = 0
            var first = Double.nan
            var last = Double.nan
            var writer: TraceFileWriter?
            var problem: String?
            /// The latest opening: the device's name, whether it has a gyro, its rate.
            var opened: (name: String, gyro: Bool, rate: Double)?
        }
        let progress = Mutex(Progress())
        let out = self.out, rate = self.rate, withSpeed = gpsd != nil
        // The latest GPS speed, fresh for 3 s, goes into each sample's speed column.
        let speed = Mutex<(value: Double, at: Double)?>(nil)
        let watcher = gpsd.flatMap(GPSDAddress.init).map { address in
            GPSDWatcher(host: address.host, port: String(address.port)) { event in
                if case .fix(let fix) = event, let mps = fix.speed { speed.withLock { $0 = (mps, monotonicSeconds()) } }
            }
        }
        defer { watcher?.stop() }
        let sampler = IIOSampler(configuration: SamplerConfiguration(uri: uri, device: device, rateHz: rate), onSample: { sample in
            progress.withLock { p in
                if p.writer == nil, let opened = p.opened {
                    do {
                        p.writer = try TraceFileWriter(path: out, hasGyro: opened.gyro, hasSpeed: withSpeed, metadata: [
                            ("rate_hz", String(Int(opened.rate))), ("device", opened.name),
                            ("source", "rideguard record"), ("recorded", Times.iso8601(Date().timeIntervalSince1970)),
                        ])
                    } catch { p.problem = "\(error)" }
                }
                guard let writer = p.writer else { return }
                var sample = sample
                if let latest = speed.withLock({ $0 }), monotonicSeconds() - latest.at < 3 { sample.speed = latest.value }
                do { try writer.append(sample) } catch { p.problem = "\(error)" }
                p.samples += 1
                if p.first.isNaN { p.first = sample.t }
                p.last = sample.t
            }
        }, onEvent: { event in
            progress.withLock { p in
                switch event {
                case .opened(let name, let gyro, let timestamps, let actual, let scale, let mode):
                    Output.error("recording \(name) at \(Int(actual)) Hz (\(gyro ? "accelerometer and gyro" : "accelerometer only"), \(timestamps ? "IIO timestamps" : "host clock"), \(scaleText(scale))\(mode.summary))")
                    // The file is made at the first sample, with the columns of the opening that
                    // gave it (a buffer that stays empty is followed by a polled opening).
                    p.opened = (name, gyro, actual)
                case .stalled(let seconds): Output.error("the sensor stalled: no sample for \(DecimalFormat.string(seconds, decimals: 1)) s")
                case .dropped(let n): p.dropped += n
                case .rateNormal: break
                case .failed(let reason, let retry): Output.error("\(reason); retrying in \(DecimalFormat.string(retry, decimals: 1)) s")
                case .rateOff(let measured, let nominal):
                    Output.error("the sensor runs at \(DecimalFormat.string(measured, decimals: 1)) Hz instead of \(Int(nominal)) Hz")
                }
            }
        })
        installTerminationHandlers()
        let start = Date()
        let terminal = isatty(STDOUT_FILENO) != 0
        while !terminationRequested.load(ordering: .relaxed) {
            usleep(200_000)
            if let duration, Date().timeIntervalSince(start) >= duration { break }
            let p = progress.withLock { $0 }
            if let problem = p.problem {
                sampler.stop()
                Output.error(problem)
                throw ExitCode(1)
            }
            if terminal {
                let seconds = p.last - p.first
                let measured = seconds > 0 ? Double(p.samples - 1) / seconds : 0
                Output.line("\r\(p.samples) samples, \(DecimalFormat.string(measured, decimals: 1)) Hz, \(p.dropped) dropped   ", terminator: "")
                fflush(nil)
            }
        }
        sampler.stop()
        usleep(300_000)
        let p = progress.withLock { p -> Progress in
            try? p.writer?.flush()
            return p
        }
        if terminal { Output.line("") }
        guard p.samples > 0 else {
            Output.error("no samples recorded from \(uri)")
            throw ExitCode(1)
        }
        Output.line("\(out): \(p.samples) samples over \(DecimalFormat.string(p.last - p.first, decimals: 1)) s, \(p.dropped) dropped")
    }
}
