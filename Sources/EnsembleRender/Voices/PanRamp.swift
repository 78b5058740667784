import EnsembleFormats

/// A pan gliding from one setting to another between two output frames: how a pan change is smoothed, for voices
/// and buses alike. The pan *position* moves linearly and the equal-power law is evaluated at every frame on the
/// way (`PanMatrix.gliding`), so a sweep keeps its power (mono) and its law (stereo); outside the glide the two
/// ends' matrices are used as the control side computed them. Like `LinearRamp`, its value depends only on the
/// absolute frame.
package struct PanRamp: BitwiseCopyable {
    package var from: PanMatrix
    package var to: PanMatrix
    package var startFrame: Int64 = 0
    package var length = 0

    /// A pan that stays at `matrix`.
    @_noLocks
    package init(constant matrix: PanMatrix) {
        from = matrix
        to = matrix
    }

    @inline(__always)
    @_noLocks
    package func matrix(at frame: Int64) -> PanMatrix {
        if length == 0 || frame >= startFrame + Int64(length) { return to }
        if frame <= startFrame { return from }
        let p = from.position + (to.position - from.position) * (Float(frame - startFrame) / Float(length))
        return PanMatrix.gliding(pan: p, isStereo: to.isStereo)
    }

    /// True when the matrix changes somewhere in [start, end).
    @_noLocks
    func varies(in start: Int64, _ end: Int64) -> Bool {
        if length == 0 || from.isSame(as: to) { return false }
        return start < startFrame + Int64(length) && end > startFrame
    }

    /// Heads for `target`, reached `rampFrames` after `frame`, from wherever the pan is at `frame`. The target
    /// matrix comes computed from the control side (with libm's cos and sin, the bits of a constant pan).
    @_noLocks
    package mutating func retarget(_ target: PanMatrix, at frame: Int64, rampFrames: Int) {
        from = matrix(at: frame)
        to = target
        startFrame = frame
        length = rampFrames
    }
}
