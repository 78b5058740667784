import Ensemble
import Foundation

struct RingModulator: AudioEffect {
    private var sampleRate = 48000.0

    mutating func prepare(_ format: EffectFormat) throws(EngineError) {
        sampleRate = format.sampleRate
    }

    mutating func process(_ block: EffectBlock) {
        let w = 2 * Double.pi * Double(block.parameters[0]) / sampleRate
        for j in 0..<block.frames {
            let m = Float(sin(w * Double(block.frame + Int64(j))))
            block.left[j] *= m
            block.right[j] *= m
        }
    }

    mutating func reset() {}
}

let engine = try Engine()
let radio = try engine.makeBus(named: "radio")
try engine.setBus(radio, settings: BusSettings())
let ring = try CustomEffect(RingModulator(), parameters: [30])
try engine.setEffects([.custom(ring)], on: radio)
