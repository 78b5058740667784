/// A stereo-linked look-ahead peak limiter whose output never exceeds the ceiling.
///
/// The signal is delayed by L = look-ahead frames. For each incoming frame the gain it needs is
/// r = min(1, ceiling / max(|l|, |r|)). The gain applied to the frame leaving the delay line is
/// g = min(h, g_prev + 1/releaseFrames), where h is the mean over the last L frames of t, and t is the
/// minimum of r over the last L + 1 frames. Every t averaged into h covers the frame leaving the line, so
/// h ≤ its r: the ceiling holds by construction, and the gain glides down over L frames (no step, no click)
/// before the peak and recovers linearly over the release time after it. A final guard clamps any sample that
/// rounding would put a fraction of an ulp over the ceiling.
///
/// Below the ceiling every r is exactly 1, h is exactly 1 (L ones summed and divided by L) and the output is
/// the input delayed by L frames, bit for bit.
struct Limiter: BitwiseCopyable {
    var ceiling: Float
    var releaseStep: Float
    var lookahead: Int
    /// Delay lines (L frames each), the last L + 1 required gains, the last L window minima.
    var delayL: UnsafeMutablePointer<Float>
    var delayR: UnsafeMutablePointer<Float>
    var required: UnsafeMutablePointer<Float>
    var minima: UnsafeMutablePointer<Float>
    var position = 0
    var requiredPosition = 0
    var gain: Float = 1

    init(ceiling: Float, lookahead: Int, releaseFrames: Int) {
        self.ceiling = ceiling
        self.lookahead = max(lookahead, 1)
        releaseStep = 1 / Float(max(releaseFrames, 1))
        let n = self.lookahead
        delayL = .allocate(capacity: n)
        delayR = .allocate(capacity: n)
        required = .allocate(capacity: n + 1)
        minima = .allocate(capacity: n)
        delayL.initialize(repeating: 0, count: n)
        delayR.initialize(repeating: 0, count: n)
        required.initialize(repeating: 1, count: n + 1)
        minima.initialize(repeating: 1, count: n)
    }

    func deallocate() {
        for p in [delayL, delayR, required, minima] { p.deallocate() }
    }

    @_noLocks
    mutating func process(_ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, _ n: Int) {
        let c = ceiling, length = lookahead
        let delayL = self.delayL, delayR = self.delayR, required = self.required, minima = self.minima
        var p = position, q = requiredPosition, g = gain
        for j in 0..<n {
            let xl = l[j], xr = r[j]
            let peak = max(abs(xl), abs(xr))
            var need: Float = 1
            if peak > c {
                need = c / peak
                while need * peak > c { need = need.nextDown }
            }
            required[q] = need
            q += 1
            if q > length { q = 0 }
            var lowest: Float = 1
            for k in 0...length { lowest = min(lowest, required[k]) }
            minima[p] = lowest
            var sum: Float = 0
            for k in 0..<length { sum += minima[k] }
            let h = sum / Float(length)
            g = min(h, g + releaseStep)
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
        requiredPosition = q
        gain = g
    }
}
