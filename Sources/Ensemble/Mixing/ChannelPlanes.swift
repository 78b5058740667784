// Render thread: where a positioned voice adds its channels in one span.

/// The output channels of one destination (a bus's input or a lane's accumulator) for one span: `count`
/// separate (planar) buffers of `MixSpan.frames` floats, in `SpeakerLayout` order. Stereo has two planes.
struct ChannelPlanes: BitwiseCopyable {
    var count: Int
    var p0: UnsafeMutablePointer<Float>
    var p1: UnsafeMutablePointer<Float>
    var p2: UnsafeMutablePointer<Float>?
    var p3: UnsafeMutablePointer<Float>?
    var p4: UnsafeMutablePointer<Float>?
    var p5: UnsafeMutablePointer<Float>?
    var p6: UnsafeMutablePointer<Float>?
    var p7: UnsafeMutablePointer<Float>?

    @_noLocks
    init(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        count = 2
        p0 = left
        p1 = right
    }

    /// Plane `channel` (0..<count).
    subscript(_ channel: Int) -> UnsafeMutablePointer<Float> {
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
    func advanced(by offset: Int) -> ChannelPlanes {
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

extension MixLane {
    /// Every output channel of this lane's destination for `bus` in the span (the stereo pair for stereo
    /// output). Provisional: stereo only until the mixer carries surround channels.
    @inline(__always)
    @_noLocks
    func planes(_ bus: Int32, _ span: MixSpan, _ rack: BusRack, _ accumulators: LaneAccumulators) -> ChannelPlanes {
        let (l, r) = destination(bus, span, rack, accumulators)
        return ChannelPlanes(left: l, right: r)
    }
}
