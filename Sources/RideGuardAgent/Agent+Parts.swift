// SPDX-License-Identifier: Apache-2.0
import GPIOLines
import IIOSensor
import Logging
import RideGuardCore

/// The real parts, or their twins, as the configuration chooses them (once, at start).
extension Agent {
    static func samples(_ imu: AgentConfiguration.IMU) -> SampleSource {
        if imu.simulated { return .trace(path: imu.trace ?? "", speed: imu.speed) }
        var sampler = SamplerConfiguration(uri: imu.uri, device: imu.device, rateHz: imu.rateHz)
        sampler.stallSeconds = 0.5
        return .iio(sampler)
    }

    static func location(_ gps: AgentConfiguration.GPS) -> LocationService.Source {
        guard gps.simulated else {
            guard let address = GPSDAddress(gps.gpsd) else { return .none }   // the configuration was checked
            return .gpsd(host: address.host, port: String(address.port))
        }
        guard let position = gps.fixedPosition, position.count == 2 else { return .none }
        return .fixed(latitude: position[0], longitude: position[1])
    }

    /// The buzzer's GPIO line, or its twin. A line that cannot be requested yet is requested again
    /// when the buzzer is next switched: alarms are silent until then, and `status` says why.
    static func buzzer(_ gpio: AgentConfiguration.GPIO, clock: any ServiceClock, problems: PartProblems, logger: Logger) -> any BuzzerOutput {
        guard !gpio.simulated else { return SimulatedBuzzer() }
        let address = GPIOLineAddress(gpio.buzzer)
        let open: @Sendable () throws(GPIOError) -> GPIOLine = { () throws(GPIOError) -> GPIOLine in try GPIOLine.output(address) }
        var line: GPIOLine?
        do { line = try open() } catch {
            logger.warning("buzzer unavailable (\(error)): alarms are silent until it can be requested")
            problems.set("buzzer", "\(error)")
        }
        return GPIOBuzzer(line: line, open: open, clock: clock) { event in
            switch event {
            case .lost(let error):
                logger.warning("buzzer: \(error); requesting it again")
                problems.set("buzzer", "\(error)")
            case .back:
                logger.info("buzzer back: \(address) works again")
                problems.set("buzzer", nil)
            }
        }
    }
}
