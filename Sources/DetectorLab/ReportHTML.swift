// SPDX-License-Identifier: Apache-2.0
import RideGuardCore

/// Renders a `TraceReport` as one self-contained HTML page: inline SVG and CSS, no scripts, opens
/// offline. Charts are drawn as min/max per pixel column.
package enum ReportHTML {
    static let plotWidth = 1100.0
    static let left = 70.0

    package static func render(_ r: TraceReport, configuration: DetectorConfiguration = DetectorConfiguration()) -> String {
        var html = head(title: "RideGuard report: \(name(r.source))")
        html += "<h1>RideGuard report <span class=muted>\(Markup.escaped(name(r.source)))</span></h1>\n"
        html += summary(r, configuration)
        let span = (r.overview.start, r.overview.start + r.overview.width * Double(max(1, r.overview.bins.count)))
        html += "<h2>The whole trace</h2>\n" + charts(r.overview, span: span, r: r, configuration: configuration, id: "overview")
        for (i, detail) in r.details.enumerated() {
            html += "<h2>Around the crash at \(seconds(detail.event.t))</h2>\n"
            html += "<p class=muted>\(Markup.escaped(describe(detail.event)))</p>\n"
            let window = (detail.bins.start, detail.bins.end)
            html += charts(detail.bins, span: window, r: r, configuration: configuration, id: "detail\(i)")
        }
        html += eventTable(r.events)
        html += legend()
        return html + "</body></html>\n"
    }

    // MARK: - Parts

    static func head(title: String) -> String {
        """
        <!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>\(Markup.escaped(title))</title><style>
        body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1d2330;background:#fff}
        h1{font-size:22px;margin:0 0 8px} h2{font-size:17px;margin:28px 0 6px} .muted{color:#667;font-weight:normal}
        table{border-collapse:collapse;margin:8px 0} td,th{border:1px solid #d8dce4;padding:4px 8px;text-align:left;vertical-align:top}
        th{background:#f2f4f8} .verdict{font-size:16px;padding:8px 12px;border-radius:6px;display:inline-block;margin:6px 0}
        .crash{background:#fde3e1;color:#8a1c12} .ok{background:#e2f4e6;color:#17602b}
        svg{display:block;margin:4px 0;overflow:visible} .axis{font:11px sans-serif;fill:#556}
        .grid{stroke:#e6e9ef;stroke-width:1} .series{fill:none;stroke-width:1.2} .event:hover{stroke-width:5}
        </style></head><body>

        """
    }

    static func summary(_ r: TraceReport, _ c: DetectorConfiguration) -> String {
        let s = r.summary
        let measured = s.duration > 0 ? Double(s.samples - 1) / s.duration : 0
        var rows: [(String, String)] = [
            ("trace", name(r.source)),
            ("duration", "\(seconds(s.duration)) (\(s.samples) samples)"),
            ("rate", "nominal \(r.header?.rateHz.map { "\(DecimalFormat.string($0, decimals: 0)) Hz" } ?? "not stated"), measured \(DecimalFormat.string(measured, decimals: 1)) Hz"),
            ("sensors", (r.hasGyro ? "accelerometer and gyro" : "accelerometer only") + (r.hasSpeed ? ", GPS speed" : "")),
            ("sensor range", r.header?.metadata.last(where: { $0.key == "range_g" }).map { "±\($0.value) g" } ?? "not stated"),
            ("mounting (learned up, sensor frame)", r.up.map { "(\(DecimalFormat.string($0.x, decimals: 3)), \(DecimalFormat.string($0.y, decimals: 3)), \(DecimalFormat.string($0.z, decimals: 3)))" } ?? "not learned"),
        ]
        let faults = r.events.compactMap { if case .sensorFault(let t, let f) = $0 { "\(seconds(t)): \(f.summary)" } else { nil } }
        rows.append(("sensor faults", faults.isEmpty ? "none" : faults.prefix(8).joined(separator: "<br>") + (faults.count > 8 ? "<br>… \(faults.count - 8) more" : "")))
        let crashes = r.events.compactMap { if case .crashDetected(let t, let e) = $0 { (t, e) } else { nil } }
        var html = ""
        if let (t, e) = crashes.first {
            html += "<div class=\"verdict crash\">CRASH DETECTED at \(seconds(t)): \(Markup.escaped(e.summary)) (\(e.reason.rawValue))</div>\n"
        } else {
            html += "<div class=\"verdict ok\">No crash detected</div>\n"
        }
        html += "<table>" + rows.map { "<tr><th>\(Markup.escaped($0.0))</th><td>\($0.0 == "sensor faults" ? $0.1 : Markup.escaped($0.1))</td></tr>" }.joined() + "</table>\n"
        html += "<p class=muted>Detector: lying beyond \(DecimalFormat.string(c.lyingAngleDegrees, decimals: 0))° and still for \(DecimalFormat.string(c.restConfirmationSeconds, decimals: 2)) s, or a collision pulse (≥ \(DecimalFormat.string(c.collisionPeakG, decimals: 0)) g horizontal, ≥ \(DecimalFormat.string(c.collisionDeltaV, decimals: 1)) m/s) then still.</p>\n"
        return html
    }

    struct Series {
        var label: String
        var unit: String
        var maximum: Double
        var color: String
        var value: (Bins.Bin) -> (min: Double, max: Double)
        var lines: [(Double, String)]
    }

    static func charts(_ bins: Bins, span: (Double, Double), r: TraceReport, configuration c: DetectorConfiguration, id: String) -> String {
        let rangeG = r.header?.metadata.last(where: { $0.key == "range_g" }).flatMap { Double($0.value) }
        let peakG = bins.bins.map(\.accel.max).filter(\.isFinite).max() ?? 2
        var series = [Series(label: "acceleration", unit: "g", maximum: max(2, min(max(peakG, rangeG ?? 0) * 1.1, 40)), color: "#1f6feb",
                             value: { ($0.accel.min, $0.accel.max) }, lines: [(1, "1 g")] + (rangeG.map { [($0, "range ±\(DecimalFormat.string($0, decimals: 0)) g")] } ?? []))]
        if r.hasGyro {
            let peak = bins.bins.map(\.rotation.max).filter(\.isFinite).max() ?? 100
            series.append(Series(label: "rotation", unit: "°/s", maximum: max(50, peak * 1.1), color: "#8250df",
                                 value: { ($0.rotation.min, $0.rotation.max) }, lines: []))
        }
        series.append(Series(label: "posture from upright", unit: "°", maximum: 180, color: "#bf3989",
                             value: { ($0.posture.min, $0.posture.max) },
                             lines: [(c.lyingAngleDegrees, "lying \(DecimalFormat.string(c.lyingAngleDegrees, decimals: 0))°"), (90, "on its side")]))
        if r.hasSpeed {
            let peak = bins.bins.map(\.speed.max).filter(\.isFinite).max() ?? 50
            series.append(Series(label: "GPS speed", unit: "km/h", maximum: max(20, peak * 1.1), color: "#1a7f37",
                                 value: { ($0.speed.min, $0.speed.max) }, lines: []))
        }
        let chartHeight = 120.0, gap = 26.0, band = 18.0
        let height = Double(series.count) * (chartHeight + gap) + band + 40
        var svg = "<svg id=\"\(id)\" width=\"\(Int(left + plotWidth + 20))\" height=\"\(Int(height))\" role=\"img\">"
        let duration = max(span.1 - span.0, 1e-6)
        func x(_ t: Double) -> Double { left + (t - span.0) / duration * plotWidth }
        // Columns: bins falling in one pixel column are merged.
        var columns: [Int: Bins.Bin] = [:]
        for (i, bin) in bins.bins.enumerated() {
            let t = bins.start + (Double(i) + 0.5) * bins.width
            let column = Int(x(t).rounded())
            columns[column, default: Bins.Bin()].merge(bin)
        }
        let sorted = columns.keys.sorted()
        for (n, s) in series.enumerated() {
            let top = Double(n) * (chartHeight + gap) + 14
            func y(_ v: Double) -> Double { top + chartHeight - min(max(v, 0), s.maximum) / s.maximum * chartHeight }
            svg += "<text class=axis x=\"\(Int(left))\" y=\"\(Int(top - 3))\">\(Markup.escaped(s.label)) (\(Markup.escaped(s.unit)))</text>"
            svg += "<rect x=\"\(Int(left))\" y=\"\(Int(top))\" width=\"\(Int(plotWidth))\" height=\"\(Int(chartHeight))\" fill=\"#fbfcfe\" stroke=\"#d8dce4\"/>"
            for fraction in [0.0, 0.5, 1.0] {
                let v = s.maximum * fraction
                svg += "<line class=grid x1=\"\(Int(left))\" x2=\"\(Int(left + plotWidth))\" y1=\"\(fmt(y(v)))\" y2=\"\(fmt(y(v)))\"/>"
                svg += "<text class=axis x=\"\(Int(left - 6))\" y=\"\(fmt(y(v) + 4))\" text-anchor=\"end\">\(DecimalFormat.string(v, decimals: v < 10 ? 1 : 0))</text>"
            }
            for (value, label) in s.lines where value <= s.maximum {
                svg += "<line x1=\"\(Int(left))\" x2=\"\(Int(left + plotWidth))\" y1=\"\(fmt(y(value)))\" y2=\"\(fmt(y(value)))\" stroke=\"#c9510c\" stroke-dasharray=\"4 3\"/>"
                svg += "<text class=axis x=\"\(Int(left + plotWidth - 4))\" y=\"\(fmt(y(value) - 3))\" text-anchor=\"end\" fill=\"#c9510c\">\(Markup.escaped(label))</text>"
            }
            var path = ""
            for column in sorted {
                let v = s.value(columns[column]!)
                guard v.min.isFinite && v.max.isFinite else { continue }
                let y1 = y(v.max), y2 = max(y(v.min), y1 + 0.8)
                path += "M\(column) \(fmt(y1))V\(fmt(y2))"
            }
            svg += "<path class=series stroke=\"\(s.color)\" d=\"\(path)\"/>"
        }
        // The detector's phase as a band.
        let bandTop = Double(series.count) * (chartHeight + gap) + 6
        svg += "<text class=axis x=\"\(Int(left))\" y=\"\(Int(bandTop - 3))\">detector</text>"
        let binPixels = max(1.2, bins.width / duration * plotWidth + 0.6)
        for column in sorted {
            let phase = Bins.phases[columns[column]!.phase]
            svg += "<rect x=\"\(column)\" y=\"\(Int(bandTop))\" width=\"\(fmt(binPixels))\" height=\"\(Int(band))\" fill=\"\(color(phase))\"><title>\(phase.rawValue)</title></rect>"
        }
        // Time axis.
        let axisY = bandTop + band + 16
        let step = niceStep(duration / 8)
        var tick = (span.0 / step).rounded(.up) * step
        while tick <= span.1 {
            svg += "<text class=axis x=\"\(fmt(x(tick)))\" y=\"\(fmt(axisY))\" text-anchor=\"middle\">\(seconds(tick))</text>"
            tick += step
        }
        // Events: a marker across every chart, the evidence on hover.
        for event in r.events where event.t >= span.0 && event.t <= span.1 {
            guard let stroke = marker(event) else { continue }
            svg += "<line class=event x1=\"\(fmt(x(event.t)))\" x2=\"\(fmt(x(event.t)))\" y1=\"10\" y2=\"\(fmt(bandTop + band))\" stroke=\"\(stroke)\" stroke-width=\"2\" opacity=\"0.8\"><title>\(Markup.escaped(seconds(event.t) + " " + describe(event)))</title></line>"
        }
        return svg + "</svg>\n"
    }

    static func eventTable(_ events: [DetectorEvent]) -> String {
        guard !events.isEmpty else { return "<h2>Events</h2><p>None.</p>\n" }
        var html = "<h2>Events</h2><table><tr><th>time</th><th>event</th><th>evidence</th></tr>"
        for event in events.prefix(500) {
            html += "<tr><td>\(seconds(event.t))</td><td>\(event.name)</td><td>\(Markup.escaped(describe(event)))</td></tr>"
        }
        if events.count > 500 { html += "<tr><td colspan=3>… \(events.count - 500) more</td></tr>" }
        return html + "</table>\n"
    }

    static func legend() -> String {
        let phases: [(CrashDetector.Phase, String)] = [(.learning, "learning the bike's upright"), (.moving, "riding or moving"),
                                                       (.still, "still (smoothed signals steady)"), (.lying, "lying beyond the angle"), (.crashed, "crash declared")]
        return "<h2>Legend</h2><table>" + phases.map { "<tr><td style=\"background:\(color($0.0));width:24px\"></td><td>\($0.0.rawValue): \($0.1)</td></tr>" }.joined()
            + "<tr><td style=\"background:#d1242f\"></td><td>crash detected</td></tr><tr><td style=\"background:#8250df\"></td><td>parked bike fell (no countdown)</td></tr><tr><td style=\"background:#d4a72c\"></td><td>impact</td></tr>"
            + "<tr><td style=\"background:#57606a\"></td><td>sensor fault, re-armed, upright learned</td></tr></table>\n"
    }

    // MARK: - Helpers

    static func marker(_ event: DetectorEvent) -> String? {
        switch event {
        case .crashDetected: "#d1242f"
        case .parkedFall: "#8250df"
        case .impact: "#d4a72c"
        case .sensorFault(_, let fault) where fault.isDroppedSample: nil
        case .sensorFault, .rearmed, .uprightLearned: "#57606a"
        }
    }

    static func color(_ phase: CrashDetector.Phase) -> String {
        switch phase {
        case .learning: "#d0d7de"
        case .moving: "#7ee2a8"
        case .still: "#9ecbff"
        case .lying: "#ffb77c"
        case .crashed: "#ff8182"
        }
    }

    static func describe(_ event: DetectorEvent) -> String {
        let line = event.humanLine
        guard let range = line.firstRange(of: " s  ") else { return line }
        return String(line[range.upperBound...])
    }

    static func niceStep(_ raw: Double) -> Double {
        let steps = [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600]
        return steps.first { $0 >= raw } ?? 7200
    }

    static func seconds(_ t: Double) -> String { DecimalFormat.string(t, decimals: t.magnitude < 100 ? 2 : 1) + " s" }

    static func fmt(_ v: Double) -> String { DecimalFormat.string(v, decimals: 1) }

    static func name(_ path: String) -> String { path.split(separator: "/").last.map(String.init) ?? path }
}
