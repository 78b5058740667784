import CSincKernel
import Foundation
import EnsembleFormats

/// The band-limited resampler's filters (`ResamplerQuality.sinc`): Kaiser-windowed sinc kernels (β = 10, about
/// 100 dB of stopband) in polyphase tables of 257 phases, one table per range of steps: for steps below 1 a 72-tap
/// anti-image table whose stopband starts at the source's Nyquist, or 36 taps where the engine's rate puts every
/// image at 20 kHz or above (`shortTableSteps`); 36 longer tables for steps up to 8 (rate 4 from a source at twice
/// the output rate) whose band scales by 1/step so what would fold back below 20 kHz is in the stopband: stopping
/// from 0.59 of the output rate on engines at 48 kHz and above (`shared`), from 0.5465 below (`narrow`, for
/// 44.1 kHz: 20 kHz folds back from 24.1 kHz).
/// Thread: each bank is built once per process, by the first mixer at its rates, on the control thread; the render
/// side only reads them through this value's pointers. Invariant: the inner products run in C (CSincKernel) in a fixed
/// order, so a sample has the same bits on every machine and path. Per output frame the kernel reads taps
/// i − (N/2 − 1) … i + N/2 around the cursor's frame i.
/// Design: the "Mixing rules" article (Ensemble.docc/MixingRules.md, "Resampling").
package struct SincBank: BitwiseCopyable, @unchecked Sendable {
    static var phaseBits: Int { @_noLocks get { 8 } }
    static var scaleCount: Int { @_noLocks get { 37 } }
    /// The Kaiser window's β: about 100 dB of stopband at the lengths below.
    static var beta: Double { 10 }
    /// Taps before the cursor's frame of the longest table (332 taps, step 8): what streamed voices keep behind them.
    static var maxBefore: Int { @_noLocks get { 165 } }
    /// Taps of the longest table (step 8).
    package static var maxTaps: Int { @_noLocks get { 332 } }
    /// The largest step with a table of its own (32.32): above it the last table is used, and content between
    /// its stopband and the output's Nyquist folds back.
    package static var maxFilteredStep: UInt64 { @_noLocks get { 8 << 32 } }

    /// One table: `taps` weights per phase, phases 0…256 one after another, `stride` Floats apart from a 64-byte
    /// aligned base, so every row starts on a cache line (zeros between).
    package struct Table: BitwiseCopyable {
        package var data: UnsafePointer<Float>
        package var taps: Int
        /// Floats from one phase row to the next: `taps` rounded up to 16 (`ensemble_sinc_stride`).
        package var stride: Int { @_noLocks get { (taps + 15) & ~15 } }
        /// Taps before the cursor's frame: taps / 2 − 1.
        package var before: Int { @_noLocks get { taps / 2 - 1 } }
    }

    /// Descriptions of all tables, then the coefficients.
    private let tables: UnsafePointer<Table>
    /// The largest step (32.32) each table covers; the last covers everything above too.
    private let limits: UnsafePointer<UInt64>
    /// The anti-image table for steps below 1 whose images would be heard below 20 kHz (`shortTableSteps`): 72
    /// taps, passing to 0.41 and stopping from 0.5 of the source rate, so every image (at 0.5 and above) is as far
    /// down as the stopband.
    package let antiImage: Table
    /// Where the tables for steps above 1 stop, as a fraction of the output rate.
    let stopEdge: Double

    /// The bank of engines at 48 kHz and above. Built by the first caller; never freed (one per process, read by
    /// every mixer).
    package static let shared = SincBank(stopEdge: sharedStopEdge)
    /// The bank of engines below 48 kHz: steps above 1 stop from 0.5465 of the output rate (1 − 20/44.1), so what
    /// folds back lands at 20 kHz or above on a 44.1 kHz engine. Built by the first mixer below 48 kHz.
    package static let narrow = SincBank(stopEdge: narrowStopEdge)

    /// The bank for an engine at `outputRate`.
    package static func forOutputRate(_ outputRate: Double) -> SincBank { outputRate < 48000 ? narrow : shared }

    /// The stop edges of `shared` and `narrow` (`stopEdge`), and the one `forOutputRate` picks, known without
    /// building either bank.
    static let sharedStopEdge = 0.59
    static let narrowStopEdge = 1 - 20000 / 44100.0
    static func stopEdge(forOutputRate outputRate: Double) -> Double {
        outputRate < 48000 ? narrowStopEdge : sharedStopEdge
    }

    /// `stopEdge`: where the tables of steps above 1 stop, as a fraction of the output rate (they pass to 0.41).
    private init(stopEdge: Double) {
        let count = Self.scaleCount
        let tables = UnsafeMutablePointer<Table>.allocate(capacity: count)
        let limits = UnsafeMutablePointer<UInt64>.allocate(capacity: count)
        for k in 0..<count {
            let high = k == 0 ? 1.0 : pow(2, Double(k) / 12), low = k <= 1 ? 1.0 : pow(2, Double(k - 1) / 12)
            tables[k] = k == 0 ? Self.makeTable(passEdge: 0.41, stopEdge: 0.59)
                : Self.makeTable(passEdge: 0.41 / low, stopEdge: stopEdge / high)
            limits[k] = k == count - 1 ? .max : UInt64((high * 0x1p32).rounded(.down))
        }
        assert(tables[count - 1].taps == Self.maxTaps && tables[count - 1].before == Self.maxBefore)
        self.tables = UnsafePointer(tables)
        self.limits = UnsafePointer(limits)
        antiImage = Self.makeTable(passEdge: 0.41, stopEdge: 0.5)
        self.stopEdge = stopEdge
    }

    /// A Kaiser-windowed sinc passing to `passEdge` and stopping from `stopEdge` (cycles per source frame), cutoff
    /// halfway, with the length that keeps β's attenuation over that band: 4·⌈6.4 / (stop − pass) / 4⌉ taps, at
    /// most `maxTaps`; a longer one keeps its stopband and passes only to stop − 6.4 / `maxTaps` instead.
    private static func makeTable(passEdge: Double, stopEdge: Double) -> Table {
        var taps = 4 * Int((6.4 / (stopEdge - passEdge) / 4).rounded(.up)), passEdge = passEdge
        if taps > Self.maxTaps {
            taps = Self.maxTaps
            passEdge = stopEdge - 6.4 / Double(taps)
        }
        return kaiserTable(taps: taps, cutoff: (passEdge + stopEdge) / 2, beta: Self.beta)
    }

    /// A Kaiser-windowed sinc of `taps` taps (a multiple of 4), cutoff `cutoff` (cycles per source frame) and
    /// window `beta`, at the 257 phases 0…256 (`Table`); shared by this bank and `FastSincBank`.
    static func kaiserTable(taps: Int, cutoff: Double, beta: Double) -> Table {
        let phases = 1 << Self.phaseBits
        let stride = (taps + 15) & ~15
        assert(stride == ensemble_sinc_stride(taps))
        let raw = UnsafeMutableRawPointer.allocate(byteCount: 4 * stride * (phases + 1), alignment: 64)
        let data = raw.bindMemory(to: Float.self, capacity: stride * (phases + 1))
        data.initialize(repeating: 0, count: stride * (phases + 1))
        let half = Double(taps / 2), norm = 1 / Self.besselI0(beta)
        // The kernel at every phase 0…phases (phase `phases` is the next frame's 0). It is even, so phase
        // `phases` − p, tap `taps` − 1 − j mirrors phase p, tap j: half the evaluations.
        for p in 0...phases / 2 {
            let t = Double(p) / Double(phases)
            for j in 0..<taps {
                // Tap j is frame i − (taps/2 − 1) + j; the output lies at i + t.
                let x = Double(j - (taps / 2 - 1)) - t
                let v = Float(Self.kaiserSinc(x, cutoff: cutoff, half: half, beta: beta) * norm)
                data[stride * p + j] = v
                data[stride * (phases - p) + taps - 1 - j] = v
            }
        }
        return Table(data: data, taps: taps)
    }

    /// The steps below 1 (32.32) at which the 36-tap table's images, heard on an engine at `outputRate`, land
    /// where the bank's tables for steps above 1 put what folds back: the lowest image (the source's Nyquist) at
    /// 0.5·s·rate ≥ 20 kHz, and the top of its transition band, 0.59·s·rate, at most `stopEdge` of the output rate
    /// if it folds back (steps 0.833…1 at 48 kHz, 0.907…0.926 at 44.1 kHz, each with its bank `forOutputRate`).
    /// None (low > high) at 40 kHz and below. Other steps below 1 take `antiImage`.
    package static func shortTableSteps(outputRate: Double) -> (low: UInt64, high: UInt64) {
        guard outputRate > 40000 else { return (.max, 0) }
        let low = (40000 / outputRate * 0x1p32).rounded(.up)
        let high = min(stopEdge(forOutputRate: outputRate) / 0.59 * 0x1p32, 0x1p32 - 1).rounded(.down)
        guard low <= high else { return (.max, 0) }
        return (UInt64(low), UInt64(high))
    }

    /// h(x) · I0(β) = 2·fc·sinc(2·fc·x) · I0(β·√(1 − (x/half)²)): the Kaiser-windowed ideal low-pass at `cutoff`
    /// (cycles per source frame), before the window's normalisation by I0(β).
    static func kaiserSinc(_ x: Double, cutoff: Double, half: Double, beta: Double) -> Double {
        let r = x / half
        if r <= -1 || r >= 1 { return 0 }
        let a = 2 * cutoff * x
        let sinc = a == 0 ? 1 : sin(Double.pi * a) / (Double.pi * a)
        return 2 * cutoff * sinc * besselI0(beta * (1 - r * r).squareRoot())
    }

    /// The modified Bessel function of the first kind, order 0, by its power series.
    static func besselI0(_ x: Double) -> Double {
        var sum = 1.0, term = 1.0, k = 1.0
        let q = x * x / 4
        while term > sum * 1e-17 {
            term *= q / (k * k)
            sum += term
            k += 1
        }
        return sum
    }

    /// The table for a step (32.32 source frames per output frame).
    @_noLocks
    package func table(step: UInt64) -> Table {
        var k = 0
        while step > limits[k] { k += 1 }
        return tables[k]
    }

    /// One output sample: Σ (row[j] + t·(next[j] − row[j])) · x[j] over the table's taps, `x` pointing at the first tap,
    /// computed by `ensemble_sinc_mono` (CSincKernel: fused multiply-adds in a fixed order, sixteen-lane on CPUs
    /// with AVX-512, eight-lane with AVX2, the same bits elsewhere). Every path that computes a sample (fast loop, edge loop through
    /// gathered taps, streamed window) calls this, so they give the same bits.
    @inline(__always)
    @_noLocks
    package static func sample(_ x: UnsafePointer<Float>, _ table: Table, _ fraction: UInt32) -> Float {
        let row = table.data + table.stride &* Int(truncatingIfNeeded: fraction &>> 24) // 32 − phaseBits
        let t = Float(fraction & 0x00FF_FFFF) * 0x1p-24
        // A C function is opaque to the performance checker; the kernel only reads and computes.
        return _unsafePerformance { ensemble_sinc_mono(x, row, table.taps, t) }
    }

    /// Both channels of one output frame, sharing the weights: the same bits per channel as `sample`.
    @inline(__always)
    @_noLocks
    package static func stereo(_ l: UnsafePointer<Float>, _ r: UnsafePointer<Float>, _ table: Table,
                       _ fraction: UInt32) -> (Float, Float) {
        let row = table.data + table.stride &* Int(truncatingIfNeeded: fraction &>> 24) // 32 − phaseBits
        let t = Float(fraction & 0x00FF_FFFF) * 0x1p-24
        var out = SIMD2<Float>()
        _unsafePerformance {
            withUnsafeMutableBytes(of: &out) {
                ensemble_sinc_stereo(l, r, row, table.taps, t, $0.baseAddress!.assumingMemoryBound(to: Float.self))
            }
        }
        return (out[0], out[1])
    }

    /// `count` frames from fixed-point offset `start` past the first taps `l`/`r` into `outL`/`outR`, each with the
    /// same bits as `sample`/`stereo` (`ensemble_sinc_run`: mono frames four at a time, so their additions overlap).
    @inline(__always)
    @_noLocks
    package static func run(_ l: UnsafePointer<Float>, _ r: UnsafePointer<Float>, stereo: Bool, _ table: Table, start: UInt64,
                    step: UInt64, count: Int, _ outL: UnsafeMutablePointer<Float>, _ outR: UnsafeMutablePointer<Float>) {
        _unsafePerformance {
            ensemble_sinc_run(l, r, stereo ? 1 : 0, table.data, table.taps, start, step, count, outL, outR)
        }
    }

    /// `run` over a 16-bit compact sound's integers (`ensemble_sinc_run_i16`): the bits `run` gives on the same
    /// samples as Float (x·2⁻¹⁵), with no window converted first.
    @inline(__always)
    @_noLocks
    package static func run(_ l: UnsafePointer<Int16>, _ r: UnsafePointer<Int16>, stereo: Bool, _ table: Table,
                            start: UInt64, step: UInt64, count: Int, _ outL: UnsafeMutablePointer<Float>,
                            _ outR: UnsafeMutablePointer<Float>) {
        _unsafePerformance {
            ensemble_sinc_run_i16(l, r, stereo ? 1 : 0, table.data, table.taps, start, step, count, outL, outR)
        }
    }
}
