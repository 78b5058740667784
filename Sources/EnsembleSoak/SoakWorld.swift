@_spi(Testing) import Ensemble
@_spi(Testing) import EnsembleFormats
@_spi(Testing) import EnsembleRender
@_spi(Testing) import EnsembleEngine
@_spi(Testing) import EnsembleOutput
@_spi(Testing) import EnsembleScene
import Foundation
import Synchronization

// Threads: shared by the control threads (traffic), the engine's event thread (ledger callbacks) and the render
// loop (chain lists, insert twins and parameter targets for the replay).

/// What every soak thread shares: the engine under test, the ledger, the sounds (kept alive for the whole run,
/// because the replay plays them after the live engine has let go), the registered effects, the effect lists
/// given to `setEffects` and the twins of the custom effects (chains and track inserts) the replay runs.
final class SoakWorld: Sendable {
    let engine: Engine
    let ledger = SoakLedger()
    let trackSounds: [Sound]
    let effectSounds: [Sound]
    let effects: Mutex<[SoundEffect]>
    /// Per bus, the effect lists `setEffects` was given and the replay has not used yet, in the order the engine
    /// sent them (the lock is held across the call, so the order cannot differ).
    private let chains = Mutex<[[[EffectSpec]]]>(Array(repeating: [], count: Engine.maxBuses + 1))
    let running = Atomic<Bool>(true)
    /// Calls made by all control threads so far (the render loop keeps pace with them).
    let calls = Atomic<Int>(0)
    private let trackIDs = Atomic<Int>(0)

    deinit { strayParameter.deallocate() }

    init(engine: Engine) throws {
        self.engine = engine
        let rate = engine.sampleRate
        // Different rates, channel counts and lengths, so the resampler, pan law and loop paths all run.
        trackSounds = try [
            Self.tone("mono 48k", rate: 48000, frames: 14400, channels: 1, hz: 220),
            Self.tone("stereo 44.1k", rate: 44100, frames: 22050, channels: 2, hz: 330),
            Self.tone("mono 22.05k", rate: 22050, frames: 4410, channels: 1, hz: 440),
            Self.tone("stereo 48k long", rate: 48000, frames: 72000, channels: 2, hz: 110),
        ]
        effectSounds = try [
            Self.tone("click", rate: rate, frames: 1200, channels: 1, hz: 1000),
            Self.tone("blip", rate: 44100, frames: 4410, channels: 2, hz: 660),
            Self.tone("zap", rate: 32000, frames: 6400, channels: 1, hz: 880),
        ]
        var registered: [SoundEffect] = []
        for (i, s) in effectSounds.enumerated() {
            registered.append(try engine.registerEffect(s, limits: Self.limits[i], variation: Self.variations[i]))
        }
        effects = Mutex(registered)
    }

    /// The instance limits each effect sound is registered with (by its index in `effectSounds`), so that steals
    /// and refusals under per-effect limits happen too: the click 2 at once (quietest goes) with a 5 ms
    /// cooldown, the blip unlimited, the zap 1 at once (later firings refused).
    static let limits = [
        EffectLimits(maxInstances: 2, steal: .quietest, cooldown: 0.005),
        EffectLimits(),
        EffectLimits(maxInstances: 1, steal: .refuse),
    ]

    /// The per-firing variation of each effect sound: the blip's pitch and level vary, so the seeded draws run
    /// under concurrent firing too (the replay still matches: the drawn values travel in the commands).
    static let variations = [EffectVariation(), EffectVariation(pitch: 3, volume: 6), EffectVariation()]

    /// A decaying tone with a little of a second partial, different in each channel.
    static func tone(_ name: String, rate: Double, frames: Int, channels: Int, hz: Double) throws -> Sound {
        let data = (0..<channels).map { c in
            (0..<frames).map { i -> Float in
                let t = Double(i) / rate, decay = exp(-2 * t)
                return Float(0.3 * decay * (sin(2 * .pi * hz * t) + 0.3 * sin(2 * .pi * hz * Double(c + 2) * t)))
            }
        }
        return try Sound(DecodedAudio(sampleRate: rate, channels: data), name: name)
    }

    func nextTrackID() -> Int { trackIDs.add(1, ordering: .relaxed).newValue }

    /// A new track whose callbacks report to the ledger under `id`.
    func makeTrack(_ sound: Sound) throws -> (id: Int, track: Track) {
        let track = try engine.makeTrack(sound)
        let id = nextTrackID(), ledger = self.ledger
        track.onStart = { _ in ledger.started(track: id) }
        track.onFinish = { end in ledger.finished(track: id, end) }
        return (id, track)
    }

