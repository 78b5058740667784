import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleRender

/// The band-limited resamplers' design written out independently in Double, so the references do not share the
/// engine's code: a Kaiser-windowed sinc of `beta` over ±taps/2 frames, at 256 phases, weights interpolated
/// linearly between phases. `SincResamplerTests` (β = 10) and `FastSincTests` (β = 6.8) hold the tiers to it.
struct PolyphaseSincReference {
    let beta: Double

    /// I0 by its series.
    static func i0(_ x: Double) -> Double {
        var sum = 1.0, term = 1.0
        for k in 1..<60 {
            term *= (x / 2) * (x / 2) / Double(k * k)
            sum += term
        }
        return sum
    }

    /// The filter at `x` frames from its centre: cutoff `cutoff` (cycles per source frame), `taps` taps.
    func h(_ x: Double, taps: Int, cutoff: Double) -> Double {
        let half = Double(taps / 2)
        guard abs(x) < half else { return 0 }
        let a = 2 * cutoff * x
        let sinc = a == 0 ? 1 : sin(Double.pi * a) / (Double.pi * a)
        return 2 * cutoff * sinc * Self.i0(beta * (1 - (x / half) * (x / half)).squareRoot()) / Self.i0(beta)
    }

    /// Output frame k of a voice stepping `step` (32.32) through `passes` copies of `samples` from `offset`:
    /// taps i − (taps/2 − 1) … i + taps/2, weights interpolated between phases p/256 and (p + 1)/256 by the
    /// fraction's low 24 bits, silence outside the passes.
    func sample(_ samples: [Double], step: UInt64, frame k: Int, passes: Int = 1, offset: Int, taps: Int,
                cutoff: Double) -> Double {
        let fixed = UInt64(offset) << 32 + UInt64(k) * step
        let i = Int(fixed >> 32)
        let p = Double((fixed >> 24) & 255), t = Double(fixed & 0xFF_FFFF) / 0x1p24
        let n = samples.count
        var sum = 0.0
        for j in (1 - taps / 2)...(taps / 2) {
            let frame = i + j
            let x = frame < 0 || frame >= n * passes ? 0 : samples[frame % n]
            let a = h(Double(j) - p / 256, taps: taps, cutoff: cutoff)
            let b = h(Double(j) - (p + 1) / 256, taps: taps, cutoff: cutoff)
            sum += x * (a + (b - a) * t)
        }
        return sum
    }

    /// `samples` as a 48 kHz sound (mono, or stereo with a silent right channel) played hard left at `rate` with
    /// `resampler` (nil: the engine's default) from frame `offset` of the sound, looping `loops` times, from
    /// output frame 3: 1200 frames rendered in calls of `block`.
    static func render(_ samples: [Double], resampler: ResamplerQuality?, rate: Float, loops: Int, offset: Int,
                       block: Int, metering: Bool, stereo: Bool) throws -> Mix {
        let engine = try makeEngine()
        let sound = stereo ? try stereoSound(samples.count, left: { samples[$0] }, right: { _ in 0 })
                           : try monoSound(samples.count) { samples[$0] }
        let track = try engine.makeTrack(sound)
        if let resampler { track.resampler = resampler }
        try track.setPan(-1)
        try track.setRate(rate)
        try track.setNumberOfLoops(loops)
        track.isMeteringEnabled = metering
        try track.setCurrentTime(Double(offset) / 48000)
        try track.play(at: track.engine.time(frame: 3))
        return EnsembleTestSupport.render(engine, frames: 1200, block: block)
    }
}
