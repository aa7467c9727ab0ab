// SPDX-License-Identifier: Apache-2.0
/// Whether what was done last at `last` (nil: never) is due again at `now`, every `interval`
/// seconds. A clock set back (a Pi without a real-time clock, then NTP or GPS) makes it due at once,
/// never silent until the clock has caught up.
func isDue(since last: Double?, now: Double, every interval: Double) -> Bool {
    guard let last else { return true }
    return now - last >= interval || now < last
}
