// Render thread: one per voice path with a filter (`VoiceEnvironments`); commands retarget it between spans, the
// voice's lane runs it during a span.
import EnsembleFormats

/// A `VoiceFilter` as the mixer runs it on one or two channels, with EFX's semantics (OpenAL Soft 1.19.1,
/// `CalcPanningAndFilters`): a low-pass is `gain` × a high shelf with `gainHF` at 5 kHz, a high-pass `gain` × a
/// low shelf with `gainLF` at 250 Hz, a band-pass both; every change, of kind too, is three gains ramping. The
/// shelves are the cookbook's (S = 1, A = the EFX gain, floored at 0.001) run as Simper's trapezoidal SVF, as in
/// `HighShelf`. Invariant: no zipper noise and the same bits for any block size (gains ramp on absolute frames,
/// coefficients are re-set on the absolute `grid`); from `identityFrom` on it is skipped, bit for bit.
/// Design and formulas: the "Environment" article (Ensemble.docc/Environment.md, "Filters").
package struct VoiceFilterState: BitwiseCopyable {
    /// Frames between coefficient updates while a shelf's gain ramps, on a grid of absolute frames: 0.33 ms at
    /// 48 kHz, short enough that the staircase of a 50 ms ramp is inaudible (a step of 1/150 of the change).
    package static var grid: Int64 { @_noLocks get { 16 } }
    /// Soft's floor for a shelf's gain (`maxf(gain, 0.001f)`, "Limit −60dB").
    static var minimumGain: Float { @_noLocks get { 0.001 } }
    /// 1/Q of both shelves: √((A + 1/A)(1/S − 1) + 2) with slope S = 1 is √2 whatever the gain.
    static var damping: Float { @_noLocks get { 1.41421356237309504880 } }

    /// The broadband gain, and the shelves' gains at 5 kHz and 250 Hz.
    package private(set) var gain = LinearRamp.constant(1)
    package private(set) var gainHF = LinearRamp.constant(1)
    package private(set) var gainLF = LinearRamp.constant(1)
    /// The first frame from which every gain is 1 for good (`Int64.max` while some gain is headed elsewhere).
    private(set) var identityFrom = Int64.min
    /// tan(w0/2) of each shelf's reference frequency, fixed by the sample rate.
    private let warpedHF: Float
    private let warpedLF: Float
    // The high shelf's SVF coefficients (a1…a3 from the prewarped frequency; m0…m2 mix input, band-pass and
    // low-pass), the low shelf's (its m0 is 1), and the gains they stand for (before clamping).
    private var h1: Float = 1, h2: Float = 0, h3: Float = 0, hm0: Float = 1, hm1: Float = 0, hm2: Float = 0
    private var l1: Float = 1, l2: Float = 0, l3: Float = 0, lm1: Float = 0, lm2: Float = 0
    private var appliedHF: Float = 1
    private var appliedLF: Float = 1
    // The integrators' equivalent currents: high shelf, low shelf; left (or mono), right.
    private var hL1: Float = 0, hL2: Float = 0, lL1: Float = 0, lL2: Float = 0
    private var hR1: Float = 0, hR2: Float = 0, lR1: Float = 0, lR2: Float = 0
    /// Per shelf, false while it has been skipped (the whole filter an identity, or the shelf at gain 1, which is
    /// an exact pass-through): its state is stale, and the first frame it runs on primes it, as if that sample had
    /// been the input forever (`HighShelf.process`), or zeroes it when the voice starts there (`followsSilence`:
    /// the signal before a voice's start is silence).
    private var highRunning = false
    private var lowRunning = false
    private var followsSilence = false

    /// A pass-through filter (every gain 1) for output at `sampleRate` Hz. Where a reference frequency is not below
    /// Nyquist the shelf sits at 0.49 × the sample rate instead (as `HighShelf`).
    @_noLocks
    package init(sampleRate: Double) {
        warpedHF = Self.warped(5000, sampleRate)
        warpedLF = Self.warped(250, sampleRate)
        setHigh(1)
        setLow(1)
    }

    @_noLocks
    private static func warped(_ frequency: Double, _ sampleRate: Double) -> Float {
        let normalized = Swift.min(frequency / sampleRate, 0.49)
        let w0 = Float(2 * Double.pi * (normalized > 0 ? normalized : 0.49))
        return RenderMath.sin(w0) / (1 + RenderMath.cos(w0))  // tan(w0/2)
    }

    /// True when the filter leaves every frame from `frame` on untouched.
    @inline(__always)
    @_noLocks
    func isIdentity(from frame: Int64) -> Bool { frame >= identityFrom }

    /// Heads for `setup`'s gains (kind none: every gain 1), ramping from their values at `frame` over `rampFrames`.
    /// `beforeFirstFrame`: the voice has not sounded yet, so the filter starts from silence.
    @_noLocks
    package mutating func retarget(_ setup: FilterSetup, at frame: Int64, rampFrames: Int, beforeFirstFrame: Bool) {
        // Skipped until now: the state is stale, the first frame it runs on restarts it.
        if isIdentity(from: frame) { (highRunning, lowRunning) = (false, false) }
        followsSilence = beforeFirstFrame
        let off = setup.kind == FilterSetup.none
        gain = LinearRamp(from: gain.value(at: frame), to: off ? 1 : setup.gain, startFrame: frame, length: rampFrames)
        gainHF = LinearRamp(from: gainHF.value(at: frame), to: off ? 1 : setup.gainHF, startFrame: frame,
                            length: rampFrames)
        gainLF = LinearRamp(from: gainLF.value(at: frame), to: off ? 1 : setup.gainLF, startFrame: frame,
                            length: rampFrames)
        identityFrom = Swift.max(Self.unityFrom(gain, onGrid: false),
                                 Swift.max(Self.unityFrom(gainHF, onGrid: true), Self.unityFrom(gainLF, onGrid: true)))
    }

    /// The first frame from which `ramp` is 1 for good (for a shelf, the first grid point from which it is):
    /// its start for a ramp that is 1 from there, `Int64.max` for one that ends elsewhere.
    @_noLocks
    private static func unityFrom(_ ramp: LinearRamp, onGrid: Bool) -> Int64 {
        if ramp.to != 1 { return .max }
        if ramp.from == 1 || ramp.length == 0 { return ramp.startFrame }
        let end = ramp.startFrame + Int64(ramp.length)
        return onGrid ? gridFloor(end + grid - 1) : end
    }

    /// The grid point at or before `frame`.
    @inline(__always)
    @_noLocks
    static func gridFloor(_ frame: Int64) -> Int64 { frame & ~(grid - 1) }

    /// Filters `count` frames starting at output frame `frame` in place: `left` only when `channels` is 1,
    /// `left` and `right` when 2. Must see every frame the voice renders, in order.
    @_noLocks
    package mutating func process(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, channels: Int,
                          frame: Int64, count n: Int) {
        let fromSilence = followsSilence
        followsSilence = false
        if n <= 0 || isIdentity(from: frame) { return }
        let end = frame + Int64(n)
        let first = Self.gridFloor(frame)
        let shelvesRamp = gainHF.varies(in: first, end) || gainLF.varies(in: first, end)
        var t = frame
        while t < end {
            // One run per grid cell while a shelf ramps, else the whole span: coefficients from the cell's start,
            // or from the last retarget if that came inside the cell (a span starts there: the gains before it are
            // the old ones, whichever span the rest of the cell falls in).
            let cell = Self.gridFloor(t)
            let runEnd = shelvesRamp ? Swift.min(end, cell + Self.grid) : end
            let hf = gainHF.value(at: Swift.max(cell, gainHF.startFrame))
            let lf = gainLF.value(at: Swift.max(cell, gainLF.startFrame))
            if hf != appliedHF { setHigh(hf) }
            if lf != appliedLF { setLow(lf) }
            let j = Int(t - frame), m = Int(runEnd - t)
            // A shelf at gain 1 passes x·1 + 0·… = x exactly: skipped (one recursion fewer), restarted when needed.
            let high = appliedHF != 1, low = appliedLF != 1
            if !high { highRunning = false }
            if !low { lowRunning = false }
            if (high && !highRunning) || (low && !lowRunning) {
                let l0 = fromSilence && t == frame ? 0 : left[j]
                let r0 = channels < 2 || (fromSilence && t == frame) ? 0 : right[j]
                if high && !highRunning { (hL1, hL2, hR1, hR2, highRunning) = (0, l0, 0, r0, true) }
                if low && !lowRunning { (lL1, lL2, lR1, lR2, lowRunning) = (0, l0, 0, r0, true) }
            }
            if high && low {
                if channels == 2 { shelves(left + j, right + j, m) } else { shelves(left + j, m) }
            } else if high || low {
                let k = high ? Shelf(c1: h1, c2: h2, c3: h3, m0: hm0, m1: hm1, m2: hm2)
                             : Shelf(c1: l1, c2: l2, c3: l3, m0: 1, m1: lm1, m2: lm2)
                var sl = high ? (hL1, hL2) : (lL1, lL2), sr = high ? (hR1, hR2) : (lR1, lR2)
                if channels == 2 { Self.shelf(left + j, right + j, m, k, &sl, &sr) } else { Self.shelf(left + j, m, k, &sl) }
                if high { (hL1, hL2, hR1, hR2) = (sl.0, sl.1, sr.0, sr.1) } else { (lL1, lL2, lR1, lR2) = (sl.0, sl.1, sr.0, sr.1) }
            }
            t = runEnd
        }
        applyGain(left, frame: frame, count: n)
        if channels == 2 { applyGain(right, frame: frame, count: n) }
    }

    /// Simper's high shelf with the cookbook's A = gain: g = tan(w0/2)·√A, output = A²·input + k(1 − A)A·band-pass
    /// + (1 − A²)·low-pass (at A = 1: the input exactly).
    @_noLocks
    private mutating func setHigh(_ gainHF: Float) {
        appliedHF = gainHF
        let a = gainHF < 1 ? Swift.max(gainHF, Self.minimumGain) : 1
        let g = warpedHF * RenderMath.sqrt(a), k = Self.damping
        h1 = 1 / (1 + g * (g + k))
        h2 = g * h1
        h3 = g * h2
        (hm0, hm1, hm2) = a == 1 ? (1, 0, 0) : (a * a, k * (1 - a) * a, 1 - a * a)
    }

    /// Simper's low shelf with the cookbook's A = gain: g = tan(w0/2)/√A, output = input + k(A − 1)·band-pass
    /// + (A² − 1)·low-pass (at A = 1: the input exactly).
    @_noLocks
    private mutating func setLow(_ gainLF: Float) {
        appliedLF = gainLF
        let a = gainLF < 1 ? Swift.max(gainLF, Self.minimumGain) : 1
        let g = warpedLF / RenderMath.sqrt(a), k = Self.damping
        l1 = 1 / (1 + g * (g + k))
        l2 = g * l1
        l3 = g * l2
        (lm1, lm2) = a == 1 ? (0, 0) : (k * (a - 1), a * a - 1)
    }

    /// One shelf's coefficients (the low shelf's m0 is 1).
    private struct Shelf: BitwiseCopyable {
        var c1, c2, c3, m0, m1, m2: Float

        @_noLocks
        init(c1: Float, c2: Float, c3: Float, m0: Float, m1: Float, m2: Float) {
            (self.c1, self.c2, self.c3, self.m0, self.m1, self.m2) = (c1, c2, c3, m0, m1, m2)
        }
    }

    /// One shelf on one channel (state: the two equivalent currents).
    @_noLocks
    private static func shelf(_ x: UnsafeMutablePointer<Float>, _ n: Int, _ k: Shelf, _ s: inout (Float, Float)) {
        var (a1, a2) = s
        for i in 0..<n {
            let v0 = x[i]
            let v3 = v0 - a2
            let v1 = k.c1 * a1 + k.c2 * v3
            let v2 = a2 + k.c2 * a1 + k.c3 * v3
            a1 = 2 * v1 - a1
            a2 = 2 * v2 - a2
            x[i] = k.m0 * v0 + k.m1 * v1 + k.m2 * v2
        }
        s = (a1, a2)
    }

    /// One shelf on two channels at once.
    @_noLocks
    private static func shelf(_ x: UnsafeMutablePointer<Float>, _ z: UnsafeMutablePointer<Float>, _ n: Int,
                              _ k: Shelf, _ s: inout (Float, Float), _ r: inout (Float, Float)) {
        var (a1, a2) = s, (c1, c2) = r
        for i in 0..<n {
            let v0 = x[i], w0 = z[i]
            let v3 = v0 - a2, w3 = w0 - c2
            let v1 = k.c1 * a1 + k.c2 * v3, w1 = k.c1 * c1 + k.c2 * w3
            let v2 = a2 + k.c2 * a1 + k.c3 * v3, w2 = c2 + k.c2 * c1 + k.c3 * w3
            a1 = 2 * v1 - a1
            a2 = 2 * v2 - a2
            c1 = 2 * w1 - c1
            c2 = 2 * w2 - c2
            x[i] = k.m0 * v0 + k.m1 * v1 + k.m2 * v2
            z[i] = k.m0 * w0 + k.m1 * w1 + k.m2 * w2
        }
        s = (a1, a2)
        r = (c1, c2)
    }

    /// Both shelves, in cascade, on one channel.
    @_noLocks
    private mutating func shelves(_ x: UnsafeMutablePointer<Float>, _ n: Int) {
        let (h1, h2, h3, hm0, hm1, hm2) = (self.h1, self.h2, self.h3, self.hm0, self.hm1, self.hm2)
        let (l1, l2, l3, lm1, lm2) = (self.l1, self.l2, self.l3, self.lm1, self.lm2)
        var (a1, a2, b1, b2) = (hL1, hL2, lL1, lL2)
        for i in 0..<n {
            let v0 = x[i]
            let v3 = v0 - a2
            let v1 = h1 * a1 + h2 * v3        // band-pass
            let v2 = a2 + h2 * a1 + h3 * v3   // low-pass
            a1 = 2 * v1 - a1
            a2 = 2 * v2 - a2
            let y = hm0 * v0 + hm1 * v1 + hm2 * v2
            let u3 = y - b2
            let u1 = l1 * b1 + l2 * u3
            let u2 = b2 + l2 * b1 + l3 * u3
            b1 = 2 * u1 - b1
            b2 = 2 * u2 - b2
            x[i] = y + lm1 * u1 + lm2 * u2
        }
        (hL1, hL2, lL1, lL2) = (a1, a2, b1, b2)
    }

    /// Both shelves, in cascade, on two channels at once (independent recursions the processor overlaps).
    @_noLocks
    private mutating func shelves(_ x: UnsafeMutablePointer<Float>, _ z: UnsafeMutablePointer<Float>, _ n: Int) {
        let (h1, h2, h3, hm0, hm1, hm2) = (self.h1, self.h2, self.h3, self.hm0, self.hm1, self.hm2)
        let (l1, l2, l3, lm1, lm2) = (self.l1, self.l2, self.l3, self.lm1, self.lm2)
        var (a1, a2, b1, b2) = (hL1, hL2, lL1, lL2)
        var (c1, c2, d1, d2) = (hR1, hR2, lR1, lR2)
        for i in 0..<n {
            let v0 = x[i], w0 = z[i]
            let v3 = v0 - a2, w3 = w0 - c2
            let v1 = h1 * a1 + h2 * v3, w1 = h1 * c1 + h2 * w3
            let v2 = a2 + h2 * a1 + h3 * v3, w2 = c2 + h2 * c1 + h3 * w3
            a1 = 2 * v1 - a1
            a2 = 2 * v2 - a2
            c1 = 2 * w1 - c1
            c2 = 2 * w2 - c2
            let y = hm0 * v0 + hm1 * v1 + hm2 * v2, q = hm0 * w0 + hm1 * w1 + hm2 * w2
            let u3 = y - b2, r3 = q - d2
            let u1 = l1 * b1 + l2 * u3, r1 = l1 * d1 + l2 * r3
            let u2 = b2 + l2 * b1 + l3 * u3, r2 = d2 + l2 * d1 + l3 * r3
            b1 = 2 * u1 - b1
            b2 = 2 * u2 - b2
            d1 = 2 * r1 - d1
            d2 = 2 * r2 - d2
            x[i] = y + lm1 * u1 + lm2 * u2
            z[i] = q + lm1 * r1 + lm2 * r2
        }
        (hL1, hL2, lL1, lL2) = (a1, a2, b1, b2)
        (hR1, hR2, lR1, lR2) = (c1, c2, d1, d2)
    }

    /// Multiplies by the broadband gain, per frame while it ramps (nothing at a constant 1).
    @_noLocks
    private func applyGain(_ x: UnsafeMutablePointer<Float>, frame: Int64, count n: Int) {
        if gain.varies(in: frame, frame + Int64(n)) {
            for j in 0..<n { x[j] *= gain.value(at: frame + Int64(j)) }
            return
        }
        let g = gain.value(at: frame)
        if g == 1 { return }
        for j in 0..<n { x[j] *= g }
    }
}
