import Ensemble
import Foundation

/// Section 6: what one bus with an effect chain costs on the render thread.
enum ChainCost {
    struct Row {
        var name: String
        var nsPerFrame: Double
        var allocations: UInt64
    }

    static let chains: [(String, [EffectSpec]?)] = [
        ("no bus (voice on master)", nil),
        ("bus, empty chain", []),
        ("lowpass biquad", [.filter(.lowpass, frequency: 2000, q: 0.707, gainDB: 0)]),
        ("graphic EQ (10 biquads)", [try! EffectSpec.eq(preset: "Rock")]),
        ("delay 250 ms", [.delay(time: 0.25, feedback: 0.3, mix: 0.3)]),
        ("limiter, 5 ms look-ahead", [.limiter(ceilingDB: -1, lookahead: 0.005, release: 0.05)]),
        ("EQ + lowpass + delay + limiter", [try! EffectSpec.eq(preset: "Rock"), .filter(.lowpass, frequency: 2000, q: 0.707, gainDB: 0),
                                           .delay(time: 0.25, feedback: 0.3, mix: 0.3),
                                           .limiter(ceilingDB: -1, lookahead: 0.005, release: 0.05)]),
    ]

    /// One looping stereo voice (into bus 1 with the chain, or straight to the master), `seconds` of 48 kHz
    /// rendered in 1024-frame blocks, best of `repeats`: render ns per output frame.
    static func run(sound: Sound, seconds: Double, repeats: Int) throws -> [Row] {
        try chains.map { name, chain in
            var best = Double.infinity, allocations: UInt64 = 0
            for _ in 0..<repeats {
                let engine = try EnsembleRuns.engine(voices: 1)
                let track = try engine.makeTrack(sound)
                try track.setNumberOfLoops(-1)
                if let chain {
                    try engine.setBus(Bus(1), settings: BusSettings(volume: 0.9))
                    try engine.setEffects(chain, on: Bus(1))
                    try track.setBus(Bus(1))
                }
                try track.play(at: engine.time(frame: 0))
                let frames = Int(seconds * 48000)
                let r = EnsembleRuns.renderLoop(engine, frames: frames)
                best = min(best, r.wall * 1e9 / Double(frames))
                allocations += r.allocations
            }
            return Row(name: name, nsPerFrame: best, allocations: allocations)
        }
    }
}
