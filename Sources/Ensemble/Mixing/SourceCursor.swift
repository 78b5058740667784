/// Where a voice is in its sound, and how fast it moves: the resampler's state.
///
/// The position is fixed point, an integer file frame plus a 32-bit fraction, and the step per output frame is
/// 32.32 fixed point, so the position after k frames is exact integer arithmetic whatever the block size
/// (OpenAL Soft uses 16 fraction bits; 32 keeps rate ratios like 44100/48000 within 1e-10).
struct SourceCursor: BitwiseCopyable {
    static var one: UInt64 { @_noLocks get { 1 << 32 } }

    var position: Int
    var fraction: UInt32
    /// Pass index: 0 is the first pass through the file.
    var pass: Int
    /// 0 = once, n = n extra passes, -1 = forever.
    var loops: Int
    var step: UInt64
    var length: Int

    @_noLocks
    init(position: Int, fraction: UInt32, pass: Int, loops: Int, step: UInt64, length: Int) {
        self.position = position
        self.fraction = fraction
        self.pass = pass
        self.loops = loops
        self.step = step
        self.length = length
    }

    /// `rate × sourceRate / outputRate` in 32.32 fixed point (at least 1/2^32, so the cursor always moves).
    /// Rounded up, so a sound never lasts a frame longer than the exact ratio gives: 4410 frames at 44.1 kHz
    /// are 4800 frames at 48 kHz, not 4801.
    static func step(rate: Float, sourceRate: Double, outputRate: Double) -> UInt64 {
        let ratio = Double(rate) * sourceRate / outputRate
        return max(1, UInt64((ratio * Double(one)).rounded(.up)))
    }

    var isPassthrough: Bool { @_noLocks get { step == Self.one && fraction == 0 } }

    /// Output frames left before the cursor passes the end of its last pass; nil when it loops forever.
    /// Uses the same integer arithmetic as the kernels, so it is exact.
    @_noLocks
    func framesUntilEnd() -> Int64? {
        guard loops >= 0 else { return nil }
        let passesAfter = loops - pass
        if passesAfter < 0 || length <= 0 { return 0 }
        let (framesLeft, o1) = passesAfter.multipliedReportingOverflow(by: length)
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

    /// Moves on by `frames` output frames, wrapping into later passes (used when a start comes late).
    /// Returns false when the cursor ran past the end of its last pass.
    @_noLocks
    mutating func skip(frames: Int64) -> Bool {
        let (prod, overflow) = UInt64(frames).multipliedFullWidth(by: step)
        if overflow != 0 || prod > UInt64(Int.max / 2) {
            // Further than any finite sound can be: only a forever-loop survives, at a position we reduce below.
            guard loops < 0 else { return false }
        }
        let total = UInt64(fraction) &+ prod
        fraction = UInt32(truncatingIfNeeded: total)
        let whole = Int(truncatingIfNeeded: total >> 32)
        if length > 0 {
            let sum = position + whole
            pass += sum / length
            position = sum % length
        }
        return loops < 0 || pass <= loops
    }

    /// After the kernel advanced `position`, folds it back into the file, counting passes.
    @inline(__always)
    @_noLocks
    mutating func wrap() {
        while position >= length && length > 0 && (loops < 0 || pass < loops) {
            position -= length
            pass += 1
        }
    }

    /// Sample `index` frames relative to the start of the current pass, as the concatenated passes read:
    /// earlier or later passes where they exist, silence before the first and after the last.
    @inline(__always)
    @_noLocks
    func tap(_ samples: UnsafePointer<Float>, _ index: Int) -> Float {
        var i = index, p = pass
        if i < 0 {
            let k = (length - 1 - i) / length
            i += k * length
            p -= k
        } else if i >= length {
            let k = i / length
            i -= k * length
            p += k
        }
        if p < 0 || (loops >= 0 && p > loops) { return 0 }
        return samples[i]
    }
}
