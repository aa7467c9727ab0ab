// SPDX-License-Identifier: Apache-2.0
import ServiceLifecycle

/// The emergency workflow as the group's first service, so it stops last: resumes an emergency
/// saved before a restart, takes inputs until the group shuts down, handles what was posted before
/// that, then stops its timers, retries and buzzer (the saved state stays for the next start).
struct EmergencyWorkflowService: Service, CustomStringConvertible {
    let emergency: EmergencyService
    var description: String { "emergency workflow" }

    func run() async throws {
        await emergency.resume()
        async let inputs: Void = emergency.run()
        try? await gracefulShutdown()
        emergency.finishInputs()
        await inputs
        await emergency.shutdown()
    }
}
