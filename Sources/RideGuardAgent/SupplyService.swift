// SPDX-License-Identifier: Apache-2.0
import Logging
import RideGuardCore
import ServiceLifecycle
import Storage
import SystemCalls
import PiSupply

/// Reads the under-voltage flag every 5 s; a change is journaled and shown by `status`.
struct SupplyService: Service, CustomStringConvertible {
    let monitor: SupplyMonitor
    let bike: BikeContext
    let database: RideGuardDatabase
    let clock: any ServiceClock
    let logger: Logger
    var description: String { "supply" }

    func run() async throws {
        guard monitor.alarm != nil else {
            logger.debug("supply: no Raspberry Pi voltage monitor here")
            try? await gracefulShutdown()
            return
        }
        var last: Bool?
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            let now = monitor.underVoltage()
            bike.underVoltage = now
            if let now, now != last, now || last != nil {
                let text = now ? SupplyMonitor.underVoltageText : "supply: voltage normal again"
                database.journal(JournalEntry(.system, text), at: clock.now())
                if now { logger.warning("\(text)") } else { logger.info("\(text)") }
            }
            if now != nil { last = now }
            try? await clock.sleep(until: clock.now() + 5)
        }
    }
}
