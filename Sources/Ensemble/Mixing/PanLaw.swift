import Foundation

/// How a source's channels reach the stereo output: out = M · in, with the W3C Web Audio
/// `StereoPannerNode` equal-power law.
///
/// Mono (`in = s`, only `leftFromLeft`/`rightFromLeft` used): x = (pan+1)/2, L = s·cos(xπ/2), R = s·sin(xπ/2).
/// Stereo, pan ≤ 0: x = pan+1, L = inL + inR·cos(xπ/2), R = inR·sin(xπ/2).
/// Stereo, pan > 0: x = pan,   L = inL·cos(xπ/2),       R = inR + inL·sin(xπ/2).
struct PanMatrix: BitwiseCopyable, Sendable {
    var leftFromLeft: Float
    var leftFromRight: Float
    var rightFromLeft: Float
    var rightFromRight: Float

    @_noLocks
    init(leftFromLeft: Float, leftFromRight: Float, rightFromLeft: Float, rightFromRight: Float) {
        self.leftFromLeft = leftFromLeft
        self.leftFromRight = leftFromRight
        self.rightFromLeft = rightFromLeft
        self.rightFromRight = rightFromRight
    }

    /// The matrix for `pan` in −1…1 and a source of `channelCount` (1 or 2) channels. Computed in Double
    /// so that the Float coefficients are the correctly rounded values of the law.
    ///
    /// cos(π/2) is exactly 0 here, not Double's 6.1e-17: a hard-panned mono source is silent on the far side,
    /// and a stereo source at pan 0 passes through bit-exactly (L = inL, R = inR).
    init(pan: Float, channelCount: Int) {
        let p = Double(min(max(pan, -1), 1))
        if channelCount == 1 {
            let x = (p + 1) / 2
            self.init(leftFromLeft: Self.cosQuarter(x), leftFromRight: 0,
                      rightFromLeft: Self.sinQuarter(x), rightFromRight: 0)
        } else if p <= 0 {
            let x = p + 1
            self.init(leftFromLeft: 1, leftFromRight: Self.cosQuarter(x),
                      rightFromLeft: 0, rightFromRight: Self.sinQuarter(x))
        } else {
            let x = p
            self.init(leftFromLeft: Self.cosQuarter(x), leftFromRight: 0,
                      rightFromLeft: Self.sinQuarter(x), rightFromRight: 1)
        }
    }

    /// cos(xπ/2) for x in 0…1, exact at both ends.
    private static func cosQuarter(_ x: Double) -> Float { x >= 1 ? 0 : Float(cos(x * .pi / 2)) }
    /// sin(xπ/2) for x in 0…1, exact at both ends.
    private static func sinQuarter(_ x: Double) -> Float { x >= 1 ? 1 : Float(sin(x * .pi / 2)) }

    @_noLocks
    func isSame(as other: PanMatrix) -> Bool {
        if leftFromLeft != other.leftFromLeft { return false }
        if leftFromRight != other.leftFromRight { return false }
        if rightFromLeft != other.rightFromLeft { return false }
        return rightFromRight == other.rightFromRight
    }

    /// Linear interpolation between two matrices: how a pan change is smoothed.
    @inline(__always)
    @_noLocks
    static func mix(_ a: PanMatrix, _ b: PanMatrix, _ t: Float) -> PanMatrix {
        PanMatrix(leftFromLeft: a.leftFromLeft + (b.leftFromLeft - a.leftFromLeft) * t,
                  leftFromRight: a.leftFromRight + (b.leftFromRight - a.leftFromRight) * t,
                  rightFromLeft: a.rightFromLeft + (b.rightFromLeft - a.rightFromLeft) * t,
                  rightFromRight: a.rightFromRight + (b.rightFromRight - a.rightFromRight) * t)
    }
}
