import Ensemble
import Foundation

struct RingModulator: AudioEffect {
    private var sampleRate = 48000.0

    mutating func prepare(_ format: EffectFormat) throws(EngineError) {
        sampleRate = format.sampleRate
    }

    mutating func reset() {}
}
