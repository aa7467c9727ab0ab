// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import RideGuardCore

/// `--detector KEY=VALUE`, shared by the commands that run the detector.
struct DetectorOptions: ParsableArguments {
    @Option(name: .customLong("detector"),
            help: ArgumentHelp("Change a detector setting, e.g. --detector lyingAngleDegrees=65 (repeatable).",
                               discussion: DetectorConfiguration.settings.map { "\($0.key): \($0.meaning)" }.joined(separator: "\n"),
                               valueName: "key=value"))
    var settings: [String] = []

    func configuration() throws -> DetectorConfiguration {
        var configuration = DetectorConfiguration()
        for setting in settings {
            guard let equals = setting.firstIndex(of: "=") else {
                throw ValidationError("--detector \(setting): expected key=value")
            }
            do {
                try configuration.set(String(setting[..<equals]), to: String(setting[setting.index(after: equals)...]))
            } catch {
                throw ValidationError("--detector \(error.description)")
            }
        }
        return configuration
    }
}
