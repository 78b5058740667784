import Foundation
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput

/// Thread: control. Draws a `MixPlot` as a self-contained SVG document, written by hand (no dependencies).
///
/// Layout, top to bottom: a title; one waveform lane per output channel (min/max of each pixel column, with
/// the ±1 full-scale lines); one lane per track, effect and timeline-driven bus (labels on the left, wrapped
/// whole; levels drawn to one volume scale, `levelHeight` pixels for full scale); the time axis in seconds with
/// labelled ticks, whose grid lines run through every lane; a legend. Every frame f is drawn at
/// x = `plotLeft` + f · `plotWidth` / `frameCount`, so all lanes share one time axis.
extension MixPlot {
    /// Width of the whole drawing, in pixels.
    public static let width = 1400.0
    /// Left edge of the time axis (lane labels sit left of it).
    public static let plotLeft = 170.0
    /// Length of the time axis in pixels; the waveform has one column per pixel.
    public static let plotWidth = 1120.0
    /// Half the height of a waveform lane's ±1 range: a sample of value v is drawn v · this above the lane's
    /// centre line.
    public static let waveformScale = 40.0

    /// Height of a lane's level: a span's top edge is drawn gain / `volumeScale` · this above its lane's
    /// baseline, so every lane shares one volume scale and 0.25 is a quarter of full height.
    public static let levelHeight = 24.0
    /// Characters per line of a lane's name (bold 13 px) before it wraps onto the next line.
    public static let nameColumns = 18
    /// Characters per line of a lane's summary (11 px) before it wraps onto the next line.
    public static let detailColumns = 24

    /// The volume at the top of every lane's scale: 1, or the largest volume in the plot when one is louder.
    public var volumeScale: Double {
        let spans = lanes.flatMap(\.spans).map { Double($0.volume.maximum) }
        let buses = lanes.compactMap(\.volume).map { Double($0.maximum) }
        return max(1, (spans + buses).max() ?? 1)
    }

    /// Pixel columns a `WaveformOverview` for this plot should have.
    public static var waveformColumns: Int { Int(plotWidth) }

    /// The x coordinate of scene frame `frame`.
    public func x(frame: Int64) -> Double {
        Self.plotLeft + Double(frame) * Self.plotWidth / Double(max(frameCount, 1))
    }

