// Render thread: the serial phases around the lanes (lane 0 also mixes into the bus buffers); `BusCommand`s are
// built on the control thread.
import Synchronization
import EnsembleFormats

/// A request for the bus rack, carried by `MixerCommand.bus`.
package enum BusCommand: BitwiseCopyable, Sendable {
    /// Bus `bus` (1…16) starts collecting the voices routed to it and mixing itself into the master.
    case configure(bus: Int32)
    /// The bus's volume (`setBus`, or a timed change), reached over `rampFrames` from the current gain. A bus
    /// that is muted or soloed out stays silent: its effective gain is volume × (audible ? 1 : 0).
    case volume(bus: Int32, volume: Float, rampFrames: Int)
    /// Whether mute and solo let the bus through (`setBus`), the gain ramping over `rampFrames`.
    case audible(bus: Int32, audible: Bool, rampFrames: Int)
    case pan(bus: Int32, matrix: PanMatrix, rampFrames: Int)
    /// Replaces the bus's chain (nil: none), crossfading from the old chain's output over `fadeFrames`.
    case chain(bus: Int32, chain: ChainHandle, fadeFrames: Int)
    /// Freezes every voice routed to bus `bus` (1…16) from the frame it is applied on, each fading out over
    /// `rampFrames` as a track's pause does; voices starting while it is paused wait (`BusHolds`). The bus's own
    /// chain is not frozen: its tails ring on. Handled by the mixer (`VoiceUpdate.pauseBus`), not the rack.
    case pause(bus: Int32, rampFrames: Int)
    /// Continues every voice the bus's pause holds from where it stopped, fading in over `rampFrames`.
    case resume(bus: Int32, rampFrames: Int)
    /// The order the chains run in and the buses that key a compressor (sent before the chain that needs it).
    case order(BusOrder)
    /// Sets one parameter of a custom effect (`Engine.setParameter`/`scheduleParameter`): a plain store into its
    /// preallocated parameter array, which every later span's `EffectBlock.parameters` reads.
    case parameter(ParameterWrite)
}

/// Where a custom effect's parameter lives and its new value. The array belongs to a `CustomEffect` the engine
/// keeps alive as long as its render side (`Engine`'s registry), so a late command never writes freed memory.
package struct ParameterWrite: @unchecked Sendable, BitwiseCopyable {
    package var target: UnsafeMutablePointer<Float>
    package var value: Float

    package init(target: UnsafeMutablePointer<Float>, value: Float) {
        self.target = target
        self.value = value
    }
}

/// A chain pointer that may cross to the render side (which owns it until it hands it back).
package struct ChainHandle: @unchecked Sendable, BitwiseCopyable {
    package var pointer: UnsafeMutablePointer<EffectChain>?

    package init(pointer: UnsafeMutablePointer<EffectChain>?) {
        self.pointer = pointer
    }
}

/// What the render side holds for one bus.
package struct BusState: BitwiseCopyable {
    package var configured = false
    /// The effective gain, ramping towards volume × (audible ? 1 : 0).
    package var gain = LinearRamp.constant(1)
    package var volume: Float = 1
    package var audible = true
    package var pan = PanRamp(constant: PanMatrix(leftFromLeft: 1, leftFromRight: 0, rightFromLeft: 0, rightFromRight: 1))
    package var chain = ChainHandle(pointer: nil)
    /// During a chain change: the previous chain, faded out linearly between `fadeStart` and its end.
    var crossfading = false
    package var previous = ChainHandle(pointer: nil)
    package var fade = LinearRamp.constant(1)

    @_noLocks
    package init() {}
}

