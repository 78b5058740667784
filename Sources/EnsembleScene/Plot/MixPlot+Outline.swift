extension MixPlot {
    /// One corner of a span's drawn level: the gain on a scene frame (volume × fades).
    public struct OutlinePoint: Sendable, Equatable {
        /// Scene frame.
        public var frame: Int64
        /// The gain there: the span's volume times its fade-in and fade-out (0…1 for scene volumes).
        public var gain: Float
    }

    /// The gain the engine applies over `span`, left to right, as the corners of straight lines: its volume
    /// envelope times its linear fade-in (from its start) and fade-out (to its end), the product the engine
    /// multiplies the samples by. Where two of those change at once the product curves, so that stretch is
    /// sampled at 8 points. A step gives two corners on one frame; a fade of 0 is a vertical edge.
    public func outline(of span: Span) -> [OutlinePoint] {
        let start = span.start, end = max(span.end ?? frameCount, span.start)
        let fadeIn = span.fadeIn, fadeOut = span.fadeOut, volume = span.volume
        func fades(_ frame: Int64) -> Float { self.fades(of: span, at: frame) }
        guard end > start else { return [OutlinePoint(frame: start, gain: volume.value(from: start) * fades(start))] }
        var corners = [start, end, start + fadeIn, end - fadeOut] + volume.points.map(\.frame)
        corners = Array(Set(corners.filter { $0 >= start && $0 <= end })).sorted()
        var points: [OutlinePoint] = []
        func add(_ frame: Int64, _ gain: Float) {
            let point = OutlinePoint(frame: frame, gain: gain)
            if points.last != point { points.append(point) }
        }
        for (k, frame) in corners.enumerated() {
            if frame > start { add(frame, volume.value(before: frame) * fades(frame)) }
            guard frame < end else { continue }
            add(frame, volume.value(from: frame) * fades(frame))
            let next = corners[k + 1]
            let changing = [fadeIn > 0 && frame < start + fadeIn, fadeOut > 0 && next > end - fadeOut,
                            volume.value(from: frame) != volume.value(before: next)].filter { $0 }.count
            if changing >= 2 {
                for j in 1..<8 {
                    let inner = frame + (next - frame) * Int64(j) / 8
                    add(inner, volume.value(from: inner) * fades(inner))
                }
            }
        }
        return points
    }

    /// The gain the engine applies to `span` from `frame` on: its volume there times its fades.
    public func gain(of span: Span, at frame: Int64) -> Float {
        span.volume.value(from: frame) * fades(of: span, at: frame)
    }

    /// The span's fade-in (rising from its start) times its fade-out (falling to its end) on `frame`; 1 without.
    private func fades(of span: Span, at frame: Int64) -> Float {
        let end = max(span.end ?? frameCount, span.start)
        let rising: Float = span.fadeIn > 0 ? min(max(Float(frame - span.start) / Float(span.fadeIn), 0), 1) : 1
        let falling: Float = span.fadeOut > 0 ? min(max(Float(end - frame) / Float(span.fadeOut), 0), 1) : 1
        return rising * falling
    }
}
