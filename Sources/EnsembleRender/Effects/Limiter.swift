import EnsembleFormats

/// A stereo-linked look-ahead peak limiter whose output never exceeds the ceiling.
///
/// The signal is delayed by L = look-ahead frames; the gain leaving the line is
/// g = min(h_L, h_H, g_prev + 1/releaseFrames), h_L and h_H the means over the last L and the last H frames of the
/// minimum needed gain over the last H + 1 frames, H ≥ L the hold. Invariants: every minimum averaged into h_L covers
/// the outgoing frame (H ≥ L), so h_L ≤ the gain that frame needs and the ceiling holds by construction (a final guard
/// clamps rounding); a hold of at least half a cycle keeps a steady tone's gain constant instead of dipping at every
/// peak (no distortion); h_H only slows the release, smoothing the steps a decaying tone's held peaks make; below the
/// ceiling the output is the input delayed by L frames, bit for bit (the running sums are reset to exactly L and H).
/// O(1) per frame. Render thread (`process`, `reset`); `init`/`deallocate` on the control side.
/// Design: the "Buses and effects" article (Ensemble.docc/BusesAndEffects.md, "Effects").
package struct Limiter: BitwiseCopyable, AudioEffect {
    package var ceiling: Float
    var releaseStep: Float
    package var lookahead: Int
    /// H: how long (frames, ≥ `lookahead`) a needed gain is held as the window minimum.
    package var hold: Int
    /// Delay lines (L frames each).
    var delayL: UnsafeMutablePointer<Float>
    var delayR: UnsafeMutablePointer<Float>
    package var position = 0
    /// The needed gain's minimum over the last H + 1 frames.
    var held: SlidingExtreme
    /// h_L and h_H: the means of the last L and the last H window minima.
    var fastMean: WindowMean
    var slowMean: WindowMean
    package var gain: Float = 1

    /// Allocates the delay lines and the windows (control side). `hold` below `lookahead` is raised to it.
    package init(ceiling: Float, lookahead: Int, hold: Int, releaseFrames: Int) {
        self.ceiling = ceiling
        self.lookahead = max(lookahead, 1)
        self.hold = max(hold, self.lookahead)
        releaseStep = 1 / Float(max(releaseFrames, 1))
        let n = self.lookahead
        delayL = .allocate(capacity: n)
        delayR = .allocate(capacity: n)
        delayL.initialize(repeating: 0, count: n)
        delayR.initialize(repeating: 0, count: n)
        held = SlidingExtreme(window: self.hold, keepsLargest: false)
        fastMean = WindowMean(length: n)
        slowMean = WindowMean(length: self.hold)
    }

    /// The hold `EffectChain.make` gives a limiter at `sampleRate` (`SlidingExtreme.halfCycleOf20Hz`).
    package static func holdFrames(sampleRate: Double) -> Int {
        SlidingExtreme.halfCycleOf20Hz(sampleRate: sampleRate)
    }

    package func deallocate() {
        delayL.deallocate()
        delayR.deallocate()
        held.deallocate()
        fastMean.deallocate()
        slowMean.deallocate()
    }

    /// Back to the state `init` leaves: empty lookahead, unity gain.
    @_noLocks
    package mutating func reset() {
        delayL.update(repeating: 0, count: lookahead)
        delayR.update(repeating: 0, count: lookahead)
        position = 0
        held.reset()
        fastMean.reset()
        slowMean.reset()
        gain = 1
    }

    /// `AudioEffect`: the block's pair in place (one instance per pair).
    @_noLocks
    package mutating func process(_ block: EffectBlock) { process(block.left, block.right, block.frames) }

    /// Nothing to do: `init` (called by `EffectChain.make` on the control side) allocates the state.
    package mutating func prepare(_ format: EffectFormat) throws(EngineError) {}

    @_noLocks
    package mutating func process(_ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, _ n: Int) {
        let c = ceiling, length = lookahead
        let delayL = self.delayL, delayR = self.delayR
        var p = position, g = gain
        var held = self.held, fastMean = self.fastMean, slowMean = self.slowMean
        for j in 0..<n {
            let xl = l[j], xr = r[j]
            let peak = max(abs(xl), abs(xr))
            var need: Float = 1
            if peak > c {
                need = c / peak
                while need * peak > c { need = need.nextDown }
            }
            let lowest = held.push(need)
            let h = fastMean.push(lowest)
            // h_H falls later than h_L (never the tighter bound on an attack) and rises later (a release ramps
            // over H frames instead of L after the hold).
            let slow = slowMean.push(lowest)
            g = min(min(h, slow), g + releaseStep)
            let yl = delayL[p], yr = delayR[p]
            delayL[p] = xl
            delayR[p] = xr
            p += 1
            if p == length { p = 0 }
            var ol = yl * g, or = yr * g
            if abs(ol) > c { ol = ol < 0 ? -c : c }
            if abs(or) > c { or = or < 0 ? -c : c }
            l[j] = ol
            r[j] = or
        }
        position = p
        gain = g
        self.held = held
        self.fastMean = fastMean
        self.slowMean = slowMean
    }
}
