// Render thread: where a positioned voice adds its channels in one span.
import EnsembleFormats

/// The output channels of one destination (a bus's input or a lane's accumulator) for one span: `count`
/// separate (planar) buffers of `MixSpan.frames` floats, in `SpeakerLayout` order. Stereo has two planes.
package struct ChannelPlanes: BitwiseCopyable {
    package var count: Int
    package var p0: UnsafeMutablePointer<Float>
    package var p1: UnsafeMutablePointer<Float>
    var p2: UnsafeMutablePointer<Float>?
    var p3: UnsafeMutablePointer<Float>?
    var p4: UnsafeMutablePointer<Float>?
    var p5: UnsafeMutablePointer<Float>?
    var p6: UnsafeMutablePointer<Float>?
    var p7: UnsafeMutablePointer<Float>?

    @_noLocks
    package init(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        count = 2
        p0 = left
        p1 = right
    }

    /// `count` (2…8) planes laid out one after the other in one allocation: plane c at `base + c · stride`.
    @_noLocks
    package init(base: UnsafeMutablePointer<Float>, stride: Int, count: Int) {
        self.init(left: base, right: base + stride, extra: base + 2 * stride, stride: stride, count: count)
    }

    /// Front left and right (`SpeakerLayout` planes 0 and 1), where 2D voices and the stereo pan go.
    @_noLocks
    package init(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
         extra base: UnsafeMutablePointer<Float>?, stride: Int, count: Int) {
        self.count = count
        p0 = left
        p1 = right
        if count > 2, let base {
            p2 = base
            p3 = base + stride
            p4 = base + 2 * stride
            p5 = base + 3 * stride
            if count > 6 {
                p6 = base + 4 * stride
                p7 = base + 5 * stride
            }
        }
    }

    /// Sets `frames` frames of every plane to 0.
    @_noLocks
    func clear(_ frames: Int) {
        clear(from: 0, frames)
    }

    /// Sets `frames` frames of planes `first..<count` to 0.
    @_noLocks
    func clear(from first: Int, _ frames: Int) {
        var c = first
        while c < count {
            let p = self[c]
            for j in 0..<frames { p[j] = 0 }
            c += 1
        }
    }

    /// Plane `channel` (0..<count).
    package subscript(_ channel: Int) -> UnsafeMutablePointer<Float> {
        @inline(__always) @_noLocks get {
            switch channel {
            case 0: p0
            case 1: p1
            case 2: p2.unsafelyUnwrapped
            case 3: p3.unsafelyUnwrapped
            case 4: p4.unsafelyUnwrapped
            case 5: p5.unsafelyUnwrapped
            case 6: p6.unsafelyUnwrapped
            default: p7.unsafelyUnwrapped
            }
        }
    }

    /// The same planes starting `offset` frames later.
    @inline(__always) @_noLocks
    package func advanced(by offset: Int) -> ChannelPlanes {
        var r = self
        r.p0 = p0 + offset
        r.p1 = p1 + offset
        r.p2 = p2.map { $0 + offset }
        r.p3 = p3.map { $0 + offset }
        r.p4 = p4.map { $0 + offset }
        r.p5 = p5.map { $0 + offset }
        r.p6 = p6.map { $0 + offset }
        r.p7 = p7.map { $0 + offset }
        return r
    }
}

