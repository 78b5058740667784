// Render thread (the lanes, and command handling); `step(rate:…)` is computed on the control thread.
import EnsembleFormats

/// Where a voice is in its sound, and how fast it moves: the resampler's state.
///
/// The position is fixed point, an integer file frame plus a 32-bit fraction, and the step per output frame is
/// 32.32 fixed point, so the position after k frames is exact integer arithmetic whatever the block size
/// (OpenAL Soft uses 16 fraction bits; 32 keeps rate ratios like 44100/48000 within 1e-10).
package struct SourceCursor: BitwiseCopyable {
    package static var one: UInt64 { @_noLocks get { 1 << 32 } }

    package var position: Int
    package var fraction: UInt32
    /// Pass index: 0 is the first pass through the file.
    package var pass: Int
    /// 0 = once, n = n extra passes, -1 = forever.
    package var loops: Int
    package var step: UInt64
    /// End of every pass (exclusive): the file's length, or a loop region's end.
    package var length: Int
    /// Where passes after the first begin (a loop region's start; 0 without a region). Always < `length`
    /// when `length` > 0: pass 0 covers file frames [0, length), later passes [loopStart, length).
    package var loopStart = 0
    /// The kernel that reads the sound when the step is not exactly one frame (see `TapKernel`).
    package var quality = ResamplerQuality.sinc

    @_noLocks
    package init(position: Int, fraction: UInt32, pass: Int, loops: Int, step: UInt64, length: Int, loopStart: Int = 0,
         quality: ResamplerQuality = .sinc) {
        self.quality = quality
        self.position = position
        self.fraction = fraction
        self.pass = pass
        self.loops = loops
        self.step = step
        self.length = length
        self.loopStart = length > 0 ? min(max(loopStart, 0), length - 1) : 0
    }

    /// Frames in one repeated pass.
    package var region: Int { @_noLocks get { length - loopStart } }

    /// `rate × sourceRate / outputRate` in 32.32 fixed point (at least 1/2^32, so the cursor always moves),
    /// rounded UP, computed exactly in integers when the sample rates are whole numbers.
    ///
    /// Rounding up means the cursor never lags the true position, so a sound lasts exactly
    /// ceil(length × outputRate / (rate × sourceRate)) output frames: 1 s at 44.1 kHz is 48000 frames at 48 kHz.
    /// (Rounding to nearest made 44100/48000 a hair slow, and every 44.1 kHz sound whose length is a multiple of
    /// 147 frames one output frame too long.) The drift of a rounded-up step is under 2^-32 frame per output
    /// frame, so durations stay exact as long as that drift stays below the ratio's granularity (for
    /// 44.1 → 48 kHz, 1/160 frame: sounds up to about 11 minutes).
    package static func step(rate: Float, sourceRate: Double, outputRate: Double) -> UInt64 {
        if let exact = exactStep(rate: rate, sourceRate: sourceRate, outputRate: outputRate) {
            return max(1, exact)
        }
        let ratio = Double(rate) * sourceRate / outputRate
        let scaled = (ratio * Double(one)).rounded(.up)
        return scaled >= 0x1p63 ? 1 << 63 : max(1, UInt64(scaled))
    }

    /// ceil(rate × sourceRate × 2^32 / outputRate) in integer arithmetic, or nil when the inputs do not allow it.
    private static func exactStep(rate: Float, sourceRate: Double, outputRate: Double) -> UInt64? {
        guard rate.isNormal, rate > 0,
              sourceRate == sourceRate.rounded(), sourceRate >= 1, sourceRate <= 0x1p24,
              outputRate == outputRate.rounded(), outputRate >= 1, outputRate <= 0x1p24 else { return nil }
        // rate = m · 2^(exponent − 23) exactly, with m a 24-bit integer.
        let m = UInt64(rate.significandBitPattern) | (1 << 23)
        let shift = 32 + Int(rate.exponent) - 23
        guard shift >= 0, shift < 64 else { return nil }
        let (high, low) = (m * UInt64(sourceRate)).multipliedFullWidth(by: UInt64(1) << UInt64(shift))
        let out = UInt64(outputRate)
        guard high < out else { return nil }
        let (q, r) = out.dividingFullWidth((high, low))
        if r == 0 { return q }
        return q == .max ? nil : q + 1
    }

    /// The cursor's frame in a stream's numbering, where every pass is `length` frames long (pass × length +
    /// position): what the loader is asked for and the ring is indexed by (`StreamReader`, `StreamView`).
    var streamFrame: Int64 { @_noLocks get { Int64(pass) * Int64(length) + Int64(position) } }

    var isPassthrough: Bool { @_noLocks get { step == Self.one && fraction == 0 } }

    /// Output frames left before the cursor passes the end of its last pass; nil when it loops forever.
    /// Uses the same integer arithmetic as the kernels, so it is exact.
    @_noLocks
    package func framesUntilEnd() -> Int64? {
        guard loops >= 0 else { return nil }
        let passesAfter = loops - pass
        if passesAfter < 0 || length <= 0 { return 0 }
        let (framesLeft, o1) = passesAfter.multipliedReportingOverflow(by: region)
        let (total, o2) = framesLeft.addingReportingOverflow(length - position)
        if o1 || o2 { return Int64.max }
        if total <= 0 { return 0 }
        // remaining = total·2^32 − fraction, as a 128-bit value; frames = ceil(remaining / step)
        var high = UInt64(total) >> 32
        var low = UInt64(total) << 32
        if low < UInt64(fraction) { high -= 1 }
        low &-= UInt64(fraction)
        if high >= step { return Int64.max }
        let (q, r) = step.dividingFullWidth((high, low))
        let frames = r == 0 ? q : q + 1
        return frames > UInt64(Int64.max) ? Int64.max : Int64(frames)
    }

    /// Moves on by `frames` output frames, wrapping into later passes (`TimeStretch` advances a segment at a time with it).
    /// Returns false when the cursor ran past the end of its last pass.
    @_noLocks
    package mutating func skip(frames: Int64) -> Bool {
        guard frames > 0 else { return loops < 0 || pass <= loops }
        // frames × step + fraction as a 128-bit value in 2^-32 units. (multipliedFullWidth returns
        // (high, low), not (product, overflow).)
        let (high, low) = UInt64(frames).multipliedFullWidth(by: step)
        let (sum, carry) = low.addingReportingOverflow(UInt64(fraction))
        let top = high &+ (carry ? 1 : 0)
        fraction = UInt32(truncatingIfNeeded: sum)
        guard top >> 32 == 0 else { return loops < 0 } // beyond 2^64 frames: only a forever-loop survives
        let whole = top << 32 | sum >> 32
        guard length > 0 else { return loops < 0 || pass <= loops }
        if whole > UInt64(Int.max / 4) && loops >= 0 { return false } // further than any finite sound
        let toEnd = UInt64(max(length - position, 0))
        if whole < toEnd {
            position += Int(whole)
            return loops < 0 || pass <= loops
        }
        // Past the end of this pass: the rest lands in later passes, each `region` frames from `loopStart`.
        let extra = whole - toEnd, span = UInt64(region)
        let passes = 1 + extra / span
        position = loopStart + Int(extra % span)
        pass = passes > UInt64(Int.max / 4) ? Int.max / 4 : min(pass + Int(passes), Int.max / 4)
        return loops < 0 || pass <= loops
    }

    /// After the kernel advanced `position`, folds it back into the file, counting passes.
    @inline(__always)
    @_noLocks
    mutating func wrap() {
        while position >= length && length > 0 && (loops < 0 || pass < loops) {
            position -= length - loopStart
            pass += 1
        }
    }

    /// Sample at file frame `index` of the current pass, as the concatenated passes read (the first pass
    /// [0, length), each later one [loopStart, length)): earlier or later passes where the index falls outside
    /// this one, silence before the first pass and after the last.
    @inline(__always)
    @_noLocks
    package func tap(_ samples: UnsafePointer<Float>, _ index: Int) -> Float {
        let i = tapIndex(index)
        return i < 0 ? 0 : samples[i]
    }

    /// The file frame `tap` reads for `index`, or −1 for silence.
    @inline(__always)
    @_noLocks
    func tapIndex(_ index: Int) -> Int {
        guard length > 0 else { return -1 }
        var i = index, p = pass
        let span = length - loopStart
        if i >= length {
            let k = (i - length) / span + 1
            i -= k * span
            p += k
        } else if p > 0 && i < loopStart {
            // Back into earlier passes; pass 0 also holds [0, loopStart), so stop there.
            let k = (loopStart - 1 - i) / span + 1
            if k >= p {
                i += p * span
                p = 0
            } else {
                i += k * span
                p -= k
            }
        }
        if i < 0 || (loops >= 0 && p > loops) { return -1 }
        return i
    }
}