    /// The drawing, as an SVG 1.1 document.
    public func svg() -> String {
        var out = SVGText()
        let x0 = Self.plotLeft, x1 = Self.plotLeft + Self.plotWidth
        let waveHeight = 100.0, titleHeight = 58.0
        let channels = waveform.channelCount
        let wavesTop = titleHeight
        let lanesTop = wavesTop + Double(channels) * waveHeight + 8
        // Each lane is 44 px, and taller by a line for each extra line its wrapped name and summary need.
        let labels = lanes.map { (Self.wrapped($0.name, columns: Self.nameColumns), Self.wrapped($0.detail, columns: Self.detailColumns)) }
        let laneHeights = labels.map { 44 + 16 * Double($0.0.count - 1) + 13 * Double($0.1.count - 1) }
        let laneTops = laneHeights.indices.map { k in lanesTop + laneHeights[..<k].reduce(0, +) }
        let axisY = lanesTop + laneHeights.reduce(0, +) + 6
        let scale = volumeScale
        let legendTop = axisY + 44
        let height = legendTop + 76

        out.line(##"<?xml version="1.0" encoding="UTF-8"?>"##)
        out.line(##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(f(Self.width))" height="\##(f(height))" "##
            + ##"viewBox="0 0 \##(f(Self.width)) \##(f(height))" font-family="DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif">"##)
        out.line(##"<rect x="0" y="0" width="\##(f(Self.width))" height="\##(f(height))" fill="#ffffff"/>"##)

        // Title: what was rendered, how long, how loud.
        let seconds = Double(frameCount) / sampleRate
        let peaks = (0..<channels).map { c -> String in
            let p = waveform.peak(channel: c)
            let db = p > 0 ? String(format: "%+.1f dBFS", 20 * log10(Double(p))) : "silent"
            return "\(Self.channelName(c, of: channels)) \(db)"
        }
        out.text(x: 16, y: 26, size: 18, weight: "bold", escape(title))
        out.text(x: 16, y: 46, size: 13, fill: "#444444",
                 escape(String(format: "%.2f s at %.0f Hz · %lld frames · peak ", seconds, sampleRate, frameCount)
                        + peaks.joined(separator: ", ")))

        // Time grid first, so that everything else is drawn over it.
        let step = Self.tickStep(seconds: seconds)
        let ticks = stride(from: 0.0, through: seconds + step * 1e-9, by: step).map { $0 }
        out.line(##"<g class="grid" stroke="#e3e3e3" stroke-width="1">"##)
        for t in ticks {
            let x = self.x(frame: Int64((t * sampleRate).rounded()))
            out.line(##"<line x1="\##(f(x))" y1="\##(f(wavesTop))" x2="\##(f(x))" y2="\##(f(axisY))"/>"##)
        }
        out.line("</g>")

        // Waveform lanes.
        for c in 0..<channels {
            let top = wavesTop + Double(c) * waveHeight
            let mid = top + waveHeight / 2
            let scale = Self.waveformScale
            out.line(##"<g class="channel" data-channel="\##(c)">"##)
            out.line(##"<rect x="\##(f(x0))" y="\##(f(top + 4))" width="\##(f(Self.plotWidth))" height="\##(f(waveHeight - 8))" fill="#f6f8fb" stroke="#d0d7e2"/>"##)
            out.text(x: 12, y: mid - 4, size: 14, weight: "bold", Self.channelName(c, of: channels) + " channel")
            out.text(x: 12, y: mid + 13, size: 11, fill: "#555555", "output waveform")
            for (v, label) in [(1.0, "+1"), (0.0, "0"), (-1.0, "−1")] {
                let y = mid - v * scale
                let dash = v == 0 ? "" : ##" stroke-dasharray="4 3""##
                out.line(##"<line x1="\##(f(x0))" y1="\##(f(y))" x2="\##(f(x1))" y2="\##(f(y))" stroke="#b8c2d0" stroke-width="1"\##(dash)/>"##)
                out.text(x: x0 - 5, y: y + 4, size: 10, fill: "#666666", anchor: "end", label)
            }
            // Upper edge left to right along the maxima, lower edge back along the minima; clamped to ±1.2 so
            // an overload stays inside its lane.
            func y(_ v: Float) -> Double { mid - Double(min(max(v, -1.2), 1.2)) * scale }
            let n = waveform.columns
            let px = Self.plotWidth / Double(n)
            var d = "M"
            for i in 0..<n {
                d += " \(f(x0 + Double(i) * px)),\(f(y(waveform.maximum[c][i]))) \(f(x0 + Double(i + 1) * px)),\(f(y(waveform.maximum[c][i])))"
            }
            for i in stride(from: n - 1, through: 0, by: -1) {
                d += " \(f(x0 + Double(i + 1) * px)),\(f(y(waveform.minimum[c][i]))) \(f(x0 + Double(i) * px)),\(f(y(waveform.minimum[c][i])))"
            }
            out.line(##"<path class="waveform" data-channel="\##(c)" d="\##(d) Z" fill="#3b6ea8" stroke="#2c5282" stroke-width="0.5"/>"##)
            out.line("</g>")
        }

        // Track, effect and bus lanes.
        for (k, lane) in lanes.enumerated() {
            let top = laneTops[k], laneHeight = laneHeights[k]
            let barTop = top + 14, barBottom = barTop + Self.levelHeight
            // A gain's height on the lanes' common volume scale.
            func y(_ gain: Float) -> Double { barBottom - Double(gain) / scale * Self.levelHeight }
            // The gain outline between a span's bottom corners (a span at least 2 px wide).
            func points(_ span: Span) -> String {
                let xs = x(frame: span.start), xe = max(x(frame: span.end ?? frameCount), xs + 2)
                var corners: [String] = []
                for (px, py) in [(xs, barBottom)] + outline(of: span).map({ (x(frame: $0.frame), y($0.gain)) }) + [(xe, barBottom)] {
                    let corner = "\(f(px)),\(f(py))"
                    if corners.last != corner { corners.append(corner) }
                }
                return corners.joined(separator: " ")
            }
            let colour = Self.colour(lane.kind)
            out.line(##"<g class="lane" data-kind="\##(lane.kind.rawValue)" data-name="\##(escape(lane.name))">"##)
            if k % 2 == 0 {
                out.line(##"<rect x="0" y="\##(f(top))" width="\##(f(Self.width))" height="\##(f(laneHeight))" fill="#000000" fill-opacity="0.025"/>"##)
            }
            // The name and summary, whole: wrapped onto as many lines as they need.
            let (nameLines, detailLines) = labels[k]
            for (i, line) in nameLines.enumerated() {
                out.text(x: 12, y: top + 19 + 16 * Double(i), size: 13, weight: "bold", cls: i == 0 ? "lane-label" : "lane-label-more", escape(line))
            }
            for (i, line) in detailLines.enumerated() {
                out.text(x: 12, y: top + 35 + 16 * Double(nameLines.count - 1) + 13 * Double(i), size: 11, fill: "#555555",
                         cls: i == 0 ? nil : "lane-detail-more", escape(line))
            }
            // The volume scale, the same in every lane: 0 on the baseline, full scale on the dashed line.
            if lane.kind != .listener {
                out.line(##"<line class="scale" x1="\##(f(x0))" y1="\##(f(barTop))" x2="\##(f(x1))" y2="\##(f(barTop))" stroke="#cccccc" stroke-width="0.75" stroke-dasharray="3 3"/>"##)
                out.text(x: x0 - 4, y: barTop + 3.5, size: 9, fill: "#777777", anchor: "end", cls: "scale-top", Self.decimal(scale))
                out.text(x: x0 - 4, y: barBottom, size: 9, fill: "#777777", anchor: "end", cls: "scale-bottom", "0")
            }
            // Where its bus was paused: a grey band under the spans.
            for pause in lane.paused {
                let xs = x(frame: pause.start), xe = max(x(frame: pause.end ?? frameCount), xs + 2)
                let when = String(format: "%.3f–%.3f s", Double(pause.start) / sampleRate, Double(pause.end ?? frameCount) / sampleRate)
                let endAttribute = pause.end.map { ##" data-end-frame="\##($0)""## } ?? ""
                out.line(##"<rect class="bus-paused" data-start-frame="\##(pause.start)"\##(endAttribute) x="\##(f(xs))" y="\##(f(barTop))" width="\##(f(xe - xs))" height="\##(f(barBottom - barTop))" fill="#888888" fill-opacity="0.3"><title>bus \##(escape(pause.bus)) paused \##(when)</title></rect>"##)
            }
            // A bus's volume across the whole scene.
            if let volume = lane.volume {
                let level = points(Span(start: 0, end: frameCount, volume: volume))
                out.line(##"<polygon class="level" points="\##(level)" fill="\##(colour)" fill-opacity="0.45" stroke="\##(colour)" stroke-width="1"><title>\##(escape(lane.name)): volume</title></polygon>"##)
            }
            for span in lane.spans {
                if span.reason == .refused {
                    Self.drawRefused(span, lane: lane, x: x(frame: span.start), top: barTop, bottom: barBottom, rate: sampleRate, into: &out)
                    continue
                }
                let xs = x(frame: span.start)
                let xe = max(x(frame: span.end ?? frameCount), xs + 2)
                let endAttribute = span.end.map { ##" data-end-frame="\##($0)""## } ?? ""
                var tip = String(format: "%.3f–%.3f s", Double(span.start) / sampleRate, Double(span.end ?? frameCount) / sampleRate)
                    + ", " + (span.reason?.rawValue ?? "playing at the end")
                if lane.kind == .effect { tip += ", volume \(Self.decimal(span.volume.value(from: span.start))), bus \(span.bus)" }
                out.line(##"<polygon class="span" data-start-frame="\##(span.start)"\##(endAttribute) points="\##(points(span))" fill="\##(colour)" fill-opacity="0.85" stroke="\##(colour)" stroke-width="1"><title>\##(escape(lane.name)): \##(tip)</title></polygon>"##)
                // Start tick.
                out.line(##"<line class="start" x1="\##(f(xs))" y1="\##(f(barTop - 4))" x2="\##(f(xs))" y2="\##(f(barBottom))" stroke="#1a1a1a" stroke-width="1.5"/>"##)
                // Passes closer than 3 px to the last line drawn would merge into a smear: they are skipped.
                var lastPassX = -Double.infinity
                for p in span.passStarts {
                    let xp = x(frame: p)
                    guard xp - lastPassX >= 3 else { continue }
                    lastPassX = xp
                    out.line(##"<line class="pass" data-frame="\##(p)" x1="\##(f(xp))" y1="\##(f(min(y(gain(of: span, at: p)) + 2, barBottom)))" x2="\##(f(xp))" y2="\##(f(barBottom))" stroke="#ffffff" stroke-width="1.5"/>"##)
                }
                // End reason: right of the end when it fits, else inside the bar.
                let label = span.reason?.rawValue ?? "playing at the end"
                let width = Double(label.count) * 6.3
                let inside = xe + 4 + width > Self.width - 4
                if lane.kind == .track || span.reason != .finished {
                    out.text(x: inside ? xe - 4 : xe + 4, y: barBottom - 5, size: 11, weight: "bold",
                             fill: inside ? "#ffffff" : Self.reasonColour(span.reason), anchor: inside ? "end" : "start",
                             cls: "reason", label)
                }
            }
            // A label that would run into the previous one is left out (its diamond stays, and its tooltip says
            // what it is).
            var labelEnd = -Double.infinity
            for mark in lane.marks {
                let xm = x(frame: mark.frame), ym = (barTop + barBottom) / 2
                let fill = mark.dropped ? "#ffffff" : "#1a1a1a", stroke = mark.dropped ? "#d62728" : "#ffffff"
                let label = mark.label + (mark.dropped ? " (dropped)" : "")
                let when = String(format: "%.3f s", Double(mark.frame) / sampleRate)
                out.line(##"<path class="command" data-frame="\##(mark.frame)" d="M\##(f(xm)),\##(f(ym - 7)) L\##(f(xm + 6)),\##(f(ym)) L\##(f(xm)),\##(f(ym + 7)) L\##(f(xm - 6)),\##(f(ym)) Z" fill="\##(fill)" stroke="\##(stroke)" stroke-width="1.5"><title>\##(escape(label)) at \##(when)</title></path>"##)
                if xm + 7 >= labelEnd {
                    out.text(x: xm + 7, y: top + 11, size: 10, fill: mark.dropped ? "#d62728" : "#1a1a1a", escape(label))
                    labelEnd = xm + 7 + Double(label.count) * 6 + 6
                }
            }
            out.line("</g>")
        }

        // Time axis.
        out.line(##"<g class="axis">"##)
        out.line(##"<line x1="\##(f(x0))" y1="\##(f(axisY))" x2="\##(f(x1))" y2="\##(f(axisY))" stroke="#333333" stroke-width="1"/>"##)
        for t in ticks {
            let x = self.x(frame: Int64((t * sampleRate).rounded()))
            out.line(##"<line x1="\##(f(x))" y1="\##(f(axisY))" x2="\##(f(x))" y2="\##(f(axisY + 6))" stroke="#333333"/>"##)
            out.text(x: x, y: axisY + 20, size: 12, anchor: "middle", cls: "tick", Self.tickLabel(t, step: step))
        }
        out.text(x: x0 - 22, y: axisY + 20, size: 12, fill: "#444444", anchor: "end", "time (s)")
        out.line("</g>")

        // Legend.
        out.line(##"<g class="legend">"##)
        var lx = 16.0
        let ly = legendTop
        func item(_ swatch: String, _ text: String) {
            out.line(swatch)
            out.text(x: lx + 30, y: ly + 14, size: 12, text)
            lx += 38 + Double(text.count) * 7.5
        }
        let blue = Self.colour(.track), orange = Self.colour(.effect)
        item(##"<polygon points="\##(f(lx)),\##(f(ly + 18)) \##(f(lx + 8)),\##(f(ly + 4)) \##(f(lx + 16)),\##(f(ly + 4)) \##(f(lx + 24)),\##(f(ly + 18))" fill="\##(blue)"/>"##,
             "track: start to end, height is volume, ramps are fades and volume changes")
        item(##"<rect x="\##(f(lx))" y="\##(f(ly + 2))" width="24" height="16" fill="\##(blue)"/><line x1="\##(f(lx + 12))" y1="\##(f(ly + 2))" x2="\##(f(lx + 12))" y2="\##(f(ly + 18))" stroke="#ffffff" stroke-width="1.5"/>"##,
             "new loop pass")
        item(##"<rect x="\##(f(lx))" y="\##(f(ly + 4))" width="24" height="14" fill="\##(orange)"/>"##, "effect firing")
        item(##"<path d="M\##(f(lx + 12)),\##(f(ly + 3)) L\##(f(lx + 18)),\##(f(ly + 10)) L\##(f(lx + 12)),\##(f(ly + 17)) L\##(f(lx + 6)),\##(f(ly + 10)) Z" fill="#1a1a1a"/>"##,
             "timeline command")
        item(##"<path d="M\##(f(lx + 12)),\##(f(ly + 3)) L\##(f(lx + 18)),\##(f(ly + 10)) L\##(f(lx + 12)),\##(f(ly + 17)) L\##(f(lx + 6)),\##(f(ly + 10)) Z" fill="#ffffff" stroke="#d62728" stroke-width="1.5"/>"##,
             "dropped command")
        let purple = Self.colour(.bus)
        item(##"<rect x="\##(f(lx))" y="\##(f(ly + 8))" width="24" height="10" fill="\##(purple)" fill-opacity="0.45" stroke="\##(purple)"/>"##,
             "bus volume")
        out.text(x: 16, y: ly + 42, size: 12, fill: "#444444",
                 "End reasons: finished (played out), stopped (stop or the scene's end), stolen (voice cap, polyphony or instance limit), failed (stream unreadable); refused (an effect's instance limit or cooldown: never sounded) is a dashed tick. Waveform: min/max per pixel column; dashed lines are full scale.")
        out.text(x: 16, y: ly + 60, size: 12, fill: "#444444", cls: "scale-note",
                 "Lane heights are volume on one scale: 0 on a lane's baseline, \(Self.decimal(scale)) on its dashed line; fades and the timeline's volume changes (ducks) shape them.")
        out.line("</g>")
        out.line("</svg>")
        return out.document
    }

    // MARK: Helpers

    static func channelName(_ c: Int, of count: Int) -> String {
        count == 2 ? (c == 0 ? "Left" : "Right") : "Channel \(c + 1)"
    }

    package static func colour(_ kind: Lane.Kind) -> String {
        switch kind {
        case .track: "#4c78a8"
        case .effect: "#e8871e"
        case .bus: "#8e6bb8"
        case .listener: "#2a9d8f"
        }
    }

    /// A refused firing, which never sounded: a dashed grey tick at its frame, labelled `refused`.
    private static func drawRefused(_ span: Span, lane: Lane, x: Double, top: Double, bottom: Double, rate: Double,
                                    into out: inout SVGText) {
        let grey = reasonColour(.refused)
        let when = String(format: "%.3f s", Double(span.start) / rate)
        out.line(##"<line class="refused" data-start-frame="\##(span.start)" x1="\##(f(x))" y1="\##(f(top - 4))" x2="\##(f(x))" y2="\##(f(bottom))" stroke="\##(grey)" stroke-width="1.5" stroke-dasharray="3 2"><title>\##(escape(lane.name)): refused at \##(when)</title></line>"##)
        out.text(x: x + 4, y: top + 8, size: 11, weight: "bold", fill: grey, cls: "reason", "refused")
    }

    static func reasonColour(_ reason: EndReason?) -> String {
        switch reason {
        case .finished?: "#2f6b2f"
        case .stopped?: "#a35f00"
        case .stolen?, .failed?: "#d62728"
        case .refused?: "#7f7f7f"
        case nil: "#555555"
        }
    }

    /// The smallest of 1, 2, 5 × 10ⁿ seconds that keeps the ticks at least 70 px apart.
    static func tickStep(seconds: Double) -> Double {
        guard seconds > 0 else { return 1 }
        let minimum = seconds * 70 / plotWidth
        var unit = pow(10, (log10(minimum)).rounded(.down))
        while true {
            for m in [1.0, 2, 5] where m * unit >= minimum { return m * unit }
            unit *= 10
        }
    }

    static func tickLabel(_ t: Double, step: Double) -> String {
        let decimals = step >= 1 ? 0 : Int((-log10(step)).rounded(.up))
        return String(format: "%.\(decimals)f", t)
    }
}

/// Two decimals, without a trailing ".00" (keeps the file small and the coordinates readable).
private func f(_ v: Double) -> String {
    let s = String(format: "%.2f", v)
    return s.hasSuffix(".00") ? String(s.dropLast(3)) : s
}

/// Text content and attribute values: the five XML special characters escaped.
private func escape(_ s: String) -> String {
    var out = ""
    for ch in s {
        switch ch {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&apos;"
        default: out.append(ch)
        }
    }
    return out
}

/// The document being written.
private struct SVGText {
    var document = ""

    mutating func line(_ s: String) {
        document += s
        document += "\n"
    }

    /// A `<text>` element; `content` must already be escaped.
    mutating func text(x: Double, y: Double, size: Double, weight: String = "normal", fill: String = "#1a1a1a",
                       anchor: String = "start", cls: String? = nil, _ content: String) {
        let c = cls.map { ##" class="\##($0)""## } ?? ""
        line(##"<text\##(c) x="\##(f(x))" y="\##(f(y))" font-size="\##(f(size))" font-weight="\##(weight)" fill="\##(fill)" text-anchor="\##(anchor)">\##(content)</text>"##)
    }
}
