import Ensemble
import Foundation

// Render thread (prepare on the control thread calling makeTrack): the soak's generated source.

/// A generator the soak plays on one generated track per control thread: a triangle wave at parameter 0 (Hz)
/// whose level follows parameter 1 through a one-pole smoother, sample by sample; a stereo one puts the wave an
/// octave up on the right. It ends by itself after `length` frames of its voice. The phase and the smoothed
/// level carry over from call to call and start again at position 0, so a split block, a missed restart or a
/// virtual voice not generated would change the output: the replay runs a twin of each source and compares.
struct SoakGenerator: AudioGenerator {
    /// Frames a voice lasts before the generator ends it.
    let length: Int64
    private var sampleRate = 48000.0
    private var stereo = false
    /// Phase in cycles, 0..<1, and the smoothed level.
    private var phase = 0.0
    private var level: Float = 0

    init(length: Int64) { self.length = length }

    mutating func prepare(_ format: GeneratorFormat) throws(EngineError) {
        sampleRate = format.sampleRate
        stereo = format.channelCount == 2
    }

    mutating func generate(_ block: GeneratorBlock) -> Int {
        if block.position == 0 {
            phase = 0
            level = 0
        }
        let increment = Double(block.parameters[0]) / sampleRate, target = block.parameters[1]
        let remaining = length - block.position
        let count = remaining <= 0 ? 0 : remaining < Int64(block.frames) ? Int(remaining) : block.frames
        for j in 0..<count {
            level += 0.002 * (target - level)
            block.left[j] = level * Self.triangle(phase)
            if stereo { block.right[j] = level * Self.triangle(phase < 0.5 ? 2 * phase : 2 * phase - 1) }
            phase += increment
            if phase >= 1 { phase -= 1 }
        }
        return count
    }

    /// The triangle wave at `phase` cycles (0..<1): −1 at 0, 1 at ½.
    private static func triangle(_ phase: Double) -> Float { Float(phase < 0.5 ? 4 * phase - 1 : 3 - 4 * phase) }
}
