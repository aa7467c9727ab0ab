// SPDX-License-Identifier: Apache-2.0
import Logging
import RideGuardCore
import Storage
import SystemCalls
import SystemTime

extension Agent {
    /// The database, however long it takes: one that cannot be opened (a card not mounted, a
    /// folder gone, a damaged file) sounds the fault pattern, set up before anything else, and is
    /// tried again every `retrySeconds`, the reason logged each time it changes. systemd hears
    /// READY=1 with the reason (the boot never waits on the card) and the watchdog is fed while it
    /// waits. Nil only when `stopping` says to give up (the service is being stopped).
    package static func openDatabase(_ configuration: AgentConfiguration, clock: any ServiceClock = SystemServiceClock(),
                                    retrySeconds: Double = 10, logger: Logger,
                                    stopping: @Sendable () -> Bool = { false }) async -> RideGuardDatabase? {
        var buzzer: BuzzerPlayer?
        var said: String?
        while !stopping() {
            do {
                let database = try RideGuardDatabase(path: configuration.database)
                if buzzer != nil { logger.info("the database \(configuration.database) opens now") }
                await buzzer?.play(.off)
                return database
            } catch {
                let reason = "cannot open the database \(configuration.database): \(error); NOT protecting, trying again every \(Int(retrySeconds)) s"
                if reason != said {
                    logger.error("\(reason)")
                    SystemdNotify.send("READY=1\nSTATUS=" + reason)
                }
                said = reason
                if buzzer == nil {
                    let player = BuzzerPlayer(output: Self.buzzer(configuration.gpio, clock: clock, problems: PartProblems(), logger: logger), clock: clock) {
                        [simulated = configuration.gpio.simulated] pattern in
                        if simulated { logger.info("buzzer: \(pattern.meaning)") }
                    }
                    await player.play(.fault)
                    buzzer = player
                }
                let retry = clock.now() + retrySeconds
                while clock.now() < retry && !stopping() {
                    SystemdNotify.send("WATCHDOG=1")
                    try? await clock.sleep(until: min(retry, clock.now() + 1))
                }
            }
        }
        await buzzer?.play(.off)
        return nil
    }
}
