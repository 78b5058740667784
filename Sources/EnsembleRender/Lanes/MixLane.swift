// Render thread; for offline renders, any one worker thread per lane at a time (see the contract below).
import EnsembleFormats

/// A share of the voice mix: the per-voice work of a span is done by a fixed number of lanes (`Mixer.laneCount`,
/// `MixLane.defaultCount`), each mixing its voices into accumulators of its own, so that lanes can run on
/// different threads and the mix still has the same bytes for any number of threads.
///
/// A voice's lane is fixed for its life (`lane(of:count:)`: its sequence in groups of `groupSize`, dealt round the
/// lanes). Thread: `Mixer.renderLane(k, span)` runs each lane once per span, in any order, on any thread, while
/// nothing else runs on the mixer. Invariant: a lane writes only its own `MixLane`, its accumulators, its own
/// voices' pool entries, meters and stream cells, and (last of its half) that half's sum; it never posts an event,
/// frees a slot or changes the active list. The sum runs in a fixed order (`LaneAccumulators`).
/// Design, the full contract and the sum order: the "Lanes and render workers" article
/// (Ensemble.docc/LanesAndWorkers.md).
package struct MixLane {
    /// Lanes of a mixer unless configured otherwise: enough for 8 worker threads. Fixed, like every input of
    /// the summation order: never derived from the number of threads or cores.
    package static var defaultCount: Int { @_noLocks get { 8 } }
    /// Capacity of each lane's contiguous copy of the ring frames a streamed voice's taps need (`StreamReader`).
    static var streamWindowFrames: Int { @_noLocks get { 16384 } }

    /// A voice that stopped sounding in this lane during the span, with the frame where it did.
    package struct End: BitwiseCopyable {
        package var slot: Int32
        package var frame: Int64
    }

    package let index: Int
    let scratchLeft: UnsafeMutablePointer<Float>
    let scratchRight: UnsafeMutablePointer<Float>
    let scratchGain: UnsafeMutablePointer<Float>
    /// A voice with sends of their own filter (`VoiceEnvironments`): `dry` keeps its signal from before the direct
    /// filter, `send` holds one send's copy of it while that send's filter runs.
    let dryLeft: UnsafeMutablePointer<Float>
    let dryRight: UnsafeMutablePointer<Float>
    let sendLeft: UnsafeMutablePointer<Float>
    let sendRight: UnsafeMutablePointer<Float>
    /// A voice moving between buses is rendered here first, then split between the two (`split`).
    let routeLeft: UnsafeMutablePointer<Float>
    let routeRight: UnsafeMutablePointer<Float>
    let streamWindowLeft: UnsafeMutablePointer<Float>
    let streamWindowRight: UnsafeMutablePointer<Float>
    /// The shared kernel tables with this lane's own buffers for taps gathered at file edges.
    package let tables: ResamplerTables
    /// Per bus: what the lane has cleared of its accumulator in the current span (lanes k ≥ 1): `untouched`,
    /// `frontTouched` (the front pair, for 2D voices) or `allTouched` (every channel).
    let touched: UnsafeMutablePointer<UInt8>
    static var untouched: UInt8 { @_noLocks get { 0 } }
    static var frontTouched: UInt8 { @_noLocks get { 1 } }
    static var allTouched: UInt8 { @_noLocks get { 2 } }
    /// Output channels (`SpeakerLayout.channelCount`).
    package let channelCount: Int
    /// The channels past the front pair of the route buffers (surround output only, else nil).
    let routeOthers: UnsafeMutablePointer<Float>?
    package let maxBlockFrames: Int
    /// `BusRack.count`, kept here: the render side cannot read a global.
    let busCount: Int
    /// This span's voices (slots), in active order (`Mixer.assignLanes`).
    package let voices: UnsafeMutablePointer<Int32>
    var voiceCount = 0
    /// Voices that stopped sounding in this lane in the current span, in active order.
    package let ends: UnsafeMutablePointer<End>
    var endCount = 0
    /// Bit b set when the lane has touched bus b in the current span (`touched[b]` not `untouched`): what the
    /// lane sums (`LaneAccumulators`) read first, instead of every lane's flag of every bus.
    var touchedBuses: UInt32 = 0
    /// Per entry of `voices`: the voice's generation and its cursor position after the span, written by the lane
    /// for each voice that goes on (an ended one's entry is left stale; `Mixer.publishPositions` skips it). The
    /// serial phase publishes these instead of reading the voices again: a voice's cursor line, just written
    /// by the lane on another core, would have to travel back to the render thread's core every block, and
    /// again to the lane's on its next write.
    package let after: UnsafeMutablePointer<After>

    /// What a lane leaves for `Mixer.publishPositions` about one of its voices.
    package struct After: BitwiseCopyable {
        package var generation: UInt32
        package var ended: Bool
        package var position: Int

        @_noLocks
        package init(generation: UInt32, ended: Bool, position: Int) {
            self.generation = generation
            self.ended = ended
            self.position = position
        }
    }

    /// The engine's rate: which sinc bank the lane's slot takes (`prepareSinc`).
    let outputRate: Double

    /// Puts the sinc bank for `outputRate` in the lane's tables (`SincSlot`): control side, before the first voice
    /// that resamples with sinc starts; nothing after the first time.
    package func prepareSinc() {
        tables.sincSlot.fill(SincBank.forOutputRate(outputRate))
    }

    /// `outputRate` (the engine's) decides the sinc's bank (`SincBank.forOutputRate`) and which steps below 1 take
    /// its anti-image table (`ResamplerTables.sincTable(step:)`); the bank comes when `prepareSinc` is called.
    package init(index: Int, maxBlockFrames: Int, capacity: Int, cubic: UnsafePointer<Float>, channelCount: Int = 2,
                 outputRate: Double = 48000) {
        self.index = index
        self.channelCount = channelCount
        self.maxBlockFrames = maxBlockFrames
        routeOthers = channelCount > 2 ? .allocate(capacity: (channelCount - 2) * maxBlockFrames) : nil
        scratchLeft = .allocate(capacity: maxBlockFrames)
        scratchRight = .allocate(capacity: maxBlockFrames)
        scratchGain = .allocate(capacity: maxBlockFrames)
        dryLeft = .allocate(capacity: maxBlockFrames)
        dryRight = .allocate(capacity: maxBlockFrames)
        sendLeft = .allocate(capacity: maxBlockFrames)
        sendRight = .allocate(capacity: maxBlockFrames)
        routeLeft = .allocate(capacity: maxBlockFrames)
        routeRight = .allocate(capacity: maxBlockFrames)
        streamWindowLeft = .allocate(capacity: Self.streamWindowFrames)
        streamWindowRight = .allocate(capacity: Self.streamWindowFrames)
        self.outputRate = outputRate
        tables = ResamplerTables(cubic: cubic, sincSlot: SincSlot(),
                                 edgeLeft: .allocate(capacity: SincBank.maxTaps),
                                 edgeRight: .allocate(capacity: SincBank.maxTaps),
                                 windowLeft: Self.allocateWindow(), windowRight: Self.allocateWindow(),
                                 packetScratch: .allocate(capacity: 2 * IMA4Packets.framesPerPacket),
                                 ima4: IMA4Packets.table, windowSlack: Self.windowSlack, outputRate: outputRate,
                                 ima4Cache: IMA4WindowCache.make())
        busCount = BusRack.count
        touched = .allocate(capacity: busCount)
        touched.initialize(repeating: Self.untouched, count: busCount)
        voices = .allocate(capacity: max(capacity, 1))
        ends = .allocate(capacity: max(capacity, 1))
        after = .allocate(capacity: max(capacity, 1))
    }

    /// The compact windows' slack on each side (`ResamplerTables.windowSlack`): one IMA4 packet.
    static var windowSlack: Int { IMA4Packets.framesPerPacket }

    /// A compact window of `ResamplerTables.windowFrames` floats with `windowSlack` more on each side.
    private static func allocateWindow() -> UnsafeMutablePointer<Float> {
        UnsafeMutablePointer<Float>.allocate(capacity: ResamplerTables.windowFrames + 2 * windowSlack) + windowSlack
    }

    package func deallocate() {
        for p in [scratchLeft, scratchRight, scratchGain, dryLeft, dryRight, sendLeft, sendRight, routeLeft, routeRight, streamWindowLeft, streamWindowRight,
                  tables.edgeLeft, tables.edgeRight, tables.packetScratch] { p.deallocate() }
        tables.sincSlot.deallocate()
        (tables.windowLeft - Self.windowSlack).deallocate()
        (tables.windowRight - Self.windowSlack).deallocate()
        if let cache = tables.ima4Cache { IMA4WindowCache.free(cache) }
        touched.deallocate()
        routeOthers?.deallocate()
        voices.deallocate()
        ends.deallocate()
        after.deallocate()
    }

    /// Where this lane sums a 2D voice on `bus` in the span (the front pair): for lane 0 the rack's input
    /// (`BusRack.destination`), for the others the lane's own accumulator of the same bus, cleared on first use
    /// in the span. (`mutating`, like `planes`, though it changes nothing in the struct: called through the
    /// lane's pointer, a mutating method gets the lane's address where a non-mutating one was handed a copy of
    /// all its few hundred bytes, at every voice of every span.)
    @inline(__always)
    @_noLocks
    package mutating func destination(_ bus: Int32, _ span: MixSpan, _ rack: BusRack, _ accumulators: LaneAccumulators)
        -> (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>) {
        if index == 0 { return rack.destination(bus, span.left, span.right) }
        let b = rack.isConfigured(bus) ? Int(bus) : 0
        let (l, r) = accumulators.buffers(lane: index, bus: b)
        if touched[b] == Self.untouched {
            touched[b] = Self.frontTouched
            touchedBuses |= 1 << UInt32(b)
            for j in 0..<span.frames {
                l[j] = 0
                r[j] = 0
            }
        }
        return (l, r)
    }

    /// Every output channel of this lane's destination for `bus` in the span (`channelCount` planes, the front
    /// pair first), where a positioned voice adds its channels: for lane 0 the rack's input (the span's output
    /// for the master), for the others the lane's own accumulator of the bus, each plane cleared the first time
    /// the lane uses it in the span. The lane's accumulators are added into the rack's inputs after the lanes,
    /// in lane order, plane by plane (`addInto`).
    @inline(__always)
    @_noLocks
    package mutating func planes(_ bus: Int32, _ span: MixSpan, _ rack: BusRack, _ accumulators: LaneAccumulators) -> ChannelPlanes {
        if index == 0 { return rack.destination(bus, span.output) }
        let b = rack.isConfigured(bus) ? Int(bus) : 0
        let planes = accumulators.planes(lane: index, bus: b)
        let state = touched[b]
        if state != Self.allTouched {
            touched[b] = Self.allTouched
            touchedBuses |= 1 << UInt32(b)
            planes.clear(from: state == Self.untouched ? 0 : 2, span.frames)
        }
        return planes
    }

    /// `planes`, for a voice about to write frames [offset, offset + count) of the front pair and nothing else:
    /// true when this is the lane's first use of `bus` in the span, in which case only the rest of its planes is
    /// cleared and the caller must store every frame of that range in both front planes as x + 0 (what adding
    /// into the cleared plane gives: `ensemble_assign_f32`, `ensemble_assign_ramped`); false as `planes`.
    @inline(__always)
    @_noLocks
    mutating func planesToAssign(_ bus: Int32, _ span: MixSpan, _ rack: BusRack, _ accumulators: LaneAccumulators,
                                 offset: Int, count: Int) -> (ChannelPlanes, Bool) {
        if index == 0 { return (rack.destination(bus, span.output), false) }
        let b = rack.isConfigured(bus) ? Int(bus) : 0
        guard touched[b] == Self.untouched else { return (planes(bus, span, rack, accumulators), false) }
        let planes = accumulators.planes(lane: index, bus: b)
        touched[b] = Self.allTouched
        touchedBuses |= 1 << UInt32(b)
        let l = planes[0], r = planes[1]
        for j in 0..<offset {
            l[j] = 0
            r[j] = 0
        }
        for j in (offset + count)..<span.frames {
            l[j] = 0
            r[j] = 0
        }
        planes.clear(from: 2, span.frames)
        return (planes, true)
    }

    /// Copies `n` floats (a loop: the standard library's generic `update(from:count:)` fails the `@_noLocks` check
    /// in debug builds).
    @inline(__always)
    @_noLocks
    package static func copy(_ from: UnsafePointer<Float>, to: UnsafeMutablePointer<Float>, _ n: Int) {
        for j in 0..<n { to[j] = from[j] }
    }

    /// Clears the route buffers for a voice that is moving between buses in this span.
    @_noLocks
    func beginRoute(_ n: Int) -> (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>) {
        for j in 0..<n {
            routeLeft[j] = 0
            routeRight[j] = 0
        }
        return (routeLeft, routeRight)
    }

    /// Every channel of the route buffers, cleared, for a positioned voice moving between buses in this span
    /// (then `splitPlanes`).
    @_noLocks
    package func beginRoutePlanes(_ n: Int) -> ChannelPlanes {
        let planes = ChannelPlanes(left: routeLeft, right: routeRight, extra: routeOthers, stride: maxBlockFrames,
                                   count: channelCount)
        planes.clear(n)
        return planes
    }

    /// Splits the routed voice between its previous bus (1 − f) and its new one (f), f rising over the move.
    /// Past the move's end f = 1 gives the new bus exactly what the direct path would have added.
    @_noLocks
    package mutating func split(_ voice: Voice, _ span: MixSpan, _ rack: BusRack, _ accumulators: LaneAccumulators) {
        let (fromL, fromR) = destination(voice.routing.previousBus, span, rack, accumulators)
        let (toL, toR) = destination(voice.routing.bus, span, rack, accumulators)
        let fade = voice.routing.busFade
        for j in 0..<span.frames {
            let f = fade.value(at: span.start + Int64(j))
            let l = routeLeft[j], r = routeRight[j]
            fromL[j] += l * (1 - f)
            fromR[j] += r * (1 - f)
            toL[j] += l * f
            toR[j] += r * f
        }
    }

    /// `split` for every channel of the route buffers (`beginRoutePlanes`).
    @_noLocks
    package mutating func splitPlanes(_ voice: Voice, _ span: MixSpan, _ rack: BusRack, _ accumulators: LaneAccumulators) {
        let from = planes(voice.routing.previousBus, span, rack, accumulators)
        let to = planes(voice.routing.bus, span, rack, accumulators)
        let route = ChannelPlanes(left: routeLeft, right: routeRight, extra: routeOthers, stride: maxBlockFrames,
                                  count: channelCount)
        let fade = voice.routing.busFade
        for c in 0..<channelCount {
            let x = route[c], a = from[c], b = to[c]
            for j in 0..<span.frames {
                let f = fade.value(at: span.start + Int64(j))
                a[j] += x[j] * (1 - f)
                b[j] += x[j] * f
            }
        }
    }

    /// Consecutive voices (by sequence) that share a lane before the next lane is used (see the type's comment).
    /// Like the lane count, an input of the summation order: fixed, never derived from the threads.
    static var groupSize: Int { @_noLocks get { 4 } }

    /// The lane of `voice` among `count`: its group of `groupSize` sequences, modulo the count; the same for the
    /// voice's whole life.
    @inline(__always)
    @_noLocks
    package static func lane(of voice: Voice, count: Int) -> Int {
        Int(truncatingIfNeeded: (voice.sequence / UInt64(groupSize)) % UInt64(count))
    }

    /// Serial phase: forgets the previous span (no voices, nothing touched, nothing ended).
    @_noLocks
    package mutating func begin() {
        for b in 0..<busCount { touched[b] = Self.untouched }
        touchedBuses = 0
        voiceCount = 0
        endCount = 0
        tables.ima4Cache?.pointee.clear()
    }

    /// Serial phase: appends the voice in `slot` to this span's list.
    @_noLocks
    package mutating func add(_ slot: Int32) {
        voices[voiceCount] = slot
        voiceCount += 1
    }

    @_noLocks
    mutating func recordEnd(slot: Int, frame: Int64) {
        ends[endCount] = End(slot: Int32(slot), frame: frame)
        endCount += 1
    }
}
