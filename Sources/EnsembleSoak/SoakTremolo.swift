import Ensemble
import Foundation

// Render thread (prepare on the control thread calling setEffects): the soak's custom effect.

/// A tremolo the soak installs as a custom effect: gain 1 − d·(½ + ½·sin(2π·f·n/fs)) at output frame n, f and d
/// its parameters 0 and 1, with d followed by a one-pole smoother sample by sample, so the effect has state that
/// a split block or a missed `reset` would change. The replay runs a twin of each instance, so equal bytes prove
/// the effect gets the same blocks, frames, parameters and resets on both sides.
struct SoakTremolo: AudioEffect {
    private var sampleRate = 48000.0
    /// The smoothed depth, per channel pair.
    private var depth: [Float] = []

    mutating func prepare(_ format: EffectFormat) throws(EngineError) {
        sampleRate = format.sampleRate
        depth = Array(repeating: 0, count: format.channelPairs)
    }

    mutating func process(_ block: EffectBlock) {
        let w = 2 * Double.pi * Double(block.parameters[0]) / sampleRate
        let target = block.parameters[1]
        var d = depth[block.pair]
        for j in 0..<block.frames {
            d += 0.001 * (target - d)
            let g = 1 - d * Float(0.5 + 0.5 * sin(w * Double(block.frame + Int64(j))))
            block.left[j] *= g
            block.right[j] *= g
        }
        depth[block.pair] = d
    }

    mutating func reset() {
        for i in depth.indices { depth[i] = 0 }
    }
}