    /// Each custom effect given to the live engine and still held by it (or by the traffic), with the twin the
    /// replay runs in its place (same effect, same initial parameters); see `retireUnheldEffects`.
    private let customEffects = Mutex<[(live: CustomEffect, twin: CustomEffect)]>([])
    /// Effects the live engine and the traffic let go, with their twins, kept until the replay has rendered past
    /// `until`: a change the render side took after the round's log was drained is logged (and replayed) later,
    /// and must still find its twin, and the live effect must not be freed meanwhile (its address could be reused
    /// and mapped to the wrong twin).
    private let retired = Mutex<[(live: CustomEffect, twin: CustomEffect, until: Int64)]>([])
    /// Where a parameter change the soak cannot map is written (after its violation is noted), never into an
    /// effect's own memory: written only by the render loop's replay, never read.
    nonisolated(unsafe) private let strayParameter = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    /// How many custom effects the traffic installed.
    private let installedEffects = Atomic<Int>(0)

    /// `setEffects`, remembering the list for the replay when the engine takes it: `replay` (the same list with
    /// each custom effect's twin in its place) when given. Returns whether the engine took it.
    @discardableResult
    func setEffects(_ specs: [EffectSpec], replay: [EffectSpec]? = nil, on bus: Bus) -> Bool {
        chains.withLock { chains in
            do {
                try engine.setEffects(specs, on: bus)
                chains[bus.index].append(replay ?? specs)
                return true
            } catch {
                ledger.violation("setEffects(\(specs), on: \(bus)) refused: \(error)")
                return false
            }
        }
    }

    /// Per voice slot, the twins of the insert effects `setInsert` put there that the replay has not used yet, in
    /// the order the engine sent them (the lock is held across the call; a slot changes owner only after the
    /// engine has cleared its insert, so one slot's inserts come in the log in this order whichever track set them).
    private let inserts = Mutex<[Int32: [CustomEffect]]>([:])
    /// Inserts set (with an effect) and cleared by the traffic.
    let insertsSet = Atomic<Int>(0), insertsCleared = Atomic<Int>(0)

    /// `Track.setInsert`, remembering `twin` (the twin of `effect`; nil with a nil effect) for the replay when the
    /// engine takes it. Returns whether it did.
    @discardableResult
    func setInsert(_ effect: CustomEffect?, twin: CustomEffect?, on track: Track) -> Bool {
        inserts.withLock { inserts in
            do {
                try track.setInsert(effect)
                if let twin { inserts[track.slot, default: []].append(twin) }
                if effect == nil { insertsCleared.add(1, ordering: .relaxed) } else { insertsSet.add(1, ordering: .relaxed) }
                return true
            } catch {
                ledger.violation("setInsert on slot \(track.slot) refused: \(error)")
                return false
            }
        }
    }

    /// The replay's twin for the next insert the log puts on `slot`.
    func nextInsert(slot: Int) -> CustomEffect? {
        let next: CustomEffect? = inserts.withLock { inserts in
            guard inserts[Int32(slot)]?.isEmpty == false else { return nil }
            return inserts[Int32(slot)]?.removeFirst()
        }
        if next == nil { ledger.violation("the log has an insert on slot \(slot) that setInsert never made") }
        return next
    }

    /// Remembers a custom effect the live engine has installed and its twin for the replay.
    func addCustomEffect(_ live: CustomEffect, twin: CustomEffect) {
        customEffects.withLock { $0.append((live, twin)) }
        installedEffects.add(1, ordering: .relaxed)
    }

    /// Render loop, after a round's replay: retires the effects only this list still holds (their chain or insert
    /// freed, no parameter change on its way, the traffic not using them), so a long soak keeps only the live
    /// ones, as the engine does. A change of such an effect may still be on its way into the log: sent before the
    /// engine let go, taken by the render side after the round's log was drained. It is taken at most `aheadLimit`
    /// frames past the live engine's `liveFrame` (a timed one by its frame, the rest at the next block), so the
    /// pair stays, mapped, until the replay is past that by as much again.
    func retireUnheldEffects(replayFrame: Int64, liveFrame: Int64) {
        let gone: [(live: CustomEffect, twin: CustomEffect)] = customEffects.withLock { pairs in
            var gone: [(live: CustomEffect, twin: CustomEffect)] = [], i = 0
            while i < pairs.count {
                if isKnownUniquelyReferenced(&pairs[i].live) {
                    gone.append(pairs[i])
                    pairs.swapAt(i, pairs.count - 1)
                    pairs.removeLast()
                } else {
                    i += 1
                }
            }
            return gone
        }
        retired.withLock { retired in
            retired.removeAll { replayFrame >= $0.until }
            retired += gone.map { ($0.live, $0.twin, liveFrame + 2 * Soak.aheadLimit) }
        }
    }

    /// Starts of the generated tracks the traffic asked for.
    let generatedStarts = Atomic<Int>(0)

    /// Parameter changes of custom effects and generators the traffic made (at once or timed).
    let parameterChanges = Atomic<Int>(0)

    /// How many custom effects the traffic installed.
    var customEffectCount: Int { installedEffects.load(ordering: .relaxed) }

    /// One of the live custom effects (nil before the first).
    func customEffect(_ pick: (Int) -> Int) -> CustomEffect? {
        customEffects.withLock { $0.isEmpty ? nil : $0[pick($0.count)].live }
    }