/// The render side's buses: bus 0 is the master (its chain runs on the final mix), buses 1…16 each collect
/// the voices routed to them in preallocated planes (one per output channel), run their chain, apply their gain
/// and pan (smoothed like a track's) and add into the master, in bus order. Voices on bus 0 are summed straight
/// into the output exactly as without buses. Chains run in `BusOrder` (key buses first), each key bus writing its
/// post-fader levels (`SidechainKeys`) for the compressors it keys. On surround output the pan is a balance of the
/// front pair only, and chains run per channel pair (`EffectChain.pairs`). Design: the "Buses and effects" article
/// (Ensemble.docc/BusesAndEffects.md).
package struct BusRack: @unchecked Sendable {
    // Render-side constants are computed properties, not `static let`: a stored static is a lazily initialised
    // global (`swift_once`, which may lock), and whether `@_noLocks` sees it folded to a constant depends on how
    // a debug build batches the files, so adding an unrelated file can turn such constants into build errors.
    package static var count: Int { @_noLocks get { 17 } }

    package let states: UnsafeMutablePointer<BusState>
    /// Bus b's plane c at `(b · channelCount + c) · maxBlockFrames` (bus 0's are unused: the master is the output).
    package let planes: UnsafeMutablePointer<Float>
    /// Copies of a bus's planes for a chain crossfade.
    package let scratch: UnsafeMutablePointer<Float>
    package let meters: UnsafeMutablePointer<MeterReadout>
    /// Per bus (index 1…16; 0 unused) an EBU R128 meter of what it adds to the output, when asked for at init.
    package let loudness: UnsafeMutablePointer<LoudnessMeterCore>?
    /// Their published figures, for the control side (never the meters themselves, which the render side writes).
    package let loudnessReadouts: UnsafeMutablePointer<LoudnessReadout>?
    /// Key levels of the span, bus b's at `b · maxBlockFrames` (`SidechainKeys`; written for key buses only).
    let keyLevels: UnsafeMutablePointer<Float>
    /// The chain order and key buses last received (`BusCommand.order`).
    package let order: UnsafeMutablePointer<BusOrder>
    package let retired = RetiredChains()
    package let maxBlockFrames: Int
    /// Output channels (`SpeakerLayout.channelCount`).
    package let channelCount: Int
    /// Set once any bus is configured or any chain installed: until then the rack costs nothing per block.
    /// Behind a pointer so the rack itself is immutable (the control side reads `meters` and `retired`).
    private let activeFlag: UnsafeMutablePointer<Bool>
    /// How many times a chain's processor was reset after a non-finite or runaway block (`EffectChain.process`);
    /// added to by the render side, read by the control side.
    package let effectResets: UnsafeMutablePointer<Atomic<Int>>
    package var active: Bool { @_noLocks get { activeFlag.pointee } }

    package init(maxBlockFrames: Int, channelCount: Int = 2, loudnessRate: Double? = nil) {
        self.maxBlockFrames = maxBlockFrames
        self.channelCount = channelCount
        states = .allocate(capacity: Self.count)
        states.initialize(repeating: BusState(), count: Self.count)
        planes = .allocate(capacity: Self.count * channelCount * maxBlockFrames)
        planes.initialize(repeating: 0, count: Self.count * channelCount * maxBlockFrames)
        scratch = .allocate(capacity: channelCount * maxBlockFrames)
        keyLevels = .allocate(capacity: Self.count * maxBlockFrames)
        keyLevels.initialize(repeating: 0, count: Self.count * maxBlockFrames)
        order = .allocate(capacity: 1)
        order.initialize(to: .identity)
        activeFlag = .allocate(capacity: 1)
        activeFlag.initialize(to: false)
        effectResets = .allocate(capacity: 1)
        effectResets.initialize(to: Atomic(0))
        meters = .allocate(capacity: Self.count)
        for i in 0..<Self.count { (meters + i).initialize(to: MeterReadout(channelCount: channelCount)) }
        if let loudnessRate {
            let cores = UnsafeMutablePointer<LoudnessMeterCore>.allocate(capacity: Self.count)
            for i in 0..<Self.count {
                (cores + i).initialize(to: LoudnessMeterCore(sampleRate: loudnessRate, channelCount: channelCount))
            }
            loudness = cores
            let readouts = UnsafeMutablePointer<LoudnessReadout>.allocate(capacity: Self.count)
            for i in 0..<Self.count { (readouts + i).initialize(to: cores[i].readout) }
            loudnessReadouts = readouts
        } else {
            loudness = nil
            loudnessReadouts = nil
        }
    }

    package func deallocate() {
        for b in 0..<Self.count {
            if let c = states[b].chain.pointer { EffectChain.free(c) }
            if let c = states[b].previous.pointer { EffectChain.free(c) }
            meters[b].deallocate()
        }
        retired.deallocate()
        for p in [planes, scratch, keyLevels] { p.deallocate() }
        order.deallocate()
        states.deallocate()
        meters.deallocate()
        if let loudness {
            for b in 0..<Self.count { loudness[b].deallocate() }
            loudness.deinitialize(count: Self.count)
            loudness.deallocate()
        }
        loudnessReadouts?.deallocate()
        activeFlag.deallocate()
        effectResets.deinitialize(count: 1)
        effectResets.deallocate()
    }

    /// True for bus 1…16 once configured: voices routed to it are summed into its buffer.
    @inline(__always)
    @_noLocks
    func isConfigured(_ bus: Int32) -> Bool {
        let b = Int(bus)
        return b > 0 && b < Self.count && states[b].configured
    }

    /// Every plane of bus `b`'s input.
    @inline(__always)
    @_noLocks
    package func planes(of b: Int) -> ChannelPlanes {
        ChannelPlanes(base: planes + b * channelCount * maxBlockFrames, stride: maxBlockFrames, count: channelCount)
    }

    /// Where a voice routed to `bus` is summed: the bus's front pair, or the output's for the master (and for a
    /// bus that was never configured).
    @inline(__always)
    @_noLocks
    package func destination(_ bus: Int32, _ outL: UnsafeMutablePointer<Float>, _ outR: UnsafeMutablePointer<Float>)
        -> (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>) {
        guard isConfigured(bus) else { return (outL, outR) }
        let l = planes + Int(bus) * channelCount * maxBlockFrames
        return (l, l + maxBlockFrames)
    }

    /// `destination` with every channel: the bus's planes, or `output` for the master.
    @inline(__always)
    @_noLocks
    package func destination(_ bus: Int32, _ output: ChannelPlanes) -> ChannelPlanes {
        guard isConfigured(bus) else { return output }
        return planes(of: Int(bus))
    }

    @_noLocks
    package func beginBlock(_ n: Int) {
        guard active else { return }
        retired.flush()
        for b in 1..<Self.count where states[b].configured { planes(of: b).clear(n) }
    }

    /// Runs every configured bus's chain in `BusOrder` (writing each key bus's levels after its chain), mixes
    /// the buses into the output in index order, then runs the master chain on the output.
    @_noLocks
    func finishBlock(_ output: ChannelPlanes, _ n: Int, _ t0: Int64) {
        guard active else { return }
        let order = self.order.pointee
        let keys = SidechainKeys(base: keyLevels, stride: maxBlockFrames, written: order.keys)
        if order.keys != 0 {
            // A key read before it is written this span (a chain fading out after its key left the order) reads
            // silence, not the previous span's levels.
            for b in 1..<Self.count where order.isKey(b) {
                let k = keyLevels + b * maxBlockFrames
                for j in 0..<n { k[j] = 0 }
            }
        }
        for i in 0..<(Self.count - 1) {
            let b = order.bus(at: i)
            guard states[b].configured else { continue }
            runChain(b, planes(of: b), n, t0, keys)
            if order.isKey(b) { writeKeyLevels(b, n, t0) }
        }
        for b in 1..<Self.count where states[b].configured {
            let bus = planes(of: b)
            var meter = MeterAccumulator()
            mixDown(b, bus.p0, bus.p1, into: output.p0, output.p1, n, t0, &meter)
            meters[b].publish(meter)
            if channelCount > 2 { mixDownOthers(b, bus, into: output, n, t0) }
            if let loudness { meterLoudness(b, bus, n, t0, loudness) }
        }
        runChain(0, output, n, t0, keys)
    }

    /// Bus `b`'s key levels for the span: g(t)·max over channels of |x|, x its planes after its chain and g its
    /// gain (volume × mute/solo with their ramps; the pan, a balance, is left out), so a muted bus keys nothing.
    @_noLocks
    private func writeKeyLevels(_ b: Int, _ n: Int, _ t0: Int64) {
        let x = planes(of: b), k = keyLevels + b * maxBlockFrames
        let p0 = x.p0
        for j in 0..<n { k[j] = abs(p0[j]) }
        for c in 1..<channelCount {
            let p = x[c]
            for j in 0..<n { k[j] = max(k[j], abs(p[j])) }
        }
        let gain = states[b].gain
        if gain.varies(in: t0, t0 + Int64(n)) {
            for j in 0..<n { k[j] *= gain.value(at: t0 + Int64(j)) }
        } else {
            let g = gain.value(at: t0)
            for j in 0..<n { k[j] *= g }
        }
    }

    @_noLocks
    private func runChain(_ b: Int, _ x: ChannelPlanes, _ n: Int, _ t0: Int64, _ keys: SidechainKeys) {
        let s = states[b]
        let pairs = channelCount / 2
        var resets = 0
        defer { if resets > 0 { effectResets.pointee.add(resets, ordering: .relaxed) } }
        if !s.crossfading {
            if let c = s.chain.pointer {
                for p in 0..<pairs { resets += EffectChain.process(c, x[2 * p], x[2 * p + 1], n, pair: p, frame: t0, keys: keys) }
            }
            return
        }
        // Old chain on the buffer, new chain on a copy, then a linear crossfade old → new.
        let copy = ChannelPlanes(base: scratch, stride: maxBlockFrames, count: channelCount)
        for ch in 0..<channelCount {
            let from = x[ch], to = copy[ch]
            for j in 0..<n { to[j] = from[j] }
        }
        if let c = s.previous.pointer {
            for p in 0..<pairs { resets += EffectChain.process(c, x[2 * p], x[2 * p + 1], n, pair: p, frame: t0, keys: keys) }
        }
        if let c = s.chain.pointer {
            for p in 0..<pairs { resets += EffectChain.process(c, copy[2 * p], copy[2 * p + 1], n, pair: p, frame: t0, keys: keys) }
        }
        let fade = s.fade
        for ch in 0..<channelCount {
            let y = x[ch], z = copy[ch]
            for j in 0..<n {
                let t = fade.value(at: t0 + Int64(j))
                if t >= 1 {
                    // Past the fade: exactly the new chain, as a block without a crossfade gives it.
                    y[j] = z[j]
                } else {
                    y[j] += (z[j] - y[j]) * t
                }
            }
        }
        if t0 + Int64(n) >= fade.startFrame + Int64(fade.length) {
            if let c = s.previous.pointer { retired.retire(c) }
            states[b].previous = ChainHandle(pointer: nil)
            states[b].crossfading = false
        }
    }

    /// out += M(t)·g(t)·bus, with k = M·g formed the same way on the constant and the ramping path.
    @_noLocks
    private func mixDown(_ b: Int, _ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>,
                         into outL: UnsafeMutablePointer<Float>, _ outR: UnsafeMutablePointer<Float>,
                         _ n: Int, _ t0: Int64, _ meter: inout MeterAccumulator) {
        let s = states[b]
        let t1 = t0 + Int64(n)
        if !s.gain.varies(in: t0, t1) && !s.pan.varies(in: t0, t1) {
            let g = s.gain.value(at: t0)
            let m = s.pan.matrix(at: t0)
            let a = m.leftFromLeft * g, bb = m.leftFromRight * g
            let c = m.rightFromLeft * g, d = m.rightFromRight * g
            for j in 0..<n {
                let ol = a * l[j] + bb * r[j], or = c * l[j] + d * r[j]
                outL[j] += ol
                outR[j] += or
                meter.add(ol, or)
            }
            return
        }
        for j in 0..<n {
            let t = t0 + Int64(j)
            let g = s.gain.value(at: t)
            let m = s.pan.matrix(at: t)
            let a = m.leftFromLeft * g, bb = m.leftFromRight * g
            let c = m.rightFromLeft * g, d = m.rightFromRight * g
            let ol = a * l[j] + bb * r[j], or = c * l[j] + d * r[j]
            outL[j] += ol
            outR[j] += or
            meter.add(ol, or)
        }
    }

    /// Feeds bus b's loudness meter with what `mixDown` and `mixDownOthers` add to the output (the same
    /// products, written into `scratch`): the bus after its chain, volume and pan, as its peak meter reads it.
    @_noLocks
    private func meterLoudness(_ b: Int, _ bus: ChannelPlanes, _ n: Int, _ t0: Int64,
                               _ loudness: UnsafeMutablePointer<LoudnessMeterCore>) {
        let s = states[b]
        let copy = ChannelPlanes(base: scratch, stride: maxBlockFrames, count: channelCount)
        let l = bus.p0, r = bus.p1, dl = copy.p0, dr = copy.p1
        for j in 0..<n {
            let t = t0 + Int64(j)
            let g = s.gain.value(at: t)
            let m = s.pan.matrix(at: t)
            let a = m.leftFromLeft * g, bb = m.leftFromRight * g
            let c = m.rightFromLeft * g, d = m.rightFromRight * g
            dl[j] = a * l[j] + bb * r[j]
            dr[j] = c * l[j] + d * r[j]
        }
        var ch = 2
        while ch < channelCount {
            let x = bus[ch], y = copy[ch]
            for j in 0..<n { y[j] = s.gain.value(at: t0 + Int64(j)) * x[j] }
            ch += 1
        }
        loudness[b].add(planes: copy, count: n)
    }

    /// Surround: out[c] += g(t)·bus[c] for the channels past the front pair (the pan is the front pair's only),
    /// metered pair by pair.
    @_noLocks
    private func mixDownOthers(_ b: Int, _ bus: ChannelPlanes, into output: ChannelPlanes, _ n: Int, _ t0: Int64) {
        let gain = states[b].gain
        let constant = !gain.varies(in: t0, t0 + Int64(n))
        let g0 = gain.value(at: t0)
        var p = 1
        while 2 * p + 1 < channelCount {
            let l = bus[2 * p], r = bus[2 * p + 1], outL = output[2 * p], outR = output[2 * p + 1]
            var meter = MeterAccumulator()
            for j in 0..<n {
                let g = constant ? g0 : gain.value(at: t0 + Int64(j))
                let ol = g * l[j], or = g * r[j]
                outL[j] += ol
                outR[j] += or
                meter.add(ol, or)
            }
            meters[b].publish(meter, pair: p)
            p += 1
        }
    }

    @_noLocks
    private func retargetGain(_ b: Int, now: Int64, rampFrames: Int) {
        let target: Float = states[b].audible ? states[b].volume : 0
        states[b].gain = LinearRamp(from: states[b].gain.value(at: now), to: target, startFrame: now, length: rampFrames)
    }

    @_noLocks
    package func apply(_ command: BusCommand, now: Int64) {
        switch command {
        case let .configure(bus):
            let b = Int(bus)
            guard b > 0, b < Self.count else { return }
            states[b].configured = true
            activeFlag.pointee = true
        case let .volume(bus, volume, rampFrames):
            let b = Int(bus)
            guard b > 0, b < Self.count else { return }
            states[b].volume = volume
            retargetGain(b, now: now, rampFrames: rampFrames)
        case let .audible(bus, audible, rampFrames):
            let b = Int(bus)
            guard b > 0, b < Self.count else { return }
            states[b].audible = audible
            retargetGain(b, now: now, rampFrames: rampFrames)
        case let .pan(bus, matrix, rampFrames):
            let b = Int(bus)
            guard b > 0, b < Self.count else { return }
            states[b].pan.retarget(matrix, at: now, rampFrames: rampFrames)
        case let .chain(bus, chain, fadeFrames):
            let b = Int(bus)
            guard b >= 0, b < Self.count else {
                if let c = chain.pointer { retired.retire(c) }
                return
            }
            activeFlag.pointee = true
            // A change arriving mid-crossfade cuts the oldest chain out at once.
            if states[b].crossfading, let c = states[b].previous.pointer { retired.retire(c) }
            let old = states[b].chain
            states[b].chain = chain
            if fadeFrames > 0 {
                states[b].previous = old
                states[b].crossfading = true
                states[b].fade = LinearRamp(from: 0, to: 1, startFrame: now, length: fadeFrames)
            } else {
                if let c = old.pointer { retired.retire(c) }
                states[b].previous = ChainHandle(pointer: nil)
                states[b].crossfading = false
            }
        case let .order(order):
            self.order.pointee = order
        case let .parameter(write):
            write.target.pointee = write.value
        case .pause, .resume:
            break // the voices' side: `VoiceUpdate.pauseBus`/`resumeBus`
        }
    }
}

extension Voice {
    /// True while the voice is moving from `previousBus` to `bus` somewhere in [t0, t1).
    @inline(__always)
    @_noLocks
    func isRouting(_ t0: Int64) -> Bool {
        routing.busFade.length > 0 && t0 < routing.busFade.startFrame + Int64(routing.busFade.length)
    }

    /// Moves the voice to `bus`: at once if it is not sounding yet (or `rampFrames` is 0), else crossfading
    /// from the old bus to the new one over `rampFrames` from `now`. A move that arrives during another one
    /// starts from the bus the voice was heading for.
    @_noLocks
    package mutating func route(to newBus: Int32, now: Int64, rampFrames: Int) {
        if newBus == routing.bus { return }
        if !isPlaying || rampFrames == 0 {
            routing.bus = newBus
            routing.busFade = .constant(1)
            return
        }
        routing.previousBus = routing.bus
        routing.bus = newBus
        routing.busFade = LinearRamp(from: 0, to: 1, startFrame: max(now, transport.startFrame), length: rampFrames)
    }
}
