@_spi(Testing) import Ensemble
@_spi(Testing) import EnsembleFormats
@_spi(Testing) import EnsembleRender
@_spi(Testing) import EnsembleEngine
@_spi(Testing) import EnsembleOutput
@_spi(Testing) import EnsembleScene
import Foundation
import Synchronization

// Threads: shared by the control threads (traffic), the engine's event thread (ledger callbacks) and the render
// loop (chain lists for the replay).

/// What every soak thread shares: the engine under test, the ledger, the sounds (kept alive for the whole run,
/// because the replay plays them after the live engine has let go), the registered effects and the effect lists
/// given to `setEffects`.
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

    /// Each custom effect given to the live engine, with the twin the replay runs in its place (same effect, same
    /// initial parameters): kept for the whole run, as the engines keep them.
    private let customEffects = Mutex<[(live: CustomEffect, twin: CustomEffect)]>([])

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

    /// Remembers a custom effect the live engine has installed and its twin for the replay.
    func addCustomEffect(_ live: CustomEffect, twin: CustomEffect) {
        customEffects.withLock { $0.append((live, twin)) }
    }

    /// Parameter changes of custom effects the traffic made (at once or timed).
    let parameterChanges = Atomic<Int>(0)

    /// How many custom effects the traffic installed.
    var customEffectCount: Int { customEffects.withLock { $0.count } }

    /// One of the live custom effects (nil before the first).
    func customEffect(_ pick: (Int) -> Int) -> CustomEffect? {
        customEffects.withLock { $0.isEmpty ? nil : $0[pick($0.count)].live }
    }

    /// Where the replay writes a logged parameter change: the same parameter of the twin of the live effect whose
    /// array `target` points into.
    func replayTarget(_ target: UnsafeMutablePointer<Float>) -> UnsafeMutablePointer<Float> {
        let twin: UnsafeMutablePointer<Float>? = customEffects.withLock { pairs in
            for pair in pairs where target >= pair.live.parameters && target < pair.live.parameters + pair.live.parameterCount {
                return pair.twin.parameters + (target - pair.live.parameters)
            }
            return nil
        }
        guard let twin else {
            ledger.violation("the log has a parameter change for an effect the soak never installed")
            return target
        }
        return twin
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