    /// Each generated source given to a live track, with the twin the replay runs in its place (same generator,
    /// same initial parameters): kept for the whole run, as the engines keep them.
    private let generators = Mutex<[(live: GeneratedSource, twin: GeneratedSource)]>([])

    /// A new track playing a new generated source (`SoakGenerator` of `length` frames, `channels` 1 or 2, its
    /// parameters frequency and level), whose twin the replay gets; its callbacks report to the ledger.
    func makeGeneratedTrack(length: Int64, channels: Int, parameters: [Float]) throws -> (id: Int, track: Track,
                                                                                          source: GeneratedSource) {
        let live = try GeneratedSource(SoakGenerator(length: length), channelCount: channels, parameters: parameters)
        let twin = try GeneratedSource(SoakGenerator(length: length), channelCount: channels, parameters: parameters)
        let made = try makeTrack(try Sound(generator: live, sampleRate: engine.sampleRate, name: "generated"))
        // Known before the track can start, so before the log can hold a start or a parameter change for it.
        generators.withLock { $0.append((live, twin)) }
        return (made.id, made.track, live)
    }

    /// `process` and `generate` calls of the live custom effects and generators that allocated on the render
    /// thread (debug builds count them; the soak's own must not).
    var allocatingCalls: Int {
        customEffects.withLock { $0.reduce(0) { $0 + $1.live.allocatingCalls } }
            + generators.withLock { $0.reduce(0) { $0 + $1.live.allocatingCalls } }
    }

    /// The replay's twin of the live generated source a logged start plays.
    func generatorTwin(_ live: GeneratedSource) -> GeneratedSource? {
        let twin = generators.withLock { pairs in pairs.first { $0.live === live }?.twin }
        if twin == nil { ledger.violation("the log starts a generated source the soak never made") }
        return twin
    }

    /// Where the replay writes a logged parameter change: the same parameter of the twin of the live effect or
    /// generated source whose array `target` points into.
    func replayTarget(_ target: UnsafeMutablePointer<Float>) -> UnsafeMutablePointer<Float> {
        // The address as a number, so what the lookups under the locks return is not tied to the caller's pointer.
        let address = Int(bitPattern: target)
        let twin: UnsafeMutablePointer<Float>? = customEffects.withLock { pairs in
            Self.counterpart(address, in: pairs) { ($0.live.parameters, $0.live.parameterCount, $0.twin.parameters) }
        } ?? retired.withLock { pairs in
            Self.counterpart(address, in: pairs) { ($0.live.parameters, $0.live.parameterCount, $0.twin.parameters) }
        } ?? generators.withLock { pairs in
            Self.counterpart(address, in: pairs) { ($0.live.parameters, $0.live.parameterCount, $0.twin.parameters) }
        }
        guard let twin else {
            ledger.violation("the log has a parameter change for an effect or generator the soak never made")
            return strayParameter
        }
        return twin
    }

    /// `counterpart` in the first of `pairs` whose live array (`arrays`: live parameters, their count, the twin's)
    /// holds `address`.
    private static func counterpart<Pair>(_ address: Int, in pairs: [Pair],
                                          _ arrays: (Pair) -> (UnsafeMutablePointer<Float>, Int, UnsafeMutablePointer<Float>))
        -> UnsafeMutablePointer<Float>? {
        for p in pairs {
            let (live, count, twin) = arrays(p)
            if let t = counterpart(address, live, count, twin) { return t }
        }
        return nil
    }

    /// The parameter of `twin` at the index the one at `address` has in `live` (`count` parameters), nil if
    /// `address` is not in `live`.
    private static func counterpart(_ address: Int, _ live: UnsafeMutablePointer<Float>, _ count: Int,
                                    _ twin: UnsafeMutablePointer<Float>) -> UnsafeMutablePointer<Float>? {
        let index = (address - Int(bitPattern: live)) / MemoryLayout<Float>.stride
        return address >= Int(bitPattern: live) && index < count ? twin + index : nil
    }

    /// The replay's next chain for `bus`.
    func nextChain(onBus bus: Int) -> [EffectSpec] {
        let next: [EffectSpec]? = chains.withLock { chains in chains[bus].isEmpty ? nil : chains[bus].removeFirst() }
        guard let next else {
            ledger.violation("the log has a chain change on bus \(bus) that setEffects never made")
            return []
        }
        return next
    }
}

/// SplitMix64: a tiny seeded generator, so each control thread's sequence of calls is reproducible from the seed.
/// (The test target uses it too, for its reproducible fuzz cases.)
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var base: VariationGenerator

    /// A generator whose sequence follows from `seed` alone.
    public init(seed: UInt64) { base = VariationGenerator(seed: seed) }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 { base.next() }
}

extension SplitMix64 {
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    mutating func unit() -> Double { Double(next() >> 11) * 0x1p-53 }
    mutating func float(_ range: ClosedRange<Float>) -> Float {
        range.lowerBound + Float(unit()) * (range.upperBound - range.lowerBound)
    }
}
