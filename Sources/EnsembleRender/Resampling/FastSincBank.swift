import Foundation
import Synchronization

/// The cheaper band-limited resampler's filters (`ResamplerQuality.fastSinc`): Kaiser-windowed sinc kernels with
/// β = 6.8 (about 69 dB of stopband) in the same polyphase layout as `SincBank` (257 phases, weights
/// interpolated between them), so the same C kernel (`SincBank.run`/`sample`/`stereo`) computes them. For steps
/// below 1, 24 taps: the anti-image table (passing to 0.32 and stopping from 0.5 of the source rate, so every
/// image is ≥ 69 dB down) or, where every image is heard at 20 kHz or above (`SincBank.shortTableSteps`, e.g.
/// 44.1 → 48 kHz), the short table (0.41…0.59, flat to 18 kHz of a 44.1 kHz source). For steps above 1, 72
/// tables (24 per octave up to step 8) passing to 0.33 of the output rate (15.8 kHz at 48 kHz) and stopping at the
/// bank's `stopEdge` of it (as `SincBank`): 20 taps just above 1, 36 at step 2, 140 at step 8.
/// Thread: built once per process and output-rate class, on a control thread, by `prepare(outputRate:)` when an
/// engine, track or fired effect chooses `fastSinc`; the render side only reads it through `slot` (nil until
/// prepared: it then falls back to the `sinc` tables, see `ResamplerTables.fastSincTable`).
/// Design: the "Mixing rules" article (Ensemble.docc/MixingRules.md, "Resampling").
package struct FastSincBank: BitwiseCopyable, @unchecked Sendable {
    /// The Kaiser window's β: a first sidelobe about 69 dB down at 24 taps over a 0.18 transition band.
    static var beta: Double { 6.8 }
    /// Taps × transition width (cycles per source frame) that keeps β's attenuation: 24 taps over 0.18.
    static var lengthWidth: Double { 24 * 0.18 }
    /// Tables per octave of steps above 1.
    static var perOctave: Int { 24 }
    /// Tables: the short one (index 0, steps ≤ 1) and `perOctave` per octave up to step 8.
    static var scaleCount: Int { 3 * perOctave + 1 }
    /// Where the tables for steps above 1 pass to, as a fraction of the output rate (15.8 kHz at 48 kHz; 18 kHz is
    /// at most 0.39 dB down, where bsinc24 is 1.7…3.3 dB down).
    static var passOutput: Double { 0.33 }

    private let tables: UnsafePointer<SincBank.Table>
    private let limits: UnsafePointer<UInt64>
    /// The anti-image table for steps below 1 whose images would be heard below 20 kHz: 24 taps, 0.32…0.5.
    package let antiImage: SincBank.Table

    /// `stopEdge`: where the tables of steps above 1 stop, as a fraction of the output rate (`SincBank`'s).
    private init(stopEdge: Double) {
        let count = Self.scaleCount
        let tables = UnsafeMutablePointer<SincBank.Table>.allocate(capacity: count)
        let limits = UnsafeMutablePointer<UInt64>.allocate(capacity: count)
        for k in 0..<count {
            let high = pow(2, Double(k) / Double(Self.perOctave)), low = k <= 1 ? 1.0 : pow(2, Double(k - 1) / Double(Self.perOctave))
            tables[k] = k == 0 ? Self.makeTable(passEdge: 0.41, stopEdge: 0.59)
                : Self.makeTable(passEdge: Self.passOutput / low, stopEdge: stopEdge / high)
            limits[k] = k == count - 1 ? .max : UInt64((high * 0x1p32).rounded(.down))
            assert(tables[k].taps <= SincBank.maxTaps)
        }
        self.tables = UnsafePointer(tables)
        self.limits = UnsafePointer(limits)
        antiImage = Self.makeTable(passEdge: 0.32, stopEdge: 0.5)
    }

    /// A Kaiser-windowed sinc (β = 6.8) passing to `passEdge` and stopping from `stopEdge` (cycles per source
    /// frame), cutoff halfway, 4·⌈4.32 / (stop − pass) / 4⌉ taps.
    private static func makeTable(passEdge: Double, stopEdge: Double) -> SincBank.Table {
        // Less a hair, so that 4.32 / 0.18 (24.000000000000004 in Double) is 24.
        let taps = 4 * Int((lengthWidth / (stopEdge - passEdge) / 4 - 1e-9).rounded(.up))
        return SincBank.kaiserTable(taps: taps, cutoff: (passEdge + stopEdge) / 2, beta: beta)
    }

    /// The table for a step (32.32) of 1 or more (and the short table's steps below 1).
    @_noLocks
    package func table(step: UInt64) -> SincBank.Table {
        var k = 0
        while step > limits[k] { k += 1 }
        return tables[k]
    }

    /// The built banks: engines at 48 kHz and above, and below (each stopping where `SincBank`'s does).
    private static let built = Mutex<(shared: FastSincBank?, narrow: FastSincBank?)>((nil, nil))

    /// What the lanes read: [0] for engines at 48 kHz and above, [1] below; nil until `prepare(outputRate:)`.
    /// Written once per entry, under `built`'s lock, before the command that starts a fastSinc voice is sent.
    nonisolated(unsafe) package static let slots: UnsafeMutablePointer<FastSincBank?> = {
        let p = UnsafeMutablePointer<FastSincBank?>.allocate(capacity: 2)
        p.initialize(repeating: nil, count: 2)
        return p
    }()

    /// The slot of an engine at `outputRate`.
    package static func slot(outputRate: Double) -> UnsafePointer<FastSincBank?> {
        UnsafePointer(slots + (outputRate < 48000 ? 1 : 0))
    }

    /// Builds the bank for an engine at `outputRate` if it is not yet built (a few ms, once per process). Control
    /// thread: call before sending a voice that uses `fastSinc`.
    package static func prepare(outputRate: Double) {
        built.withLock { banks in
            if outputRate < 48000 {
                if banks.narrow == nil {
                    banks.narrow = FastSincBank(stopEdge: 1 - 20000 / 44100)
                    slots[1] = banks.narrow
                }
            } else if banks.shared == nil {
                banks.shared = FastSincBank(stopEdge: 0.59)
                slots[0] = banks.shared
            }
        }
    }
}
