// Test thread only: a reverb preset's wet impulse response rendered by OpenAL Soft's EAX reverb (ALC_SOFT_loopback,
// EFX) and by Ensemble's engine, and the spectral and statistical measures the low-end and wet-level tests compare.
import COpenAL
import Foundation
import XCTest
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// OpenAL Soft's `AL_EFFECT_EAXREVERB` as the reference: a loopback device at 48 kHz stereo float32, one mono
/// float32 buffer holding a unit impulse, one source in front of the listener (relative, (0, 0, −1), reference
/// distance 1: distance gain 1) whose direct path is silenced by a low-pass filter of gain 0 and whose auxiliary
/// send 0 (no send filter) feeds a slot holding the reverb with the preset's ten EFX values (every other EAX value
/// at its default). What comes out is the wet signal alone.
package enum OpenALReverbReference {
    /// The EFX entry points used here (efx.h's function-pointer types, loaded with `alGetProcAddress` as the
    /// Effects Extension Guide prescribes).
    private struct EFX {
        let genEffects: LPALGENEFFECTS, deleteEffects: LPALDELETEEFFECTS
        let effecti: LPALEFFECTI, effectf: LPALEFFECTF
        let genSlots: LPALGENAUXILIARYEFFECTSLOTS, deleteSlots: LPALDELETEAUXILIARYEFFECTSLOTS
        let sloti: LPALAUXILIARYEFFECTSLOTI
        let genFilters: LPALGENFILTERS, deleteFilters: LPALDELETEFILTERS
        let filteri: LPALFILTERI, filterf: LPALFILTERF

        static func load() -> EFX? {
            func f<T>(_ name: String, _: T.Type) -> T? {
                guard let p = alGetProcAddress(name) else { return nil }
                return unsafeBitCast(p, to: T.self)
            }
            guard let genEffects = f("alGenEffects", LPALGENEFFECTS.self),
                  let deleteEffects = f("alDeleteEffects", LPALDELETEEFFECTS.self),
                  let effecti = f("alEffecti", LPALEFFECTI.self), let effectf = f("alEffectf", LPALEFFECTF.self),
                  let genSlots = f("alGenAuxiliaryEffectSlots", LPALGENAUXILIARYEFFECTSLOTS.self),
                  let deleteSlots = f("alDeleteAuxiliaryEffectSlots", LPALDELETEAUXILIARYEFFECTSLOTS.self),
                  let sloti = f("alAuxiliaryEffectSloti", LPALAUXILIARYEFFECTSLOTI.self),
                  let genFilters = f("alGenFilters", LPALGENFILTERS.self),
                  let deleteFilters = f("alDeleteFilters", LPALDELETEFILTERS.self),
                  let filteri = f("alFilteri", LPALFILTERI.self), let filterf = f("alFilterf", LPALFILTERF.self)
            else { return nil }
            return EFX(genEffects: genEffects, deleteEffects: deleteEffects, effecti: effecti, effectf: effectf,
                       genSlots: genSlots, deleteSlots: deleteSlots, sloti: sloti, genFilters: genFilters,
                       deleteFilters: deleteFilters, filteri: filteri, filterf: filterf)
        }
    }

    /// The wet stereo response to a unit impulse sent at level 1 (`frames` long, from the frame the source starts).
    /// Skips the test when OpenAL Soft, its loopback device or EFX's EAX reverb is unavailable.
    package static func impulseResponse(_ s: ReverbSettings, frames: Int) throws -> (left: [Float], right: [Float]) {
        try OpenALTestConfig.install()
        let device = try OpenALDevice.loopback(sampleRate: 48000)
        defer { device.close() }
        device.makeCurrent()
        try XCTSkipUnless(alcIsExtensionPresent(device.device, "ALC_EXT_EFX") != 0, "OpenAL Soft without EFX")
        let efx = try XCTUnwrap(EFX.load(), "EFX entry points")
        guard let renderSamples = ALExtensions.renderSamples else { throw XCTSkip("no alcRenderSamplesSOFT") }
        _ = alGetError()

        var effect: ALuint = 0, slot: ALuint = 0, filter: ALuint = 0, buffer: ALuint = 0, source: ALuint = 0
        efx.genEffects(1, &effect)
        efx.effecti(effect, AL_EFFECT_TYPE, AL_EFFECT_EAXREVERB)
        try XCTSkipUnless(alGetError() == AL_NO_ERROR, "OpenAL Soft without EAX reverb")
        let values: [(ALenum, Double)] = [
            (AL_EAXREVERB_DENSITY, s.density), (AL_EAXREVERB_DIFFUSION, s.diffusion), (AL_EAXREVERB_GAIN, s.gain),
            (AL_EAXREVERB_GAINHF, s.gainHF), (AL_EAXREVERB_DECAY_TIME, s.decayTime),
            (AL_EAXREVERB_DECAY_HFRATIO, s.decayHFRatio), (AL_EAXREVERB_REFLECTIONS_GAIN, s.reflectionsGain),
            (AL_EAXREVERB_REFLECTIONS_DELAY, s.reflectionsDelay + s.preDelay),
            (AL_EAXREVERB_LATE_REVERB_GAIN, s.lateReverbGain), (AL_EAXREVERB_LATE_REVERB_DELAY, s.lateReverbDelay)]
        for (parameter, value) in values { efx.effectf(effect, parameter, Float(value)) }
        efx.genSlots(1, &slot)
        efx.sloti(slot, AL_EFFECTSLOT_EFFECT, ALint(effect))
        efx.genFilters(1, &filter)
        efx.filteri(filter, AL_FILTER_TYPE, AL_FILTER_LOWPASS)
        efx.filterf(filter, AL_LOWPASS_GAIN, 0)
        efx.filterf(filter, AL_LOWPASS_GAINHF, 1)
        XCTAssertEqual(alGetError(), AL_NO_ERROR, "EFX set-up")
        defer {
            alSourceStop(source)
            alDeleteSources(1, &source)
            alDeleteBuffers(1, &buffer)
            efx.deleteSlots(1, &slot)
            efx.deleteEffects(1, &effect)
            efx.deleteFilters(1, &filter)
        }

        var impulse = [Float](repeating: 0, count: 64)
        impulse[0] = 1
        alGenBuffers(1, &buffer)
        impulse.withUnsafeBytes { alBufferData(buffer, AL_FORMAT_MONO_FLOAT32, $0.baseAddress, ALsizei($0.count), 48000) }
        alGenSources(1, &source)
        alSourcei(source, AL_BUFFER, ALint(buffer))
        alSourcei(source, AL_SOURCE_RELATIVE, AL_TRUE)
        alSource3f(source, AL_POSITION, 0, 0, -1)
        alSourcei(source, AL_DIRECT_FILTER, ALint(filter))
        alSource3i(source, AL_AUXILIARY_SEND_FILTER, ALint(slot), 0, AL_FILTER_NULL)
        XCTAssertEqual(alGetError(), AL_NO_ERROR, "source set-up")
        alSourcePlay(source)

        var out = [Float](repeating: 0, count: 2 * frames)
        out.withUnsafeMutableBufferPointer { p in
            var done = 0
            while done < frames {
                let n = min(1024, frames - done)
                renderSamples(device.device, p.baseAddress! + 2 * done, ALCsizei(n))
                done += n
            }
        }
        return (stride(from: 0, to: 2 * frames, by: 2).map { out[$0] }, stride(from: 1, to: 2 * frames, by: 2).map { out[$0] })
    }
}

