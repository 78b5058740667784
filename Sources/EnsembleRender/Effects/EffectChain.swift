import Foundation
import EnsembleFormats

/// One processor in a bus's effect chain, as the control side describes it.
public enum EffectSpec: Sendable, Equatable {
    /// An RBJ cookbook biquad (`gainDB` is used by peaking and the shelves).
    case filter(BiquadShape, frequency: Double, q: Double, gainDB: Double)
    /// The 10-band graphic equaliser with these gains in dB at `GraphicEQ.bandCentres`.
    case graphicEQ(gains: [Double])
    /// Echo: `time` seconds, `feedback` 0…0.95, `mix` 0 (dry) … 1 (wet only).
    case delay(time: Double, feedback: Double, mix: Double)
    /// Look-ahead limiter: ceiling in dBFS, look-ahead and release in seconds.
    case limiter(ceilingDB: Double, lookahead: Double, release: Double)
    /// Algorithmic reverb (`Reverb`) with EFX's parameters (`ReverbSettings`; presets by name through
    /// `reverb(preset:)`).
    case reverb(ReverbSettings)
    /// Compressor (`Compressor`), optionally keyed by another bus (`CompressorSettings.sidechain`).
    case compressor(CompressorSettings)
    /// An application's effect (`AudioEffect`, wrapped in a `CustomEffect` with its parameters). Prepared by
    /// `Engine.setEffects` for the engine's format; a handle goes in one chain (or one track's insert) only, once.
    case custom(CustomEffect)

    /// The reverb set to a named preset (see `ReverbSettings.presetNames`); throws `EngineError.unknownPreset`
    /// for another name.
    public static func reverb(preset: String) throws(EngineError) -> EffectSpec {
        guard let settings = ReverbSettings.preset(named: preset) else { throw .unknownPreset(kind: "reverb", name: preset) }
        return .reverb(settings)
    }

    /// The graphic equaliser set to a named preset (see `GraphicEQ.presets`); throws `EngineError.unknownPreset`
    /// for another name.
    public static func eq(preset: String) throws(EngineError) -> EffectSpec {
        guard let gains = GraphicEQ.preset(named: preset) else { throw .unknownPreset(kind: "graphic EQ", name: preset) }
        return .graphicEQ(gains: gains)
    }

    /// The first parameter outside its range at `sampleRate`: its scene key, its value and the range expected.
    public func problem(sampleRate: Double) -> (key: String, value: Double, expected: String)? {
        func bad(_ v: Double, _ range: ClosedRange<Double>) -> Bool { !(v.isFinite && range.contains(v)) }
        switch self {
        case let .filter(_, frequency, q, gainDB):
            let nyquist = sampleRate / 2
            if !(frequency.isFinite && frequency > 0 && frequency < nyquist) {
                return ("frequency", frequency, "between 0 and \(nyquist) Hz (half the sample rate)")
            }
            if bad(q, 0.05...50) { return ("q", q, "0.05…50") }
            if bad(gainDB, -48...48) { return ("gain", gainDB, "−48…48 dB") }
        case let .graphicEQ(gains):
            if gains.count != GraphicEQ.bandCentres.count { return ("gains", Double(gains.count), "10 band gains") }
            if let g = gains.first(where: { bad($0, -24...24) }) { return ("gains", g, "−24…24 dB") }
        case let .delay(time, feedback, mix):
            if bad(time, 0.001...5) { return ("time", time, "0.001…5 s") }
            if bad(feedback, 0...0.95) { return ("feedback", feedback, "0…0.95") }
            if bad(mix, 0...1) { return ("mix", mix, "0…1") }
        case let .limiter(ceilingDB, lookahead, release):
            if bad(ceilingDB, -60...0) { return ("ceiling", ceilingDB, "−60…0 dBFS") }
            if bad(lookahead, 0.0001...0.05) { return ("lookahead", lookahead, "0.0001…0.05 s") }
            if bad(release, 0.001...5) { return ("release", release, "0.001…5 s") }
        case let .reverb(settings):
            return settings.problem()
        case let .compressor(settings):
            return settings.problem()
        case .custom:
            return nil
        }
        return nil
    }
}

