extension MixPlot {
    /// A level over scene frames, as the engine's volume ramps make it: straight lines between points, constant
    /// before the first and after the last. Two points on one frame are a step (the value left of the frame, then
    /// the value from it on).
    ///
    /// A track's or bus's volume as timeline `set volume` entries change it: each starts on its frame from the
    /// level there and reaches its value `ramp` frames later, like the engine's `LinearRamp`.
    public struct Envelope: Sendable, Equatable {
        /// One corner of the line.
        public struct Point: Sendable, Equatable {
            /// Scene frame.
            public var frame: Int64
            /// The level on that frame.
            public var value: Float
        }

        /// The corners, in frame order (never empty).
        public private(set) var points: [Point]

        /// The level `value` everywhere.
        public init(constant value: Float) {
            points = [Point(frame: 0, value: value)]
        }

        /// The level from `frame` on (a step on `frame` gives the value after it).
        public func value(from frame: Int64) -> Float {
            guard let next = points.firstIndex(where: { $0.frame > frame }) else { return points[points.count - 1].value }
            guard next > 0 else { return points[0].value }
            return Self.between(points[next - 1], points[next], at: frame)
        }

        /// The level just before `frame` (a step on `frame` gives the value before it).
        public func value(before frame: Int64) -> Float {
            guard let next = points.firstIndex(where: { $0.frame >= frame }) else { return points[points.count - 1].value }
            guard next > 0 else { return points[0].value }
            return Self.between(points[next - 1], points[next], at: frame)
        }

        /// The largest level anywhere.
        public var maximum: Float { points.map(\.value).max() ?? 0 }

        /// A ramp starting on `frame` from the level there and reaching `value` `length` frames later (0: a step);
        /// it replaces whatever the envelope did from `frame` on, as a new ramp replaces an unfinished one.
        public mutating func ramp(to value: Float, at frame: Int64, length: Int64) {
            let from = self.value(from: frame)
            points.removeAll { $0.frame > frame }
            if points.last?.frame != frame || points.last?.value != from { points.append(Point(frame: frame, value: from)) }
            points.append(Point(frame: frame + max(length, 0), value: value))
        }

        private static func between(_ a: Point, _ b: Point, at frame: Int64) -> Float {
            guard b.frame > a.frame else { return b.value }
            return a.value + (b.value - a.value) * (Float(frame - a.frame) / Float(b.frame - a.frame))
        }
    }
}
