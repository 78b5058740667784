import Foundation
import EnsembleFormats

// Render thread (the lanes); `makeWindow` on the control thread.

/// A pitch-keeping voice's grains (`TimeStretch`): part of the voice, so any lane can carry it on.
package struct StretchState: BitwiseCopyable {
    /// False until the first stretched frame (or after a stretch-free stretch at rate 1): the grains restart.
    package var active = false
    /// Source positions (unrolled over passes, fractional) of the older grain's and the newer grain's first frame.
    var olderStart = 0.0
    var newerStart = 0.0
    /// Output frame where the newer grain started.
    var newerFrame: Int64 = 0

    @_noLocks
    package init() {}
}

/// Pitch-preserving rate ("rateMode: preservePitch") by WSOLA, waveform-similarity overlap-add (Verhelst &
/// Roelands, 1993), on the render side. The voice's cursor still moves at `rate`, so positions, loops, ends and
/// events are those of varispeed; every `hop` output frames a Hann-windowed grain of `2 × hop` frames starts at the
/// original speed, shifted by up to ±`search` frames to best continue the previous grain. Invariant: grains start on
/// the voice's grid of absolute frames (≡ `grainPhase` modulo `hop`), so any block size gives the same bits; grains
/// read the sound in memory directly, so there is no latency and the state is two grain positions. The phase spread
/// keeps many voices' searches off the same frame. Design: the "Loop regions and pitch-preserving rate" article
/// (Ensemble.docc/LoopsAndPitch.md, "Pitch-preserving rate").
package enum TimeStretch {
    /// A periodic Hann window of `2 × hop` frames (allocated once, by the mixer).
    static func makeWindow(hop: Int) -> UnsafeMutablePointer<Float> {
        let n = 2 * hop
        let w = UnsafeMutablePointer<Float>.allocate(capacity: n)
        for i in 0..<n { w[i] = Float(0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(n))) }
        return w
    }

    /// The grain phase of the voice started `sequence`-th: sequence × the golden ratio, modulo 1, times `hop`.
    /// Consecutive sequences land far apart, and any run of n of them splits the hop into gaps no wider than
    /// 2·hop/n (three-distance theorem), so the boundaries of voices started together stay spread.
    @inline(__always) @_noLocks
    package static func grainPhase(sequence: UInt64, hop: Int) -> Int64 {
        let fraction = (sequence &* 0x9E37_79B9_7F4A_7C15) >> 32 // 2⁶⁴/φ, keeps 32 bits of the fraction
        return Int64((fraction &* UInt64(hop)) >> 32)
    }

    /// The cursor's position unrolled over passes (pass 0 is [0, length), later passes [loopStart, length)).
    @inline(__always) @_noLocks
    static func unrolled(_ c: SourceCursor) -> Double {
        let base = c.pass == 0 ? Double(c.position) : Double(c.length + (c.pass - 1) * c.region + (c.position - c.loopStart))
        return base + Double(c.fraction) * 0x1p-32
    }

    /// Sample at unrolled source frame `u` of `samples` (the concatenated passes; silence outside them).
    @inline(__always) @_noLocks
    package static func sample(_ samples: UnsafePointer<Float>, _ c: SourceCursor, _ u: Int) -> Float {
        if u < 0 { return 0 }
        if u < c.length { return samples[u] }
        let region = c.region
        guard region > 0 else { return 0 }
        let k = (u - c.length) / region + 1
        if c.loops >= 0 && k > c.loops { return 0 }
        return samples[c.loopStart + (u - c.length) % region]
    }

    /// Linear interpolation between unrolled frames.
    @inline(__always) @_noLocks
    package static func read(_ samples: UnsafePointer<Float>, _ c: SourceCursor, _ u: Double) -> Float {
        var i = Int(u)
        if Double(i) > u { i -= 1 }
        let t = Float(u - Double(i))
        let a = sample(samples, c, i)
        return t == 0 ? a : a + (sample(samples, c, i + 1) - a) * t
    }

    /// A grain's sample at unrolled frame `u`, through the voice's resampler (`kernel`, taps gathered into
    /// `taps` across loop seams): band-limited with the default sinc. (The search below keeps the cheaper `read`.)
    @inline(__always) @_noLocks
    static func readGrain(_ samples: UnsafePointer<Float>, _ c: SourceCursor, _ u: Double, _ kernel: TapKernel,
                          _ taps: UnsafeMutablePointer<Float>) -> Float {
        var i = Int(u)
        if Double(i) > u { i -= 1 }
        let fraction = UInt32(min((u - Double(i)) * 0x1p32, 0x1p32 - 1))
        let first = i - kernel.before
        for j in 0..<kernel.taps { taps[j] = sample(samples, c, first + j) }
        return kernel.frame(taps, taps, stereo: false, fraction).0
    }

    /// The grain start within ±`search` of `nominal` whose first `hop` frames best match those at `target`.
    @_noLocks
    static func bestStart(_ source: VoiceSource, _ c: SourceCursor, nominal: Double, target: Double,
                          hop: Int, search: Int, ratio: Double) -> Double {
        let stereo = source.channelCount == 2
        // Every 4th frame of the overlap, every 2nd shift, then the shifts either side: ~1/8 of a full search.
        let stride = 4
        func mono(_ u: Double) -> Float {
            stereo ? read(source.left, c, u) + read(source.right, c, u) : read(source.left, c, u)
        }
        func score(_ shift: Int) -> Double {
            var xy = 0.0, yy = 0.0
            var i = 0
            while i < hop {
                let x = Double(mono(target + Double(i) * ratio))
                let y = Double(mono(nominal + Double(shift) + Double(i) * ratio))
                xy += x * y
                yy += y * y
                i += stride
            }
            // xy·|xy|/yy orders shifts like the normalised correlation xy/√yy, without a square root.
            return yy > 1e-12 ? xy * abs(xy) / yy : 0
        }
        var best = 0, bestScore = score(0)
        var shift = -search
        while shift <= search {
            if shift != 0 {
                let s = score(shift)
                if s > bestScore { best = shift; bestScore = s }
            }
            shift += 2
        }
        let coarse = best
        if coarse - 1 >= -search {
            let v = score(coarse - 1)
            if v > bestScore { best = coarse - 1; bestScore = v }
        }
        if coarse + 1 <= search {
            let v = score(coarse + 1)
            if v > bestScore { best = coarse + 1; bestScore = v }
        }
        return nominal + Double(best)
    }

    /// Renders `count` frames from output frame `frame` into `left`/`right`, advancing the cursor at its step.
    /// `ratio` is the source-to-output sample-rate ratio (the speed grains are read at).
    @_noLocks
    package static func fill(_ c: inout SourceCursor, _ state: inout StretchState, _ source: VoiceSource,
                     window: UnsafePointer<Float>, hop: Int, search: Int, ratio: Double, phase: Int64, frame: Int64,
                     tables: ResamplerTables, _ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>,
                     count: Int) {
        let h = Int64(hop)
        let kernel = TapKernel(c.quality, step: UInt64(ratio * 0x1p32), tables) // ratio is baseStep · 2^-32: exact
        let taps = tables.edgeLeft
        if !state.active {
            // Two virtual grains that both read the cursor's position at `frame`: the output continues from
            // there exactly, and the window sum is 1 from the first frame.
            state.active = true
            let d = frame - phase
            let aligned = phase + (d >= 0 ? d / h * h : ((d + 1) / h - 1) * h)
            let here = unrolled(c)
            state.newerFrame = aligned
            state.newerStart = here - Double(frame - aligned) * ratio
            state.olderStart = state.newerStart - Double(hop) * ratio
        }
        var t = frame
        var j = 0
        while j < count {
            if t >= state.newerFrame + h {
                // A new grain at frame t (on the voice's grid): near the cursor, aligned with the natural
                // continuation of the newer grain (which becomes the older one).
                let target = state.newerStart + Double(hop) * ratio
                let start = bestStart(source, c, nominal: unrolled(c), target: target, hop: hop, search: search,
                                      ratio: ratio)
                state.olderStart = state.newerStart
                state.newerStart = start
                state.newerFrame = t
            }
            // Frames until the next grain, or the end of the request.
            let segment = Int(min(state.newerFrame + h - t, Int64(count - j)))
            let offset = Int(t - state.newerFrame)
            for k in 0..<segment {
                let n = offset + k
                let wNew = window[n], wOld = window[n + hop]
                let uNew = state.newerStart + Double(n) * ratio
                let uOld = state.olderStart + Double(n + hop) * ratio
                let l = wNew * readGrain(source.left, c, uNew, kernel, taps)
                    + wOld * readGrain(source.left, c, uOld, kernel, taps)
                left[j + k] = l
                right[j + k] = source.channelCount == 2
                    ? wNew * readGrain(source.right, c, uNew, kernel, taps)
                        + wOld * readGrain(source.right, c, uOld, kernel, taps) : l
            }
            _ = c.skip(frames: Int64(segment))
            j += segment
            t += Int64(segment)
        }
    }
}