extension EffectSpec {
    /// The bytes `EffectChain.make` allocates for this effect's state on one channel pair (an upper bound for the
    /// reverb), so that a chain can be refused before it is allocated.
    package func stateBytes(sampleRate fs: Double) -> Int {
        func frames(_ seconds: Double) -> Int { Int((max(seconds, 0) * fs).rounded()) }
        switch self {
        case .filter: return MemoryLayout<BiquadSection>.stride
        case let .graphicEQ(gains): return max(gains.count, 1) * MemoryLayout<BiquadSection>.stride
        case let .delay(time, _, _): return 2 * max(frames(time), 1) * MemoryLayout<Float>.stride
        case let .limiter(_, lookahead, _):
            // Delay lines and minima: 12 bytes per look-ahead frame; the queue and the slow minima: 16 per held frame.
            let l = max(frames(lookahead), 1)
            return l * 12 + (max(l, Limiter.holdFrames(sampleRate: fs)) + 2) * 16
        case let .compressor(settings):
            // The look-ahead's two delay lines and the detector's hold queue (12 bytes an entry).
            return 2 * frames(settings.lookahead) * MemoryLayout<Float>.stride
                + (Compressor.holdFrames(sampleRate: fs) + 2) * 12
        case let .reverb(settings): return Reverb.stateBytesBound(settings: settings, sampleRate: fs)
        case .custom: return 0 // allocated by the application's `prepare`
        }
    }
}

/// A processor on the render side: plain state behind pointers allocated by `EffectChain.make`.
package enum EffectUnit: BitwiseCopyable {
    case biquads(UnsafeMutablePointer<BiquadSection>, count: Int)
    case delay(UnsafeMutablePointer<DelayLine>)
    case limiter(UnsafeMutablePointer<Limiter>)
    case reverb(UnsafeMutablePointer<Reverb>)
    case compressor(UnsafeMutablePointer<Compressor>)
    /// An application's effect: an opaque `Unmanaged<CustomEffect>` the chain holds a reference to.
    case custom(UnsafeMutableRawPointer)
}

extension EffectUnit {
    /// Puts the processor back in the state `EffectChain.make` left it in (render side: no allocation).
    @_noLocks
    package func reset() {
        switch self {
        case let .biquads(s, sections): for k in 0..<sections { s[k].reset() }
        case let .delay(d): d.pointee.reset()
        case let .limiter(l): l.pointee.reset()
        case let .reverb(v): v.pointee.reset()
        case let .compressor(c): c.pointee.reset()
        case let .custom(e): CustomEffectCall.reset(e)
        }
    }
}

