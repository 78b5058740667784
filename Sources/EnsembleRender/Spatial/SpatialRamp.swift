// Render thread: positions and orientations of voices and of the listener, written by commands between spans
// and read by the spatial update.
import EnsembleFormats

/// A point moving along a straight line from `from` to `to` between two output frames, and still outside them:
/// how a position, a direction or the listener's orientation follows a command with a ramp (0 frames: a jump).
///
/// Like `LinearRamp`, its value is a function of the absolute output frame only, so the spatial update reads the
/// same point at a frame whatever the block size.
package struct SpatialRamp: BitwiseCopyable {
    package var from: Vector3
    package var to: Vector3
    package var startFrame: Int64
    package var length: Int

    /// A point that stays at `point`.
    @_noLocks
    package init(constant point: Vector3) {
        from = point
        to = point
        startFrame = 0
        length = 0
    }

    /// The frame from which the point stays at `to`.
    var endFrame: Int64 { @inline(__always) @_noLocks get { startFrame + Int64(length) } }

    @inline(__always)
    @_noLocks
    package func value(at frame: Int64) -> Vector3 {
        if length == 0 || frame >= endFrame { return to }
        if frame <= startFrame { return from }
        return from.interpolated(to: to, Float(frame - startFrame) / Float(length))
    }

    /// True when the point is the same at every frame from `frame` on (the ramp has ended by then).
    @inline(__always)
    @_noLocks
    func isStill(from frame: Int64) -> Bool {
        length == 0 || frame >= endFrame
    }

    /// Heads for `target` from wherever the point is at `frame`, arriving `rampFrames` later (0: at once).
    @_noLocks
    package mutating func retarget(_ target: Vector3, at frame: Int64, rampFrames: Int) {
        from = value(at: frame)
        to = target
        startFrame = frame
        length = max(rampFrames, 0)
    }
}
