// Test thread only: OpenAL Soft's resamplers (AL_SOFT_source_resampler) as references for Ensemble's, rendered
// through the loopback device, and the measures both are given (tone level, image bands of noise).
import COpenAL
import Foundation
import XCTest
import EnsembleOutput

/// One mono float32 sound played once by one centred source at `pitch` with a named OpenAL Soft resampler (1.19:
/// "Nearest", "Linear", "Cubic", "11th order Sinc" = bsinc12, "23rd order Sinc" = bsinc24), on a 48 kHz stereo
/// float loopback device (no HRTF, no limiter). The left channel, from the source's start.
package enum OpenALResamplerPeer {
    private typealias GetStringi = @convention(c) (ALenum, ALsizei) -> UnsafePointer<ALchar>?

    /// `frames` output frames of `samples` (at `sampleRate`) played at `pitch` through the resampler whose name
    /// contains `resampler`; skips the test when OpenAL Soft lacks the loopback device, the extension or the name.
    package static func render(_ samples: [Float], sampleRate: Int, pitch: Float, resampler: String,
                               frames: Int) throws -> [Float] {
        _ = try OpenALTestConfig.install()
        let device: OpenALDevice
        do { device = try OpenALDevice.loopback(sampleRate: 48000) } catch {
            throw XCTSkip("no OpenAL Soft loopback device: \(error)")
        }
        defer { device.close() }
        _ = device.makeCurrent()
        guard alIsExtensionPresent("AL_SOFT_source_resampler") != 0, let p = alGetProcAddress("alGetStringiSOFT"),
              let renderSamples = ALExtensions.renderSamples else {
            throw XCTSkip("OpenAL Soft without AL_SOFT_source_resampler")
        }
        let getStringi = unsafeBitCast(p, to: GetStringi.self)
        let names = (0..<Int(alGetInteger(AL_NUM_RESAMPLERS_SOFT))).map { i in
            getStringi(AL_RESAMPLER_NAME_SOFT, ALsizei(i)).map { String(cString: $0) } ?? ""
        }
        guard let index = names.firstIndex(where: { $0.contains(resampler) }) else {
            throw XCTSkip("OpenAL Soft has no resampler named \(resampler): \(names)")
        }
        var buffer: ALuint = 0, source: ALuint = 0
        alGenBuffers(1, &buffer)
        defer { alDeleteBuffers(1, &buffer) }
        samples.withUnsafeBytes { bytes in
            alBufferData(buffer, AL_FORMAT_MONO_FLOAT32, bytes.baseAddress, ALsizei(bytes.count), ALsizei(sampleRate))
        }
        alGenSources(1, &source)
        defer {
            alSourceStop(source)
            alDeleteSources(1, &source)
        }
        alSourcei(source, AL_BUFFER, ALint(buffer))
        alSourcei(source, AL_SOURCE_RELATIVE, AL_TRUE)
        alSource3f(source, AL_POSITION, 0, 0, -1)
        alSourcef(source, AL_PITCH, pitch)
        alSourcei(source, AL_SOURCE_RESAMPLER_SOFT, ALint(index))
        guard alGetError() == AL_NO_ERROR else { throw XCTSkip("OpenAL Soft refused the source's properties") }
        alSourcePlay(source)
        var out = [Float](repeating: 0, count: 2 * frames)
        out.withUnsafeMutableBufferPointer { o in
            var done = 0
            while done < frames {
                let n = min(1024, frames - done)
                renderSamples(device.device, o.baseAddress! + 2 * done, ALCsizei(n))
                done += n
            }
        }
        return stride(from: 0, to: 2 * frames, by: 2).map { out[$0] }
    }
}

/// Resampler measures shared by Ensemble's output and OpenAL Soft's (FFT under the 7-term Blackman-Harris window).
package enum ResamplerMeasure {
    /// The level of the tone at `frequency` in `x` (the power of its window lobe, ±10 bins) against a sine of
    /// `amplitude`, dB: a gain that does not depend on where between bins the tone falls or on a step error of
    /// a few 1e-5 (OpenAL Soft's 12-bit fraction). `x.count` must be a power of two.
    package static func toneGain(_ x: [Float], sampleRate: Double, frequency: Double, amplitude: Double) -> Double {
        let n = x.count
        let w = Spectrum.blackmanHarris7(n)
        var re = (0..<n).map { Double(x[$0]) * w[$0] }, im = [Double](repeating: 0, count: n)
        Spectrum.fft(&re, &im)
        let center = Int((frequency * Double(n) / sampleRate).rounded())
        var lobe = 0.0
        for k in max(center - 10, 0)...min(center + 10, n / 2) { lobe += re[k] * re[k] + im[k] * im[k] }
        let sumW2 = w.reduce(0) { $0 + $1 * $1 }
        return 10 * log10(lobe / (Double(n) * sumW2 * amplitude * amplitude / 4))
    }

    /// The worst image band of noise played slower, as `AntiImageTests` measures it: Welch's average of
    /// `x.count / 8192` segments of 8192 frames, the power density of bands of 32 bins from 0.505 of the heard
    /// source rate `heard` (the source's Nyquist as heard) to 20 kHz, against the density of 0.05…0.35 of it, dB.
    package static func worstImageBand(_ x: [Float], sampleRate: Double, heard: Double) -> Double {
        let n = 8192, segments = x.count / n
        let w = Spectrum.blackmanHarris7(n)
        var density = [Double](repeating: 0, count: n / 2 + 1)
        for s in 0..<segments {
            var re = (0..<n).map { Double(x[s * n + $0]) * w[$0] }, im = [Double](repeating: 0, count: n)
            Spectrum.fft(&re, &im)
            for k in 0..<density.count { density[k] += re[k] * re[k] + im[k] * im[k] }
        }
        let binHz = sampleRate / Double(n)
        let pass = Int(0.05 * heard / binHz)...Int(0.35 * heard / binHz)
        let reference = pass.reduce(0.0) { $0 + density[$1] } / Double(pass.count)
        var worst = -300.0
        var k = Int((0.505 * heard / binHz).rounded(.up))
        let top = min(Int(20000 / binHz), n / 2)
        while k + 32 <= top {
            let band = density[k..<(k + 32)].reduce(0, +) / 32
            worst = max(worst, 10 * log10(max(band, 1e-300) / reference))
            k += 32
        }
        return worst
    }
}