/// A bus's chain of processors, allocated on the control side, installed by a command carrying its pointer,
/// run in place on the render side, and handed back (through `RetiredChains`) to be freed on the control side.
///
/// Every processor is a stereo one (the limiter links its two channels). On surround output the chain holds one
/// instance of the whole list per channel pair (`pairs`: front left/right, centre/LFE, back left/right, side
/// left/right), each with the same settings and state of its own, so every channel is filtered, delayed and
/// limited as the front pair is (a master limiter keeps every channel under its ceiling; the pairs are limited
/// independently of one another). Stereo output has one pair: the chain is exactly what it always was.
/// A compressor links the two channels of its pair; keyed by another bus (`CompressorSettings.sidechain`), every
/// pair's instance listens to the whole key bus (the maximum over all its channels), so all pairs duck alike.
package struct EffectChain {
    /// `count` units per pair, pair p's at `units + p · count`.
    package var units: UnsafeMutablePointer<EffectUnit>
    package var count: Int
    /// Channel pairs the chain processes (1 for stereo, 3 for 5.1, 4 for 7.1).
    package var pairs: Int = 1
    /// Links a retired chain into `RetiredChains`' overflow list while the ring back is full.
    package var next: UnsafeMutablePointer<EffectChain>?

    /// Allocates and initialises the chain (all state zeroed), with `pairs` instances of the list (one per
    /// output channel pair). An empty list gives nil: "no chain".
    package static func make(_ specs: [EffectSpec], sampleRate: Double, pairs: Int = 1) -> UnsafeMutablePointer<EffectChain>? {
        guard !specs.isEmpty else { return nil }
        let pairs = max(pairs, 1)
        let units = UnsafeMutablePointer<EffectUnit>.allocate(capacity: specs.count * pairs)
        // Pair after pair, each the whole list in order.
        for (i, spec) in Array(repeating: specs, count: pairs).joined().enumerated() {
            let unit: EffectUnit
            switch spec {
            case let .filter(shape, frequency, q, gainDB):
                let s = UnsafeMutablePointer<BiquadSection>.allocate(capacity: 1)
                s.initialize(to: BiquadSection(BiquadCoefficients(shape: shape, frequency: frequency, q: q,
                                                                  gainDB: gainDB, sampleRate: sampleRate)))
                unit = .biquads(s, count: 1)
            case let .graphicEQ(gains):
                let coefficients = GraphicEQ.sections(gains: gains, sampleRate: sampleRate)
                let s = UnsafeMutablePointer<BiquadSection>.allocate(capacity: max(coefficients.count, 1))
                for (k, c) in coefficients.enumerated() { (s + k).initialize(to: BiquadSection(c)) }
                unit = .biquads(s, count: coefficients.count)
            case let .delay(time, feedback, mix):
                let d = UnsafeMutablePointer<DelayLine>.allocate(capacity: 1)
                d.initialize(to: DelayLine(frames: Int((time * sampleRate).rounded()), feedback: Float(feedback),
                                           mix: Float(mix)))
                unit = .delay(d)
            case let .limiter(ceilingDB, lookahead, release):
                let l = UnsafeMutablePointer<Limiter>.allocate(capacity: 1)
                l.initialize(to: Limiter(ceiling: Float(pow(10, ceilingDB / 20)),
                                         lookahead: Int((lookahead * sampleRate).rounded()),
                                         hold: Limiter.holdFrames(sampleRate: sampleRate),
                                         releaseFrames: Int((release * sampleRate).rounded())))
                unit = .limiter(l)
            case let .reverb(settings):
                let v = UnsafeMutablePointer<Reverb>.allocate(capacity: 1)
                v.initialize(to: Reverb(settings: settings, sampleRate: sampleRate))
                unit = .reverb(v)
            case let .compressor(settings):
                let c = UnsafeMutablePointer<Compressor>.allocate(capacity: 1)
                c.initialize(to: Compressor(settings: settings, sampleRate: sampleRate))
                unit = .compressor(c)
            case let .custom(effect):
                // One reference per pair's unit, released by `free`; every pair's unit calls the same effect.
                unit = .custom(Unmanaged.passRetained(effect).toOpaque())
            }
            (units + i).initialize(to: unit)
        }
        let chain = UnsafeMutablePointer<EffectChain>.allocate(capacity: 1)
        chain.initialize(to: EffectChain(units: units, count: specs.count, pairs: pairs, next: nil))
        return chain
    }

    /// Frees a chain made by `make` (control side only).
    package static func free(_ chain: UnsafeMutablePointer<EffectChain>) {
        let c = chain.pointee
        for i in 0..<(c.count * c.pairs) {
            switch c.units[i] {
            case let .biquads(s, _): s.deallocate()
            case let .delay(d):
                d.pointee.deallocate()
                d.deallocate()
            case let .limiter(l):
                l.pointee.deallocate()
                l.deallocate()
            case let .reverb(v):
                v.pointee.deallocate()
                v.deallocate()
            case let .compressor(c):
                c.pointee.deallocate()
                c.deallocate()
            case let .custom(e):
                Unmanaged<CustomEffect>.fromOpaque(e).release()
            }
        }
        c.units.deallocate()
        chain.deallocate()
    }

    /// The largest magnitude a processor's output may have: 10⁹ is 180 dB over full scale, which no signal reaches
    /// but a recursion fed NaN, infinity or a near-`Float.greatestFiniteMagnitude` sample does within a block.
    package static let runawayLevel: Float = 1e9

    /// Runs every processor of pair `pair`'s instance in order over `n` frames of that pair, in place, the first
    /// being output frame `frame` (`EffectBlock.frame`). A
    /// compressor with a sidechain reads its key bus's levels for these frames from `keys` (the same levels for
    /// every pair: on surround each pair's detector hears the whole key bus; without a sidechain each pair
    /// detects on its own two channels).
    ///
    /// A processor whose input or output this block is not finite or beyond `runawayLevel` is reset to its initial
    /// state and the block is silenced from there on, so one bad sample costs one block, never the rest of the mix.
    /// Returns how many processors were reset.
    @_noLocks
    @discardableResult
    package static func process(_ chain: UnsafeMutablePointer<EffectChain>,
                        _ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, _ n: Int, pair: Int = 0,
                        frame: Int64 = 0, keys: SidechainKeys) -> Int {
        let count = chain.pointee.count
        guard pair < chain.pointee.pairs else { return 0 }
        let units = chain.pointee.units + pair * count
        var resets = 0
        // A bad sample coming in poisons the processor's state even when its output this block looks fine (a
        // reverb's pre-delay holds it back), so the input is judged as well as the output.
        var inputSane = isSane(l, r, n)
        for i in 0..<count {
            switch units[i] {
            case let .biquads(s, sections):
                let block = EffectBlock(left: l, right: r, frames: n, frame: frame, pair: pair,
                                        parameters: noParameters, parameterCount: 0)
                for k in 0..<sections { s[k].process(block) }
            case let .delay(d):
                d.pointee.process(EffectBlock(left: l, right: r, frames: n, frame: frame, pair: pair,
                                              parameters: noParameters, parameterCount: 0))
            case let .limiter(lim):
                lim.pointee.process(EffectBlock(left: l, right: r, frames: n, frame: frame, pair: pair,
                                                parameters: noParameters, parameterCount: 0))
            case let .reverb(v):
                v.pointee.process(EffectBlock(left: l, right: r, frames: n, frame: frame, pair: pair,
                                              parameters: noParameters, parameterCount: 0))
            case let .compressor(c):
                var block = EffectBlock(left: l, right: r, frames: n, frame: frame, pair: pair,
                                        parameters: noParameters, parameterCount: 0)
                block.key = keys.levels(of: c.pointee.sidechain)
                c.pointee.process(block)
            case let .custom(e):
                CustomEffectCall.process(e, l, r, n, frame: frame, pair: pair)
            }
            guard !inputSane || !isSane(l, r, n) else { continue }
            inputSane = true
            units[i].reset()
            l.update(repeating: 0, count: n)
            r.update(repeating: 0, count: n)
            resets += 1
        }
        return resets
    }

    /// The parameter array of an effect without parameters (never read: `parameterCount` is 0).
    private static var noParameters: UnsafePointer<Float> {
        @_noLocks get { UnsafePointer(bitPattern: MemoryLayout<Float>.alignment)! }
    }

    /// Whether every sample of the block is finite and within `runawayLevel` (one comparison each: NaN fails it).
    @_noLocks
    package static func isSane(_ l: UnsafePointer<Float>, _ r: UnsafePointer<Float>, _ n: Int) -> Bool {
        for j in 0..<n where !(abs(l[j]) <= runawayLevel && abs(r[j]) <= runawayLevel) { return false }
        return true
    }
}

