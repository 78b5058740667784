import Foundation
import XCTest
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

// Helpers for the bus and effect tests. References are computed here in Double from the RBJ cookbook
// formulas, written out again independently of the engine's `BiquadCoefficients`.

package enum RBJ {
    /// Normalised (b0, b1, b2, a1, a2) for the cookbook shapes.
    package static func coefficients(_ shape: BiquadShape, f: Double, q: Double, gainDB: Double = 0,
                             rate: Double = 48000) -> [Double] {
        let w = 2 * Double.pi * f / rate, cw = cos(w), alpha = sin(w) / (2 * q), A = pow(10, gainDB / 40)
        let sa = 2 * sqrt(A) * alpha
        var b: [Double], a: [Double]
        switch shape {
        case .lowpass: b = [(1 - cw) / 2, 1 - cw, (1 - cw) / 2]; a = [1 + alpha, -2 * cw, 1 - alpha]
        case .highpass: b = [(1 + cw) / 2, -(1 + cw), (1 + cw) / 2]; a = [1 + alpha, -2 * cw, 1 - alpha]
        case .bandpass: b = [alpha, 0, -alpha]; a = [1 + alpha, -2 * cw, 1 - alpha]
        case .peaking: b = [1 + alpha * A, -2 * cw, 1 - alpha * A]; a = [1 + alpha / A, -2 * cw, 1 - alpha / A]
        case .lowshelf:
            b = [A * ((A + 1) - (A - 1) * cw + sa), 2 * A * ((A - 1) - (A + 1) * cw), A * ((A + 1) - (A - 1) * cw - sa)]
            a = [(A + 1) + (A - 1) * cw + sa, -2 * ((A - 1) + (A + 1) * cw), (A + 1) + (A - 1) * cw - sa]
        case .highshelf:
            b = [A * ((A + 1) + (A - 1) * cw + sa), -2 * A * ((A - 1) + (A + 1) * cw), A * ((A + 1) + (A - 1) * cw - sa)]
            a = [(A + 1) - (A - 1) * cw + sa, 2 * ((A - 1) - (A + 1) * cw), (A + 1) - (A - 1) * cw - sa]
        }
        return [b[0] / a[0], b[1] / a[0], b[2] / a[0], a[1] / a[0], a[2] / a[0]]
    }

    /// 20·log10|H(e^{jω})| of normalised coefficients at `f` Hz.
    package static func decibels(_ c: [Double], at f: Double, rate: Double = 48000) -> Double {
        let w = 2 * Double.pi * f / rate
        let nr = c[0] + c[1] * cos(w) + c[2] * cos(2 * w), ni = -(c[1] * sin(w) + c[2] * sin(2 * w))
        let dr = 1 + c[3] * cos(w) + c[4] * cos(2 * w), di = -(c[3] * sin(w) + c[4] * sin(2 * w))
        return 10 * log10((nr * nr + ni * ni) / (dr * dr + di * di))
    }
}

/// A stereo unit impulse (1 on both channels at frame 0).
package func impulseSound() throws -> Sound {
    try stereoSound(1, name: "impulse", left: { _ in 1 }, right: { _ in 1 })
}

/// The left-channel impulse response of `effects` on bus 1 (rendered through the engine).
package func busImpulseResponse(_ effects: [EffectSpec], frames: Int = 32768, block: Int = 1000) throws -> [Float] {
    let engine = try makeEngine()
    try engine.setEffects(effects, on: busNumber(1))
    let track = try engine.makeTrack(try impulseSound())
    try track.setBus(busNumber(1))
    try track.play(at: track.engine.time(frame: 0))
    return withExtendedLifetime(track) { render(engine, frames: frames, block: block).left }
}

/// 20·log10 of the magnitude of the discrete-time Fourier transform of `x` at `f` Hz (evaluated directly at
/// that frequency, in Double).
package func spectrumDecibels(_ x: [Float], at f: Double, rate: Double = 48000) -> Double {
    let w = 2 * Double.pi * f / rate
    var re = 0.0, im = 0.0
    // Rotating phasor, renormalised now and then; exact enough for 32768 samples.
    var c = 1.0, s = 0.0
    let cw = cos(w), sw = sin(w)
    for (n, v) in x.enumerated() {
        re += Double(v) * c
        im -= Double(v) * s
        (c, s) = (c * cw - s * sw, s * cw + c * sw)
        if n % 1024 == 1023 {
            let phase = w * Double(n + 1)
            c = cos(phase)
            s = sin(phase)
        }
    }
    return 10 * log10(re * re + im * im)
}

/// Test frequencies spread over the audio band.
package let responseFrequencies: [Double] = [20, 31.5, 50, 63, 100, 125, 200, 250, 400, 500, 700, 1000, 1500, 2000,
                                      3000, 4000, 6000, 8000, 10000, 12000, 16000, 20000]
