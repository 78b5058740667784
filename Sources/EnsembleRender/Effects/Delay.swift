import EnsembleFormats

/// A stereo echo: y = (1 − mix)·x + mix·d, where d is the signal `frames` samples ago and the line is fed
/// x + feedback·d (so repeats decay by `feedback` each time). The line is allocated on the control side
/// (`EffectChain.make`), zeroed, and long enough for the delay time.
package struct DelayLine: BitwiseCopyable, AudioEffect {
    var left: UnsafeMutablePointer<Float>
    var right: UnsafeMutablePointer<Float>
    /// Delay in frames (≥ 1): also the line's length.
    var frames: Int
    var position = 0
    var feedback: Float
    var mix: Float

    init(frames: Int, feedback: Float, mix: Float) {
        self.frames = max(frames, 1)
        left = .allocate(capacity: self.frames)
        right = .allocate(capacity: self.frames)
        left.initialize(repeating: 0, count: self.frames)
        right.initialize(repeating: 0, count: self.frames)
        self.feedback = feedback
        self.mix = mix
    }

    func deallocate() {
        left.deallocate()
        right.deallocate()
    }

    /// Back to an empty line, as `init` leaves it.
    @_noLocks
    package mutating func reset() {
        left.update(repeating: 0, count: frames)
        right.update(repeating: 0, count: frames)
        position = 0
    }

    /// Nothing to do: `init` (called by `EffectChain.make` on the control side) allocates the line.
    package mutating func prepare(_ format: EffectFormat) throws(EngineError) {}

    /// `AudioEffect`: the block's pair through the line (the same line for every call: one instance per pair).
    @_noLocks
    package mutating func process(_ block: EffectBlock) { process(block.left, block.right, block.frames) }

    @_noLocks
    mutating func process(_ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, _ n: Int) {
        let dry = 1 - mix, wet = mix, fb = feedback
        let lineL = left, lineR = right, length = frames
        var p = position
        for j in 0..<n {
            let dl = lineL[p], dr = lineR[p]
            var wl = l[j] + fb * dl, wr = r[j] + fb * dr
            if abs(wl) < 1e-30 { wl = 0 }
            if abs(wr) < 1e-30 { wr = 0 }
            lineL[p] = wl
            lineR[p] = wr
            l[j] = dry * l[j] + wet * dl
            r[j] = dry * r[j] + wet * dr
            p += 1
            if p == length { p = 0 }
        }
        position = p
    }
}
