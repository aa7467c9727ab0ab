// SPDX-License-Identifier: Apache-2.0
import RideGuardCore
import Storage

/// Min/max of a few series over time, in bins that double in width when there are too many, so
/// that a trace of any length fits in bounded memory (min/max per bin keeps every spike visible).
struct Bins {
    struct Bin {
        var accel = (min: Double.infinity, max: -Double.infinity)
        var rotation = (min: Double.infinity, max: -Double.infinity)
        var posture = (min: Double.infinity, max: -Double.infinity)
        var speed = (min: Double.infinity, max: -Double.infinity)
        var phase = 0

        mutating func merge(_ other: Bin) {
            accel = (min(accel.min, other.accel.min), max(accel.max, other.accel.max))
            rotation = (min(rotation.min, other.rotation.min), max(rotation.max, other.rotation.max))
            posture = (min(posture.min, other.posture.min), max(posture.max, other.posture.max))
            speed = (min(speed.min, other.speed.min), max(speed.max, other.speed.max))
            phase = max(phase, other.phase)
        }
    }

    let start: Double
    private(set) var width: Double
    private(set) var bins: [Bin] = []
    let maximumBins: Int
    /// Only samples in [start, end] count (detail panels).
    let end: Double

    init(start: Double, width: Double, maximumBins: Int = 2400, end: Double = .infinity) {
        self.start = start
        self.width = width
        self.maximumBins = maximumBins
        self.end = end
    }

    /// The severity order of the detector's phases, for the band (the worst in a bin shows).
    static let phases: [CrashDetector.Phase] = [.learning, .moving, .still, .lying, .crashed]

    mutating func add(_ sample: IMUSample, posture: Double, phase: CrashDetector.Phase) {
        guard sample.t >= start && sample.t <= end else { return }
        var index = Int((sample.t - start) / width)
        while index >= maximumBins {
            halve()
            index = Int((sample.t - start) / width)
        }
        while bins.count <= index { bins.append(Bin()) }
        let g = sample.accel.magnitude / standardGravity
        bins[index].accel = (min(bins[index].accel.min, g), max(bins[index].accel.max, g))
        if let w = sample.gyro {
            let dps = w.magnitude * 180 / .pi
            bins[index].rotation = (min(bins[index].rotation.min, dps), max(bins[index].rotation.max, dps))
        }
        bins[index].posture = (min(bins[index].posture.min, posture), max(bins[index].posture.max, posture))
        if let speed = sample.speed {
            let kmh = speed * 3.6
            bins[index].speed = (min(bins[index].speed.min, kmh), max(bins[index].speed.max, kmh))
        }
        bins[index].phase = max(bins[index].phase, Bins.phases.firstIndex(of: phase) ?? 0)
    }

    private mutating func halve() {
        var merged: [Bin] = []
        merged.reserveCapacity(bins.count / 2 + 1)
        var i = 0
        while i < bins.count {
            var bin = bins[i]
            if i + 1 < bins.count { bin.merge(bins[i + 1]) }
            merged.append(bin)
            i += 2
        }
        bins = merged
        width *= 2
    }
}

/// Everything a report shows about one trace.
package struct TraceReport: Sendable {
    package var source: String
    package var header: TraceHeader?
    package var summary: TraceReplay.Summary
    package var events: [DetectorEvent] = []
    var overview: Bins
    var details: [(event: DetectorEvent, bins: Bins)] = []
    package var up: Vector3?
    package var hasGyro = false
    package var hasSpeed = false

    /// Replays `path` through the detector and gathers the report (a second pass over the file
    /// draws the detail panels around each crash).
    package static func build(path: String, configuration: DetectorConfiguration = DetectorConfiguration(),
                             detailSeconds: Double = 15) throws -> TraceReport {
        var detector = CrashDetector(configuration: configuration)
        var overview: Bins?
        var events: [DetectorEvent] = []
        var summary = TraceReplay.Summary(source: path == "-" ? "stdin" : path)
        let parser = try TraceFile.stream(path: path) { sample in
            if overview == nil { overview = Bins(start: sample.t, width: 0.01) }
            summary.count(sample.t)
            detector.process(sample) { event in
                events.append(event)
                switch event {
                case .crashDetected(let t, _): summary.crashes.append(t)
                case .sensorFault: summary.faults += 1
                default: break
                }
            }
            overview!.add(sample, posture: detector.postureDegrees, phase: detector.phase)
        }
        let header = parser.header
        summary.header = header
        var report = TraceReport(source: path == "-" ? "stdin" : path, header: header, summary: summary, events: events,
                                 overview: overview ?? Bins(start: 0, width: 1), up: detector.up)
        report.hasGyro = header?.hasGyro ?? false
        report.hasSpeed = header?.hasSpeed ?? false
        let crashes = events.filter { if case .crashDetected = $0 { true } else { false } }
        guard !crashes.isEmpty, path != "-" else { return report }
        var windows = crashes.map { event in
            (event: event, bins: Bins(start: event.t - detailSeconds, width: detailSeconds * 2 / 600, maximumBins: 601,
                                      end: event.t + detailSeconds))
        }
        var second = CrashDetector(configuration: configuration)
        try TraceFile.stream(path: path) { sample in
            second.process(sample) { _ in }
            for i in windows.indices { windows[i].bins.add(sample, posture: second.postureDegrees, phase: second.phase) }
        }
        report.details = windows
        return report
    }
}
