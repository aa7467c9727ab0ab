/// The last seconds of samples, kept in memory so that a crash can be saved with what led to it.
/// Fixed capacity, allocated once: appending never allocates.
public struct SampleRing: Sendable {
    private var storage: [IMUSample]
    private var next = 0
    private var filled = false

    /// Room for `seconds` at up to `rateHz`.
    public init(seconds: Double, rateHz: Double) {
        let capacity = max(1, Int((seconds * rateHz).rounded(.up)))
        storage = Array(repeating: IMUSample(t: 0, accel: .zero), count: capacity)
    }

    public var capacity: Int { storage.count }
    public var count: Int { filled ? storage.count : next }

    public mutating func append(_ sample: IMUSample) {
        storage[next] = sample
        next += 1
        if next == storage.count {
            next = 0
            filled = true
        }
    }

    /// The samples from `start` to `end` (trace time), oldest first.
    public func window(from start: Double, to end: Double) -> [IMUSample] {
        var out: [IMUSample] = []
        let first = filled ? next : 0
        for i in 0..<count {
            let sample = storage[(first + i) % storage.count]
            if sample.t >= start && sample.t <= end { out.append(sample) }
        }
        return out
    }
}
