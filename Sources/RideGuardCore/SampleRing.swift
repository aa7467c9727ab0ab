// SPDX-License-Identifier: Apache-2.0
/// The last seconds of samples, kept in memory so that a crash can be saved with what led to it.
/// Fixed capacity, allocated once: appending never allocates. Readings are kept as 32-bit floats
/// (7 significant digits, far finer than any IMU's resolution) and the time as a Double: 40 bytes a
/// sample instead of 80, so a minute at 1 kHz takes 2.4 MB.
package struct SampleRing: Sendable {
    /// One sample, compact: a missing gyro or speed is NaN.
    struct Stored: Sendable {
        var t: Double
        var ax: Float, ay: Float, az: Float
        var gx: Float, gy: Float, gz: Float
        var speed: Float

        init(_ s: IMUSample) {
            t = s.t
            ax = Float(s.accel.x); ay = Float(s.accel.y); az = Float(s.accel.z)
            gx = Float(s.gyro?.x ?? .nan); gy = Float(s.gyro?.y ?? .nan); gz = Float(s.gyro?.z ?? .nan)
            speed = Float(s.speed ?? .nan)
        }

        var sample: IMUSample {
            IMUSample(t: t, accel: Vector3(Double(ax), Double(ay), Double(az)),
                      gyro: gx.isNaN ? nil : Vector3(Double(gx), Double(gy), Double(gz)),
                      speed: speed.isNaN ? nil : Double(speed))
        }
    }

    private var storage: [Stored] = []
    private var next = 0
    private var filled = false
    package let capacity: Int

    /// Room for `seconds` at up to `rateHz`, reserved at once but touched only as it fills: the
    /// agent's memory grows to it over the first minute, not while every part is starting.
    package init(seconds: Double, rateHz: Double) {
        capacity = max(1, Int((seconds * rateHz).rounded(.up)))
        storage.reserveCapacity(capacity)
    }

    package var count: Int { filled ? storage.count : next }

    package mutating func append(_ sample: IMUSample) {
        if storage.count < capacity { storage.append(Stored(sample)) } else { storage[next] = Stored(sample) }
        next += 1
        if next == capacity {
            next = 0
            filled = true
        }
    }

    /// The samples from `start` to `end` (trace time), oldest first.
    package func window(from start: Double, to end: Double) -> [IMUSample] {
        var out: [IMUSample] = []
        let first = filled ? next : 0
        for i in 0..<count {
            let stored = storage[(first + i) % storage.count]
            if stored.t >= start && stored.t <= end { out.append(stored.sample) }
        }
        return out
    }
}
