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
}
