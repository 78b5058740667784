// Render thread (`process`); `init`/`deallocate` on the control thread.

import Foundation
import EnsembleFormats

/// A feed-forward stereo-linked compressor with a soft knee, smoothing in the log domain, make-up gain, optional
/// look-ahead and an optional sidechain, after Giannoulis, Massberg and Reiss (JAES 60(6), 2012): the gain computer
/// followed by a smooth branching peak detector (α = exp(−1/(τ·fs))), the gain applied `lookahead` frames late.
/// The level fed to the gain computer is the peak of |x| held over the last `hold` + 1 frames (half a cycle of
/// 20 Hz): a steady tone then gives a steady level, so the gain neither ripples twice per cycle (distortion) nor
/// falls back to its release branch between peaks (a slow attack); a release starts when the hold ends.
/// The smoothing runs in Double (a 5 s release's 1 − α is too close to Float's resolution around 1); a smoothed
/// reduction below 1e-6 dB with none wanted snaps to 0, so a quiet signal returns to exactly the make-up gain.
/// Design and formulas: the "Environment" article (Ensemble.docc/Environment.md, "Compressor and sidechain").
package struct Compressor: BitwiseCopyable, AudioEffect {
    /// The bus whose level drives the detector (`SidechainKeys.levels(of:)`), −1 for the signal itself.
    package let sidechain: Int
    package let thresholdDB: Float
    /// 1 − 1/R: the slope of the gain reduction over the threshold.
    package let slope: Float
    package let kneeDB: Float
    /// 10^((T − W/2)/20): detector levels up to this amplitude need no reduction (and no log).
    let kneeStart: Float
    let attackCoefficient: Double
    let releaseCoefficient: Double
    let makeupDB: Float
    /// 10^(M/20), the gain at zero reduction (made with `DecibelMath` like every other gain here).
    package let makeupGain: Float
    /// Look-ahead delay in frames (0: none, and no delay line).
    package let lookahead: Int
    /// Delay lines of `lookahead` frames, left then right (nil when `lookahead` is 0).
    package let delay: UnsafeMutablePointer<Float>?
    /// Next frame of the delay lines to read and overwrite.
    package var position = 0
    /// The smoothed gain reduction y_L in dB (≥ 0).
    package var reduction: Double = 0
    /// Frames (after the current one) a detector level is held as the peak.
    package let hold: Int
    /// The detector level's peak over the last `hold` + 1 frames.
    var peak: SlidingExtreme

    /// Allocates the look-ahead delay (control side). `settings` passed `CompressorSettings.problem()`.
    package init(settings: CompressorSettings, sampleRate: Double) {
        sidechain = settings.sidechain?.index ?? -1
        thresholdDB = Float(settings.thresholdDB)
        slope = Float(1 - 1 / settings.ratio)
        kneeDB = Float(settings.kneeDB)
        kneeStart = DecibelMath.amplitude(decibels: Float(settings.thresholdDB - settings.kneeDB / 2))
        attackCoefficient = Self.coefficient(timeConstant: settings.attack, sampleRate: sampleRate)
        releaseCoefficient = Self.coefficient(timeConstant: settings.release, sampleRate: sampleRate)
        makeupDB = Float(settings.makeupGainDB)
        makeupGain = DecibelMath.amplitude(decibels: makeupDB)
        lookahead = Int((settings.lookahead * sampleRate).rounded())
        if lookahead > 0 {
            let d = UnsafeMutablePointer<Float>.allocate(capacity: 2 * lookahead)
            d.initialize(repeating: 0, count: 2 * lookahead)
            delay = d
        } else {
            delay = nil
        }
        hold = Self.holdFrames(sampleRate: sampleRate)
        peak = SlidingExtreme(window: hold, keepsLargest: true)
    }

    /// The detector's hold at `sampleRate` (`SlidingExtreme.halfCycleOf20Hz`).
    package static func holdFrames(sampleRate: Double) -> Int {
        SlidingExtreme.halfCycleOf20Hz(sampleRate: sampleRate)
    }

    /// α = exp(−1/(τ·fs)): the one-pole coefficient whose step response covers 1 − 1/e in τ seconds.
    static func coefficient(timeConstant: Double, sampleRate: Double) -> Double {
        exp(-1 / (timeConstant * sampleRate))
    }

    package func deallocate() {
        delay?.deallocate()
        peak.deallocate()
    }

    /// Back to the state `init` leaves: no gain reduction, an empty lookahead line.
    @_noLocks
    package mutating func reset() {
        delay?.update(repeating: 0, count: 2 * lookahead)
        position = 0
        reduction = 0
        peak.reset()
    }

    /// The static curve: gain reduction x_L in dB (≥ 0) wanted for a detector level of `level` dB.
    @inline(__always)
    @_noLocks
    func gainReduction(_ level: Float) -> Float {
        let over = level - thresholdDB
        if 2 * over <= -kneeDB { return 0 }
        if 2 * over >= kneeDB { return slope * over }
        let inKnee = over + kneeDB / 2
        return slope * inKnee * inKnee / (2 * kneeDB)
    }

    /// Nothing to do: `EffectChain.make` (on the control side) allocates and sets it up.
    package mutating func prepare(_ format: EffectFormat) throws(EngineError) {}

    /// `AudioEffect`: the block's pair in place, keyed by `block.key` when it has a sidechain.
    @_noLocks
    package mutating func process(_ block: EffectBlock) {
        process(block.left, block.right, block.frames, key: block.key)
    }

    /// Compresses `n` frames in place. `key`: the key bus's levels for these frames when `sidechain` ≥ 0 (nil
    /// reads as silence); ignored without a sidechain.
    @_noLocks
    package mutating func process(_ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, _ n: Int,
                          key: UnsafeMutablePointer<Float>?) {
        let keyed = sidechain >= 0
        let kneeStart = self.kneeStart, attack = attackCoefficient, release = releaseCoefficient
        let makeupDB = self.makeupDB, makeupGain = self.makeupGain
        let length = lookahead
        var y = reduction, p = position, peak = self.peak
        for j in 0..<n {
            let xl = l[j], xr = r[j]
            let d: Float
            if keyed {
                d = key?[j] ?? 0
            } else {
                d = max(abs(xl), abs(xr))
            }
            let level = peak.push(d)
            let wanted: Float = level > kneeStart ? gainReduction(DecibelMath.decibels(level)) : 0
            let x = Double(wanted)
            if x > y {
                y = attack * y + (1 - attack) * x
            } else {
                y = release * y + (1 - release) * x
                if wanted == 0 && y < 1e-6 { y = 0 }
            }
            let gain = y == 0 ? makeupGain : DecibelMath.amplitude(decibels: makeupDB - Float(y))
            var ol = xl, or = xr
            if let delay {
                ol = delay[p]
                or = delay[length + p]
                delay[p] = xl
                delay[length + p] = xr
                p += 1
                if p == length { p = 0 }
            }
            l[j] = ol * gain
            r[j] = or * gain
        }
        reduction = y
        position = p
        self.peak = peak
    }
}
