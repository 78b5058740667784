import EnsembleFormats

/// A straight line from `from` to `to` between two output frames, and constant outside them.
///
/// Its value is a function of the absolute output frame only, never of how many blocks came before, which
/// is what makes a rendering independent of the block size.
package struct LinearRamp: BitwiseCopyable {
    package var from: Float
    package var to: Float
    package var startFrame: Int64
    package var length: Int

    @_noLocks
    package init(from: Float, to: Float, startFrame: Int64, length: Int) {
        self.from = from
        self.to = to
        self.startFrame = startFrame
        self.length = length
    }

    /// A ramp that is already finished: the value `value` everywhere.
    @_noLocks
    package static func constant(_ value: Float) -> LinearRamp {
        LinearRamp(from: value, to: value, startFrame: 0, length: 0)
    }

    @inline(__always)
    @_noLocks
    package func value(at frame: Int64) -> Float {
        if frame >= startFrame + Int64(length) { return to }
        if frame <= startFrame { return from }
        return from + (to - from) * (Float(frame - startFrame) / Float(length))
    }

    /// True when the value changes somewhere in `range` (so the block needs the per-sample gain path).
    @inline(__always)
    @_noLocks
    func varies(in start: Int64, _ end: Int64) -> Bool {
        if from == to || length == 0 { return false }
        return start < startFrame + Int64(length) && end > startFrame
    }
}

/// A fade measured from a fixed frame: 0 at `zeroFrame`, reaching 1 `length` frames away (after it for a fade-in,
/// before it for a fade-out). Fade-in: g(t) = clamp((t − S)/N); fade-out: g(t) = clamp((E − t)/N).
package struct EdgeFade: BitwiseCopyable {
    var zeroFrame: Int64
    package var length: Int
    /// +1: rises after `zeroFrame` (fade-in); −1: falls towards `zeroFrame` (fade-out).
    package var direction: Int64

    @_noLocks
    package init(zeroFrame: Int64, length: Int, direction: Int64) {
        self.zeroFrame = zeroFrame
        self.length = length
        self.direction = direction
    }

    @inline(__always)
    @_noLocks
    package func value(at frame: Int64) -> Float {
        guard length > 0 else { return 1 }
        let d = (frame - zeroFrame) * direction
        if d >= Int64(length) { return 1 }
        if d <= 0 { return 0 }
        return Float(d) / Float(length)
    }

    @inline(__always)
    @_noLocks
    func varies(in start: Int64, _ end: Int64) -> Bool {
        guard length > 0 else { return false }
        let (a, b) = direction > 0 ? (zeroFrame, zeroFrame + Int64(length)) : (zeroFrame - Int64(length), zeroFrame)
        return start < b && end > a
    }
}
