import Foundation
import EnsembleFormats

// Made on the control thread (`init(pan:channelCount:)`, libm); `gliding` and the rest on the render thread.

/// How a source's channels reach the stereo output: out = M · in, with the W3C Web Audio
/// `StereoPannerNode` equal-power law.
///
/// Mono (`in = s`, only `leftFromLeft`/`rightFromLeft` used): x = (pan+1)/2, L = s·cos(xπ/2), R = s·sin(xπ/2).
/// Stereo, pan ≤ 0: x = pan+1, L = inL + inR·cos(xπ/2), R = inR·sin(xπ/2).
/// Stereo, pan > 0: x = pan,   L = inL·cos(xπ/2),       R = inR + inL·sin(xπ/2).
package struct PanMatrix: BitwiseCopyable, Sendable {
    var leftFromLeft: Float
    var leftFromRight: Float
    var rightFromLeft: Float
    var rightFromRight: Float
    /// The pan (−1…1) and source layout the matrix stands for: what a pan ramp glides along (`PanRamp`).
    package var position: Float
    var isStereo: Bool

    @_noLocks
    package init(leftFromLeft: Float, leftFromRight: Float, rightFromLeft: Float, rightFromRight: Float,
         position: Float = 0, isStereo: Bool = true) {
        self.leftFromLeft = leftFromLeft
        self.leftFromRight = leftFromRight
        self.rightFromLeft = rightFromLeft
        self.rightFromRight = rightFromRight
        self.position = position
        self.isStereo = isStereo
    }

    /// The matrix for `pan` in −1…1 and a source of `channelCount` (1 or 2) channels. Computed in Double
    /// so that the Float coefficients are the correctly rounded values of the law.
    ///
    /// cos(π/2) is exactly 0 here, not Double's 6.1e-17: a hard-panned mono source is silent on the far side,
    /// and a stereo source at pan 0 passes through bit-exactly (L = inL, R = inR).
    package init(pan: Float, channelCount: Int) {
        let p = min(max(pan, -1), 1)
        let x = Self.quarter(Double(p), channelCount: channelCount)
        self.init(pan: p, channelCount: channelCount, cos: Self.cosQuarter(x), sin: Self.sinQuarter(x))
    }

    /// The law at `pan` evaluated with the quarter-wave polynomials (no libm call): the matrices a pan ramp
    /// passes through between its two ends, on the render side. Within 1e-8 of the libm values.
    @_noLocks
    static func gliding(pan: Float, isStereo: Bool) -> PanMatrix {
        let channels = isStereo ? 2 : 1
        let x = quarter(Double(pan), channelCount: channels)
        return PanMatrix(pan: pan, channelCount: channels, cos: QuarterWave.cos(x), sin: QuarterWave.sin(x))
    }

    /// Where on the quarter wave the law looks for `pan`: x in 0…1.
    @inline(__always)
    @_noLocks
    private static func quarter(_ p: Double, channelCount: Int) -> Double {
        channelCount == 1 ? (p + 1) / 2 : p <= 0 ? p + 1 : p
    }

    /// The matrix from cos(xπ/2) and sin(xπ/2) at the quarter-wave point of `pan`.
    @inline(__always)
    @_noLocks
    private init(pan: Float, channelCount: Int, cos c: Float, sin s: Float) {
        if channelCount == 1 {
            self.init(leftFromLeft: c, leftFromRight: 0, rightFromLeft: s, rightFromRight: 0, position: pan,
                      isStereo: false)
        } else if pan <= 0 {
            self.init(leftFromLeft: 1, leftFromRight: c, rightFromLeft: 0, rightFromRight: s, position: pan)
        } else {
            self.init(leftFromLeft: c, leftFromRight: 0, rightFromLeft: s, rightFromRight: 1, position: pan)
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
}