/// Retired chains on their way from the render side back to the control side to be freed.
///
/// The render side never drops one: a chain that finds the ring full waits on a render-private list, linked
/// through the chains themselves (no allocation), and enters the ring as soon as it has room.
package struct RetiredChains: @unchecked Sendable {
    package let indices = RingIndices(minimumCapacity: 1024)
    package let storage: UnsafeMutablePointer<UnsafeMutablePointer<EffectChain>?>
    /// Head of the overflow list (render side only).
    private let overflow: UnsafeMutablePointer<UnsafeMutablePointer<EffectChain>?>

    package init() {
        storage = .allocate(capacity: indices.capacity)
        overflow = .allocate(capacity: 1)
        overflow.initialize(to: nil)
    }

    /// Render side: hands `chain` back to be freed.
    @_noLocks
    func retire(_ chain: UnsafeMutablePointer<EffectChain>) {
        flush()
        if overflow.pointee == nil && push(chain) { return }
        chain.pointee.next = overflow.pointee
        overflow.pointee = chain
    }

    /// Render side: moves chains waiting on the overflow list into the ring while it has room.
    @_noLocks
    package func flush() {
        while let c = overflow.pointee {
            // Read the link first: once in the ring, the chain belongs to the control side.
            let next = c.pointee.next
            guard push(c) else { return }
            overflow.pointee = next
        }
    }

    @_noLocks
    private func push(_ chain: UnsafeMutablePointer<EffectChain>) -> Bool {
        guard let w = indices.reserve(1) else { return false }
        storage[w & indices.mask] = chain
        indices.publish(w + 1)
        return true
    }

    /// Control side (one caller at a time): frees every chain handed back so far; returns how many.
    @discardableResult
    package func drain() -> Int {
        var freed = 0
        while let r = indices.next() {
            if let c = storage[r & indices.mask] {
                EffectChain.free(c)
                freed += 1
            }
            indices.consumed(r)
        }
        return freed
    }

    /// Frees everything, the overflow list included (once the render side is gone).
    package func deallocate() {
        drain()
        while let c = overflow.pointee {
            overflow.pointee = c.pointee.next
            EffectChain.free(c)
        }
        overflow.deallocate()
        indices.deallocate()
        storage.deallocate()
    }
}
