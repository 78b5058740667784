// Allocated on the control thread (`prepare`, before the bus's configure command is sent); written by the lanes
// and read by the mixer's serial phases on the render thread.

import CMixKernel

/// The bus accumulators of lanes 1…L−1 (lane 0 mixes straight into the bus rack's inputs, see `MixLane`): per
/// bus, one block of (L − 1) × `channelCount` planes of `maxBlockFrames` (2 for stereo output, 6 or 8 for
/// surround), allocated only for buses that exist — the master at once, bus 1…16 when it is first configured.
/// 16 unused buses cost nothing, where a rack-like layout would cost L × 17 blocks.
///
/// The table is written by the control side only before the configure command that makes the bus reachable is
/// sent (the command ring orders the write before the render side's first read), and never changes afterwards.
struct LaneAccumulators: @unchecked Sendable {
    /// Per bus: the lanes' buffers, lane k ≥ 1 at `(k − 1) · channelCount · maxBlockFrames` (front left, front
    /// right, then the other channels in `SpeakerLayout` order), or nil.
    private let blocks: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    let laneCount: Int
    let maxBlockFrames: Int
    /// Output channels (`SpeakerLayout.channelCount`).
    let channelCount: Int
    /// `BusRack.count`, kept here: the render side cannot read a global.
    private let busCount: Int
    /// The serial phase's list of one plane per lane for `addLanes` (capacity `laneCount`).
    private let sources: UnsafeMutablePointer<UnsafePointer<Float>?>

    init(laneCount: Int, maxBlockFrames: Int, channelCount: Int = 2) {
        self.laneCount = laneCount
        self.maxBlockFrames = maxBlockFrames
        self.channelCount = channelCount
        busCount = BusRack.count
        blocks = .allocate(capacity: BusRack.count)
        blocks.initialize(repeating: nil, count: BusRack.count)
        sources = .allocate(capacity: max(laneCount, 1))
        sources.initialize(repeating: nil, count: max(laneCount, 1))
        prepare(bus: 0)
    }

    func deallocate() {
        for b in 0..<BusRack.count { blocks[b]?.deallocate() }
        blocks.deallocate()
        sources.deallocate()
    }

    /// Control side: makes bus `bus`'s lane buffers, once (later calls do nothing). Call before sending the
    /// command that configures the bus. Nothing is zero-filled here: a lane clears a buffer when it first
    /// writes to it in a span.
    func prepare(bus: Int) {
        guard bus >= 0, bus < BusRack.count, blocks[bus] == nil, laneCount > 1 else { return }
        blocks[bus] = .allocate(capacity: (laneCount - 1) * channelCount * maxBlockFrames)
    }

    /// Render side: whether bus `bus` has its lane buffers (the mixer configures no bus that has not).
    @_noLocks
    func isPrepared(bus: Int) -> Bool {
        guard bus >= 0, bus < busCount, laneCount > 1 else { return true }
        if case .some = blocks[bus] { return true }
        return false
    }

    /// Render side: lane `lane`'s (≥ 1) front pair for bus `bus`, which must have been prepared.
    @inline(__always)
    @_noLocks
    func buffers(lane: Int, bus: Int) -> (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>) {
        let left = blocks[bus].unsafelyUnwrapped + (lane - 1) * channelCount * maxBlockFrames
        return (left, left + maxBlockFrames)
    }

    /// Render side: every plane of lane `lane`'s (≥ 1) buffers for bus `bus`, which must have been prepared.
    @inline(__always)
    @_noLocks
    func planes(lane: Int, bus: Int) -> ChannelPlanes {
        let base = blocks[bus].unsafelyUnwrapped + (lane - 1) * channelCount * maxBlockFrames
        return ChannelPlanes(base: base, stride: maxBlockFrames, count: channelCount)
    }

    /// Serial phase after the lanes: adds the accumulators of lanes 1…L−1 (`lanes`, all `laneCount` of them) into
    /// the rack's inputs, in lane order per sample: per bus and channel, the planes of the lanes that wrote there
    /// (the front pair of every lane that touched the bus, the other channels of those `planes` gave out) summed
    /// into the destination in one pass (`ensemble_sum_into`: the bits of one pass per lane, with one load and
    /// store of the destination instead of one per lane). A bus no lane touched costs nothing.
    @_noLocks
    func addLanes(_ lanes: UnsafeMutablePointer<MixLane>, _ span: MixSpan, _ rack: BusRack) {
        guard laneCount > 1 else { return }
        let n = span.frames
        var buses: UInt32 = 0
        for k in 1..<laneCount { buses |= (lanes + k).pointee.touchedBuses }
        while buses != 0 {
            let b = buses.trailingZeroBitCount
            buses &= buses - 1
            let to = rack.destination(Int32(b), span.output)
            for c in 0..<channelCount {
                var count = 0
                for k in 1..<laneCount {
                    let state = (lanes + k).pointee.touched[b]
                    if state == MixLane.allTouched || (c < 2 && state == MixLane.frontTouched) {
                        sources[count] = UnsafePointer(planes(lane: k, bus: b)[c])
                        count += 1
                    }
                }
                if count > 0 { _unsafePerformance { ensemble_sum_into(to[c], sources, Int32(count), n) } }
            }
        }
    }
}
