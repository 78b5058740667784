/// A pan matrix gliding linearly from one setting to another between two output frames: how a pan change is
/// smoothed, for voices and buses alike. Like `LinearRamp`, its value depends only on the absolute frame.
struct PanRamp: BitwiseCopyable {
    var from: PanMatrix
    var to: PanMatrix
    var startFrame: Int64 = 0
    var length = 0

    /// A pan that stays at `matrix`.
    @_noLocks
    init(constant matrix: PanMatrix) {
        from = matrix
        to = matrix
    }

    @inline(__always)
    @_noLocks
    func matrix(at frame: Int64) -> PanMatrix {
        if length == 0 || frame >= startFrame + Int64(length) { return to }
        if frame <= startFrame { return from }
        return PanMatrix.mix(from, to, Float(frame - startFrame) / Float(length))
    }

    /// True when the matrix changes somewhere in [start, end).
    @_noLocks
    func varies(in start: Int64, _ end: Int64) -> Bool {
        if length == 0 || from.isSame(as: to) { return false }
        return start < startFrame + Int64(length) && end > startFrame
    }

    /// Heads for `target`, reached `rampFrames` after `frame`, from wherever the pan is at `frame`. The matrix
    /// comes computed from the control side (it needs cos and sin, which the render side avoids).
    @_noLocks
    mutating func retarget(_ target: PanMatrix, at frame: Int64, rampFrames: Int) {
        from = matrix(at: frame)
        to = target
        startFrame = frame
        length = rampFrames
    }
}
