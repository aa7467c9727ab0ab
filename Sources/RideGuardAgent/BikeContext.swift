// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import RideGuardCore
import Synchronization
import AgentControl

/// Who is with the bike, shared by the parts that learn it and the ones that show it: the ignition
/// (written from its line, read by the sampler at each sample), the detector's context (written by
/// the sampler when it changes), the last parked fall, and the Pi's under-voltage flag.
final class BikeContext: Sendable {
    /// -1: not known (not wired, or the line lost); 0 off; 1 on.
    private let ignitionLevel = Atomic<Int8>(-1)
    private let contextCode = Atomic<UInt8>(1)
    /// -1: no voltage monitor; 0 normal; 1 under-voltage.
    private let supplyLevel = Atomic<Int8>(-1)
    private let parkedFall = Mutex<Double?>(nil)
    private let ignitionChange = Mutex<Double?>(nil)

    var ignition: Bool? { Self.bool(ignitionLevel.load(ordering: .relaxed)) }

    /// Sets the ignition's level (nil: not known); returns true when it changed.
    @discardableResult
    func setIgnition(_ on: Bool?, at t: Double) -> Bool {
        guard ignitionLevel.exchange(Self.level(on), ordering: .acquiringAndReleasing) != Self.level(on) else { return false }
        ignitionChange.withLock { $0 = t }
        return true
    }

    /// When the ignition last changed (wall clock).
    var ignitionChangedAt: Double? { ignitionChange.withLock { $0 } }

    var underVoltage: Bool? {
        get { Self.bool(supplyLevel.load(ordering: .relaxed)) }
        set { supplyLevel.store(Self.level(newValue), ordering: .relaxed) }
    }

    var context: CrashDetector.Context {
        get {
            switch contextCode.load(ordering: .relaxed) {
            case 0: .riding
            case 2: .parked
            default: .stopped
            }
        }
        set {
            let code: UInt8 = switch newValue {
            case .riding: 0
            case .stopped: 1
            case .parked: 2
            }
            contextCode.store(code, ordering: .relaxed)
        }
    }

    /// When the parked bike last fell over (wall clock), this run.
    var lastParkedFall: Double? {
        get { parkedFall.withLock { $0 } }
        set { parkedFall.withLock { $0 = newValue } }
    }

    var status: AgentStatus.Bike {
        AgentStatus.Bike(context: context.rawValue, ignition: ignition.map { $0 ? "on" : "off" },
                         lastParkedFall: lastParkedFall, underVoltage: underVoltage)
    }

    private static func bool(_ level: Int8) -> Bool? { level < 0 ? nil : level == 1 }
    private static func level(_ value: Bool?) -> Int8 { value.map { $0 ? 1 : 0 } ?? -1 }
}
