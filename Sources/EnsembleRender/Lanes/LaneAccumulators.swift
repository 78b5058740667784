// Allocated on the control thread (`prepare`, before the bus's configure command is sent); written by the lanes
// and read by the mixer's serial phases on the render thread.

import CMixKernel
import Synchronization
import EnsembleFormats

/// The bus accumulators of lanes 1…L−1 (lane 0 mixes straight into the bus rack's inputs, see `MixLane`): per
/// bus, one block of (L − 1) × `channelCount` planes of `maxBlockFrames` (2 for stereo output, 6 or 8 for
/// surround), allocated only for buses that exist — the master at once, bus 1…16 when it is first configured.
/// 16 unused buses cost nothing, where a rack-like layout would cost L × 17 blocks.
///
/// The table is written by the control side only before the configure command that makes the bus reachable is
/// sent (the command ring orders the write before the render side's first read), and never changes afterwards.
package struct LaneAccumulators: @unchecked Sendable {
    /// Per bus: the lanes' buffers, lane k ≥ 1 at `(k − 1) · channelCount · maxBlockFrames` (front left, front
    /// right, then the other channels in `SpeakerLayout` order), or nil.
    private let blocks: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    package let laneCount: Int
    package let maxBlockFrames: Int
    /// Output channels (`SpeakerLayout.channelCount`).
    package let channelCount: Int
    /// `BusRack.count`, kept here: the render side cannot read a global.
    private let busCount: Int
    /// Lists of one plane per lane for the sums, one list per half (capacity `laneCount` each): the two halves'
    /// sums may run at once on different threads.
    private let sources: UnsafeMutablePointer<UnsafePointer<Float>?>
    /// Per half, the lanes finished in the current span (two cache lines, one per counter).
    private let finished: UnsafeMutableRawPointer
    /// The first lane of the second half: lanes 0..<split are the first half, split..<laneCount the second.
    package let split: Int

    package init(laneCount: Int, maxBlockFrames: Int, channelCount: Int = 2) {
        self.laneCount = laneCount
        self.maxBlockFrames = maxBlockFrames
        self.channelCount = channelCount
        busCount = BusRack.count
        blocks = .allocate(capacity: BusRack.count)
        blocks.initialize(repeating: nil, count: BusRack.count)
        sources = .allocate(capacity: 2 * max(laneCount, 1))
        sources.initialize(repeating: nil, count: 2 * max(laneCount, 1))
        split = (max(laneCount, 1) + 1) / 2
        finished = .allocate(byteCount: 128, alignment: 64)
        finished.bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic(0))
        (finished + 64).bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic(0))
        prepare(bus: 0)
    }

    package func deallocate() {
        for b in 0..<BusRack.count { blocks[b]?.deallocate() }
        blocks.deallocate()
        sources.deallocate()
        finished.deallocate()
    }

    /// Control side: makes bus `bus`'s lane buffers, once (later calls do nothing). Call before sending the
    /// command that configures the bus. Nothing is zero-filled here: a lane clears a buffer when it first
    /// writes to it in a span.
    package func prepare(bus: Int) {
        guard bus >= 0, bus < BusRack.count, blocks[bus] == nil, laneCount > 1 else { return }
        blocks[bus] = .allocate(capacity: (laneCount - 1) * channelCount * maxBlockFrames)
    }

    /// Render side: whether bus `bus` has its lane buffers (the mixer configures no bus that has not).
    @_noLocks
    package func isPrepared(bus: Int) -> Bool {
        guard bus >= 0, bus < busCount, laneCount > 1 else { return true }
        if case .some = blocks[bus] { return true }
        return false
    }

    /// Render side: lane `lane`'s (≥ 1) front pair for bus `bus`, which must have been prepared.
    @inline(__always)
    @_noLocks
    package func buffers(lane: Int, bus: Int) -> (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>) {
        let left = blocks[bus].unsafelyUnwrapped + (lane - 1) * channelCount * maxBlockFrames
        return (left, left + maxBlockFrames)
    }

    /// Render side: every plane of lane `lane`'s (≥ 1) buffers for bus `bus`, which must have been prepared.
    @inline(__always)
    @_noLocks
    package func planes(lane: Int, bus: Int) -> ChannelPlanes {
        let base = blocks[bus].unsafelyUnwrapped + (lane - 1) * channelCount * maxBlockFrames
        return ChannelPlanes(base: base, stride: maxBlockFrames, count: channelCount)
    }

    // MARK: The sum of the lanes
    //
    // Per bus and channel, the lanes' signals are summed as two sequential halves: S0 = ((l0 + l1) + l2) + l3,
    // formed in the rack's input (where lane 0 mixes), and S1 = ((l4 + l5) + l6) + l7, formed in the first
    // second-half lane's accumulator, then out = S0 + S1 (`addSecondHalf`); a lane that did not write a plane is
    // left out of its half's chain. Each half is summed by the thread that finishes its last lane, inside the lane
    // phase (`laneFinished`): with two threads, each usually sums the lanes it ran, from its own cache, and the
    // render thread then reads one accumulator of the other thread's lanes per plane instead of four. The order
    // is fixed by the lanes alone, so the bytes do not depend on the threads or on who sums.

    private func counter(_ half: Int) -> UnsafeMutablePointer<Atomic<Int>> {
        (finished + 64 * half).assumingMemoryBound(to: Atomic<Int>.self)
    }

    /// Serial phase, before the lanes: no lane has finished.
    @_noLocks
    package func beginLanes() {
        counter(0).pointee.store(0, ordering: .relaxed)
        counter(1).pointee.store(0, ordering: .relaxed)
    }

    /// Lane phase, at the end of lane `lane` (on the thread that ran it): the thread that finishes the last lane of
    /// a half sums that half (`sumHalf`). The counter's acquire-release chain makes every lane of the half, run on
    /// whichever thread, visible to the one that sums it.
    @_noLocks
    package func laneFinished(_ lane: Int, _ lanes: UnsafeMutablePointer<MixLane>, _ span: MixSpan, _ rack: BusRack) {
        guard laneCount > 1 else { return }
        let half = lane < split ? 0 : 1
        let size = half == 0 ? split : laneCount - split
        if counter(half).pointee.add(1, ordering: .acquiringAndReleasing).newValue == size {
            sumHalf(half, lanes, span, rack)
        }
    }

    /// Whether lane `k`'s state for a bus says it wrote channel `c` (the front pair for 2D voices, every channel
    /// for positioned ones).
    @inline(__always)
    @_noLocks
    private static func wrote(_ state: UInt8, channel c: Int) -> Bool {
        state == MixLane.allTouched || (c < 2 && state == MixLane.frontTouched)
    }

    /// The buses any of lanes [from, to) touched in the span.
    @inline(__always)
    @_noLocks
    private static func touchedBuses(_ lanes: UnsafeMutablePointer<MixLane>, _ from: Int, _ to: Int) -> UInt32 {
        var buses: UInt32 = 0
        for k in from..<to { buses |= (lanes + k).pointee.touchedBuses }
        return buses
    }

    /// Lists in `list` the planes `c` of bus `b` that lanes [from, to) wrote in the span, in lane order, and
    /// returns how many.
    @inline(__always)
    @_noLocks
    private func written(_ lanes: UnsafeMutablePointer<MixLane>, _ from: Int, _ to: Int, bus b: Int, channel c: Int,
                         into list: UnsafeMutablePointer<UnsafePointer<Float>?>) -> Int {
        var count = 0
        for k in from..<to where Self.wrote((lanes + k).pointee.touched[b], channel: c) {
            list[count] = UnsafePointer(planes(lane: k, bus: b)[c])
            count += 1
        }
        return count
    }

    /// Sums half `half` in one pass per bus and channel (`ensemble_sum_into`: the additions in lane order, one
    /// load and store of the destination): the first half's lanes 1…split−1 into the rack's input (lane 0's
    /// destination), the second half's lanes into the first of them that wrote the plane.
    @_noLocks
    private func sumHalf(_ half: Int, _ lanes: UnsafeMutablePointer<MixLane>, _ span: MixSpan, _ rack: BusRack) {
        let from = half == 0 ? 1 : split, to = half == 0 ? split : laneCount
        guard from < to else { return }
        let list = sources + half * laneCount
        let n = span.frames
        var buses = Self.touchedBuses(lanes, from, to)
        while buses != 0 {
            let b = buses.trailingZeroBitCount
            buses &= buses - 1
            let out = rack.destination(Int32(b), span.output)
            for c in 0..<channelCount {
                let count = written(lanes, from, to, bus: b, channel: c, into: list)
                if half == 0, count > 0 {
                    _unsafePerformance { ensemble_sum_into(out[c], list, Int32(count), n) }
                } else if half == 1, count > 1, let first = list[0] {
                    // The half's first writing lane holds the chain; the others add into it.
                    let chain = UnsafeMutablePointer(mutating: first)
                    _unsafePerformance { ensemble_sum_into(chain, list + 1, Int32(count - 1), n) }
                }
            }
        }
    }

    /// Serial phase after the lanes: adds the second half's sum (in its first lane that wrote each plane) into the
    /// rack's inputs, which hold the first half's. A bus no second-half lane touched costs nothing.
    @_noLocks
    package func addSecondHalf(_ lanes: UnsafeMutablePointer<MixLane>, _ span: MixSpan, _ rack: BusRack) {
        guard laneCount > 1, split < laneCount else { return }
        let n = span.frames
        var buses = Self.touchedBuses(lanes, split, laneCount)
        while buses != 0 {
            let b = buses.trailingZeroBitCount
            buses &= buses - 1
            let out = rack.destination(Int32(b), span.output)
            for c in 0..<channelCount where written(lanes, split, laneCount, bus: b, channel: c, into: sources) > 0 {
                _unsafePerformance { ensemble_sum_into(out[c], sources, 1, n) }
            }
        }
    }
}
