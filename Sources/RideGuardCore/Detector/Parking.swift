// SPDX-License-Identifier: Apache-2.0
/// Who is with the bike: riding, stopped or parked. Parked after `parkedAfterSeconds` still with no
/// vibration and no GPS speed (or at once with the ignition off); parked until the engine has run,
/// GPS has moved or the bike has been moved about upright for `unparkSeconds` (or the ignition is
/// on). And what happened to it while parked: down (fell, or was laid down), and whether it fell.
struct Parking: Sendable {
    private(set) var context = CrashDetector.Context.stopped
    /// The ignition input, where one is wired: off parks the bike at once, on ends parked.
    private(set) var ignition: Bool?
    private var quietSince = Double.nan
    private var engineSince = Double.nan
    private var gpsMovingSince = Double.nan
    private var movedSince = Double.nan
    /// A parked bike went down (fell, or was laid down): nothing more until it stands upright again.
    var downWhileParked = false
    /// …and it fell (a `parked_fall` was reported), not laid down or lifted by a person.
    var fallReported = false

    /// Nobody is riding: a fall is the parked bike's, never a crash.
    var nobodyRiding: Bool { context == .parked || downWhileParked }

    /// Off, the bike is parked at once; on, a ride may begin; nil forgets it (the line was lost).
    mutating func setIgnition(_ on: Bool?) {
        ignition = on
        if on == false {
            context = .parked
        } else if on == true && context == .parked {
            context = .stopped
            quietSince = .nan
        }
    }

    /// `riding`: a riding spell is adding moving seconds now.
    @inline(__always) mutating func update(still: Bool, shaking: Bool, gpsMoving: Bool, lying: Bool, riding: Bool, t: Double,
                                           configuration: DetectorConfiguration) {
        func since(_ condition: Bool, _ start: inout Double) -> Double {
            if !condition { start = .nan; return 0 }
            if start.isNaN { start = t }
            return t - start
        }
        let engine = since(shaking && !gpsMoving, &engineSince)
        let moving = since(gpsMoving, &gpsMovingSince)
        let moved = since(!still && !lying, &movedSince)
        let quiet = since(still && !shaking && !gpsMoving, &quietSince)
        if ignition == false {
            context = .parked
        } else if context == .parked {
            if ignition == true || engine >= configuration.unparkSeconds || moving >= configuration.unparkSeconds
                || moved >= configuration.unparkSeconds {
                context = still ? .stopped : .riding
            }
        } else if ignition == nil && quiet >= configuration.parkedAfterSeconds {
            context = .parked
        } else {
            context = riding ? .riding : .stopped
        }
    }
}
