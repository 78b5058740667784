import Ensemble
import Foundation

struct EngineTone: AudioGenerator {
    var length: Int64
    private var sampleRate = 48000.0
    private var phase = 0.0

    init(length: Int64) { self.length = length }

    mutating func prepare(_ format: GeneratorFormat) throws(EngineError) {
        sampleRate = format.sampleRate
    }

    mutating func generate(_ block: GeneratorBlock) -> Int {
        if block.position == 0 { phase = 0 }
        let firing = Double(block.parameters[0]) / 60 * 2
        let step = 2 * Double.pi * firing / sampleRate
        let n = Int(min(Int64(block.frames), max(length - block.position, 0)))
        for j in 0..<n {
            let s = 0.5 * sin(phase) + 0.25 * sin(2 * phase) + 0.125 * sin(3 * phase) + 0.0625 * sin(4 * phase)
            block.left[j] = Float(0.6 * s)
            phase += step
            if phase >= 2 * Double.pi { phase -= 2 * Double.pi }
        }
        return n
    }
}
