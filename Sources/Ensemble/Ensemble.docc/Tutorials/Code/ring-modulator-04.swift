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

let voice = try engine.makeTrack(try Sound(contentsOf: "Assets/voice_line.wav"))
try voice.setBus(radio)
try voice.play(at: engine.time(frame: 0))
try engine.scheduleParameter(0, to: 500, of: ring, at: engine.time(frame: 48000))
