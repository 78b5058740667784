import Foundation

// Render thread (the lanes); `init` on the control thread.
//
// THROWAWAY STUB by helper "spatial-mixer" (the integrator takes helper "spatial-math"'s file): an RBJ high
// shelf at 5 kHz, enough for the mixer to compile and run; not checked against EFX.

/// A mono high shelf at 5 kHz (EFX's LOWPASSFREQREF) whose gain above the shelf is `gainHF`.
struct HighShelf: BitwiseCopyable {
    private var cosW: Float
    private var sinW: Float
    private var b0: Float = 1, b1: Float = 0, b2: Float = 0, a1: Float = 0, a2: Float = 0
    private var x1: Float = 0, x2: Float = 0, y1: Float = 0, y2: Float = 0

    init(sampleRate: Double) {
        let w = 2 * Double.pi * 5000 / sampleRate
        cosW = Float(cos(w))
        sinW = Float(sin(w))
    }

    @_noLocks
    mutating func setGain(_ gainHF: Float) {
        let a = RenderMath.sqrt(max(gainHF, 0.0001))
        let alpha = sinW / 2 * RenderMath.sqrt(2)
        let sa = 2 * RenderMath.sqrt(a) * alpha
        let a0 = (a + 1) - (a - 1) * cosW + sa
        b0 = a * ((a + 1) + (a - 1) * cosW + sa) / a0
        b1 = -2 * a * ((a - 1) + (a + 1) * cosW) / a0
        b2 = a * ((a + 1) + (a - 1) * cosW - sa) / a0
        a1 = 2 * ((a - 1) - (a + 1) * cosW) / a0
        a2 = ((a + 1) - (a - 1) * cosW - sa) / a0
    }

    @_noLocks
    mutating func process(_ x: UnsafeMutablePointer<Float>, count: Int) {
        for j in 0..<count {
            let input = x[j]
            let y = b0 * input + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
            x2 = x1
            x1 = input
            y2 = y1
            y1 = y
            x[j] = y
        }
    }
}