/// Ensemble's wet stereo response to the same situation as `OpenALReverbReference`: a mono unit impulse on a track
/// (centre, volume 1) routed into bus 1 holding `.reverb(settings)` (`mix` 1: wet only), rendered offline in blocks
/// of `block` frames.
package func ensembleReverbImpulseResponse(_ settings: ReverbSettings, frames: Int, block: Int = 512) throws -> (left: [Float], right: [Float]) {
    let engine = try makeEngine()
    try engine.setEffects([.reverb(settings)], on: busNumber(1))
    let track = try engine.makeTrack(try monoSound(64, name: "impulse") { $0 == 0 ? 1 : 0 })
    try track.setBus(busNumber(1))
    try track.play(at: engine.time(frame: 0))
    let mix = withExtendedLifetime(track) { render(engine, frames: frames, block: block) }
    return (mix.left, mix.right)
}

/// The low-end measures of `ReverbLowEndTests`, each written out here from its definition.
package enum ReverbSpectrum {
    /// In-place iterative radix-2 FFT of `re`/`im` (count a power of two), forward (e^{−iωn}) or inverse (unscaled).
    package static func fft(_ re: inout [Double], _ im: inout [Double], inverse: Bool = false) {
        let n = re.count
        precondition(n > 1 && n & (n - 1) == 0 && im.count == n)
        re.withUnsafeMutableBufferPointer { re in
            im.withUnsafeMutableBufferPointer { im in
                var j = 0
                for i in 1..<n {
                    var bit = n >> 1
                    while j & bit != 0 { j ^= bit; bit >>= 1 }
                    j |= bit
                    if i < j { re.swapAt(i, j); im.swapAt(i, j) }
                }
                let sign = inverse ? 1.0 : -1.0
                var length = 2
                while length <= n {
                    let half = length / 2
                    let step = sign * 2 * Double.pi / Double(length)
                    let (wr, wi) = (cos(step), sin(step))
                    var start = 0
                    while start < n {
                        var (cr, ci) = (1.0, 0.0)
                        for k in 0..<half {
                            let a = start + k, b = a + half
                            let tr = re[b] * cr - im[b] * ci, ti = re[b] * ci + im[b] * cr
                            re[b] = re[a] - tr; im[b] = im[a] - ti
                            re[a] += tr; im[a] += ti
                            // Recomputed every 64 steps so the rotation's rounding never accumulates.
                            if k & 63 == 63 {
                                (cr, ci) = (cos(step * Double(k + 1)), sin(step * Double(k + 1)))
                            } else {
                                (cr, ci) = (cr * wr - ci * wi, cr * wi + ci * wr)
                            }
                        }
                        start += length
                    }
                    length <<= 1
                }
            }
        }
    }

    /// The smallest power of two ≥ n.
    static func powerOfTwo(atLeast n: Int) -> Int {
        var p = 2
        while p < n { p <<= 1 }
        return p
    }

    /// The tail the measures look at, in frames: from 50 ms after the late reverberation should begin
    /// (pre-delay + reflections delay + late delay) for `seconds`.
    package static func tailStart(_ s: ReverbSettings, rate: Double = 48000) -> Int {
        Int(((s.preDelay + s.reflectionsDelay + s.lateReverbDelay + 0.05) * rate).rounded())
    }

    /// LF ripple, dB: the standard deviation, over the FFT bins from 50 to 300 Hz, of 10·log10 of the tail's power
    /// spectrum smoothed by a moving average 5 Hz wide (constant bandwidth). The tail is `x` from `tailStart` for
    /// `decayTime` seconds (down 60 dB by then; no window, no decay compensation: the spectrum one hears), zero-padded
    /// to a power of two of at least 2^18 (bins ≤ 0.18 Hz apart). A dense, noise-like tail's power spectrum is
    /// χ²-distributed in every bin; its 5-Hz average is far steadier, and what remains is the modal structure.
    package static func lowFrequencyRipple(_ x: [Float], settings s: ReverbSettings, rate: Double = 48000) -> Double {
        let start = tailStart(s, rate: rate)
        let end = min(x.count, start + Int(s.decayTime * rate))
        let n = powerOfTwo(atLeast: max(1 << 18, end - start))
        var re = [Double](repeating: 0, count: n), im = [Double](repeating: 0, count: n)
        for i in start..<end { re[i - start] = Double(x[i]) }
        fft(&re, &im)
        let binHz = rate / Double(n)
        let halfWidth = Int((2.5 / binHz).rounded())
        let lo = Int((50 / binHz).rounded(.up)), hi = Int((300 / binHz).rounded(.down))
        // Power with prefix sums, so each bin's 5-Hz average is one subtraction.
        var prefix = [Double](repeating: 0, count: hi + halfWidth + 2)
        for k in 0..<(hi + halfWidth + 1) { prefix[k + 1] = prefix[k] + re[k] * re[k] + im[k] * im[k] }
        let levels = (lo...hi).map { k -> Double in
            let a = k - halfWidth, b = k + halfWidth + 1
            return 10 * log10(max((prefix[b] - prefix[a]) / Double(b - a), 1e-300))
        }
        let mean = levels.reduce(0, +) / Double(levels.count)
        return (levels.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(levels.count)).squareRoot()
    }

    /// Tail autocorrelation: the largest |r(τ)| for lags τ from 5 to 100 ms, where
    /// r(τ) = Σ_c Σ_n y_c[n]·y_c[n+τ] / √(Σ_c Σ_n y_c[n]² · Σ_c Σ_n y_c[n+τ]²), summed over both channels c and the
    /// `window` frames n from `tailStart`; y is the channel (through `band` when given: ReverbMeasure's eighth-order
    /// Butterworth band) times 10^(3t/decayTime), undoing the decay so that the whole window counts. A tail that
    /// repeats itself (a comb) correlates with itself at its period; a noise-like one does not. Also returns the lag
    /// of the largest, in ms. `maxLagSeconds` widens the lags looked at; `curve` is handed every (lag, |r|).
    package static func tailAutocorrelation(_ left: [Float], _ right: [Float], settings s: ReverbSettings, window: Int,
                                            band: (Double, Double)? = nil, maxLagSeconds: Double = 0.1, rate: Double = 48000,
                                            curve: ((Int, Double) -> Void)? = nil) -> (value: Double, lagMs: Double) {
        let start = tailStart(s, rate: rate)
        let minLag = Int(0.005 * rate), maxLag = Int(maxLagSeconds * rate)
        precondition(left.count >= start + window + maxLag, "the response is too short for the window")
        let count = window + maxLag
        let n = powerOfTwo(atLeast: 2 * count)
        var products = [Double](repeating: 0, count: maxLag + 1)
        var prefix = [Double](repeating: 0, count: count + 1)
        for x in [left, right] {
            let filtered: [Double] = band.map { ReverbMeasure.band(x, low: $0.0, high: $0.1, rate: rate) } ?? x.map(Double.init)
            let y = (0..<count).map { filtered[start + $0] * pow(10, 3 * Double($0) / rate / s.decayTime) }
            // Σ a[n]·b[n+τ] for a = y[0..<window] and b = y by one FFT product, conj(A)·B.
            var ar = [Double](repeating: 0, count: n), ai = ar, br = ar, bi = ar
            for i in 0..<window { ar[i] = y[i] }
            for i in 0..<count { br[i] = y[i] }
            fft(&ar, &ai)
            fft(&br, &bi)
            for k in 0..<n {
                let r = ar[k] * br[k] + ai[k] * bi[k], i = ar[k] * bi[k] - ai[k] * br[k]
                (ar[k], ai[k]) = (r, i)
            }
            fft(&ar, &ai, inverse: true)
            for lag in 0...maxLag { products[lag] += ar[lag] / Double(n) }
            for i in 0..<count { prefix[i + 1] += y[i] * y[i] }
        }
        for i in 0..<count { prefix[i + 1] += prefix[i] }
        let e0 = prefix[window]
        var best = 0.0, bestLag = 0
        for lag in minLag...maxLag {
            let r = abs(products[lag]) / (e0 * (prefix[lag + window] - prefix[lag])).squareRoot()
            curve?(lag, r)
            if r > best { (best, bestLag) = (r, lag) }
        }
        return (best, 1000 * Double(bestLag) / rate)
    }

    /// The wet level, dB: 10·log10 of the response's energy, both channels, over all of `left`/`right`.
    package static func energyDecibels(_ left: [Float], _ right: [Float]) -> Double {
        var e = 0.0
        for v in left { e += Double(v) * Double(v) }
        for v in right { e += Double(v) * Double(v) }
        return 10 * log10(e)
    }
}
