// Render thread (`process`); `init`/`deallocate` on the control thread.

import Foundation
import EnsembleFormats

/// A feed-forward stereo-linked compressor with a soft knee, smoothing in the log domain, make-up gain, optional
/// look-ahead and an optional sidechain, after Giannoulis, Massberg and Reiss, "Digital Dynamic Range
/// Compressor Design — A Tutorial and Analysis", JAES 60(6), 2012: their recommended arrangement, the gain
/// computer followed by a smooth branching peak detector working in the log domain.
///
/// Per frame n:
/// 1. Detector level x_G = 20·log10 d[n], d = max(|l|, |r|) of the frame (the two channels linked, so the
///    stereo image does not move), or the key bus's level (`SidechainKeys`) when `sidechain` is set.
/// 2. Gain computer with a quadratic soft knee (threshold T, ratio R, knee width W):
///    y_G = x_G                                   when 2(x_G − T) < −W,
///    y_G = x_G + (1/R − 1)(x_G − T + W/2)² / 2W  when 2|x_G − T| ≤ W,
///    y_G = T + (x_G − T)/R                       when 2(x_G − T) > W;
///    the gain reduction wanted is x_L = x_G − y_G ≥ 0 dB.
/// 3. Smooth branching peak detector on x_L: y_L[n] = α_A·y_L[n−1] + (1 − α_A)·x_L[n] while
///    x_L[n] > y_L[n−1] (attack), else the same with α_R (release), where α = exp(−1/(τ·fs)). After a step
///    of the gain reduction, y_L covers 1 − 1/e of the change in τ seconds (exactly: α^(τ·fs) = 1/e), τ being
///    `attack` for a rise and `release` for a fall (chosen over the paper's decoupled detector, whose attack
///    would also depend on the release).
/// 4. Gain 10^((M − y_L)/20), M the make-up gain, applied to the frame `lookahead` frames old: the audio runs
///    through a delay line of L = round(lookahead·fs) frames while the detector sees the undelayed signal, so
///    the gain starts to fall L frames before a transient reaches the output.
///
/// The smoothing runs in Double: with a 5 s release, 1 − α ≈ 4e-6 is too close to Float's resolution around 1
/// for the time constant to hold. While the wanted reduction is 0 and the smoothed one below 1e-6 dB, the
/// smoothed one is set to 0, so a quiet signal after a loud one comes back to exactly the make-up gain (with no
/// make-up: the input, delayed by L frames, bit for bit). The detector's log and the gain's power are
/// `DecibelMath`'s, and are skipped below the knee and at zero reduction.
package struct Compressor: BitwiseCopyable {
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
    }

    /// α = exp(−1/(τ·fs)): the one-pole coefficient whose step response covers 1 − 1/e in τ seconds.
    static func coefficient(timeConstant: Double, sampleRate: Double) -> Double {
        exp(-1 / (timeConstant * sampleRate))
    }

    package func deallocate() {
        delay?.deallocate()
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

    /// Compresses `n` frames in place. `key`: the key bus's levels for these frames when `sidechain` ≥ 0 (nil
    /// reads as silence); ignored without a sidechain.
    @_noLocks
    package mutating func process(_ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, _ n: Int,
                          key: UnsafeMutablePointer<Float>?) {
        let keyed = sidechain >= 0
        let kneeStart = self.kneeStart, attack = attackCoefficient, release = releaseCoefficient
        let makeupDB = self.makeupDB, makeupGain = self.makeupGain
        let length = lookahead
        var y = reduction, p = position
        for j in 0..<n {
            let xl = l[j], xr = r[j]
            let level: Float
            if keyed {
                level = key?[j] ?? 0
            } else {
                level = max(abs(xl), abs(xr))
            }
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
    }
}
