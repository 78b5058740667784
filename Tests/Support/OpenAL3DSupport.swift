// Test thread only: one 3D scene rendered by OpenAL Soft (ALC_SOFT_loopback) and by Ensemble
// (`Engine.renderOffline`), and the measurements the OpenAL3D*Tests compare (level, tone frequency, left/right
// energy). Nothing here runs on a render thread.
import COpenAL
import Foundation
import XCTest
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// One mono source, a listener and the engine-wide 3D settings, described with Ensemble's public value types
/// so that both renderers are given the very same numbers. The source plays a looping sine.
package struct Scene3D {
    /// The source (position, velocity, direction, cone, distances, rolloff, per-source distance model …).
    package var source: SpatialSource
    /// The listener (position, velocity, orientation, gain).
    package var listener = Listener()
    /// Distance model, doppler factor, speed of sound.
    package var settings = SpatialSettings()

    package init(source: SpatialSource, listener: Listener = Listener(), settings: SpatialSettings = SpatialSettings()) {
        self.source = source
        self.listener = listener
        self.settings = settings
    }
}

/// The looping test tone: 100 whole periods of a 1 kHz sine at 48 kHz (4800 frames), so the loop is seamless
/// and any window of a multiple of 48 frames holds whole periods (its RMS is the amplitude / √2 exactly).
package enum TestTone {
    package static let sampleRate = 48000
    package static let frequency = 1000.0
    package static let frames = 4800
    package static let amplitude = 0.5
    package static let samples: [Float] = (0..<frames).map {
        Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / Double(sampleRate)))
    }
}

// MARK: - OpenAL Soft

/// EFX source properties (efx.h, not in the COpenAL shim): OpenAL Soft implements them with ALC_EXT_EFX.
private let alAirAbsorptionFactor: ALenum = 0x20007 // AL_AIR_ABSORPTION_FACTOR
private let alConeOuterGainHF: ALenum = 0x20009 // AL_CONE_OUTER_GAINHF

/// OpenAL Soft (1.19) as the reference renderer: a loopback device at 48 kHz stereo float32 (no HRTF, no
/// limiter: `OpenALDevice.loopback`), one float32 mono buffer holding `TestTone`, and one source per render.
/// The scene maps field for field onto the OpenAL 1.1 calls (§4 Listener and Sources) and the extensions
/// `AL_EXT_source_distance_model` (a source's own `AL_DISTANCE_MODEL`, honoured after
/// `alEnable(AL_SOURCE_DISTANCE_MODEL)`)
/// and EFX (`AL_CONE_OUTER_GAINHF`, `AL_AIR_ABSORPTION_FACTOR`).
package final class OpenALReference {
    private let device: OpenALDevice
    private var buffer: ALuint = 0
    /// OpenAL Soft's `AL_SOURCE_RESAMPLER_SOFT` index for every source (nil: its default, linear in 1.19).
    package var resamplerIndex: Int?

    package init() throws {
        try OpenALTestConfig.install() // the process-wide configuration every in-process OpenAL test shares
        device = try OpenALDevice.loopback(sampleRate: TestTone.sampleRate)
        device.makeCurrent()
        try XCTSkipUnless(alIsExtensionPresent("AL_EXT_source_distance_model") != 0,
                          "OpenAL Soft without AL_EXT_source_distance_model")
        alGenBuffers(1, &buffer)
        TestTone.samples.withUnsafeBytes { bytes in
            alBufferData(buffer, AL_FORMAT_MONO_FLOAT32, bytes.baseAddress, ALsizei(bytes.count), ALsizei(TestTone.sampleRate))
        }
        try check("alBufferData")
    }

    deinit {
        device.makeCurrent()
        alDeleteBuffers(1, &buffer)
        device.close()
    }

    private func check(_ what: String) throws {
        let error = alGetError()
        if error != AL_NO_ERROR { throw ReferenceError.openAL(what, code: Int(error)) }
    }

    /// OpenAL's enum for a distance model (OpenAL 1.1 §3.4, `alDistanceModel`).
    package static func alModel(_ model: DistanceModel) -> ALenum {
        switch model {
        case .none: AL_NONE
        case .inverse: AL_INVERSE_DISTANCE
        case .inverseClamped: AL_INVERSE_DISTANCE_CLAMPED
        case .linear: AL_LINEAR_DISTANCE
        case .linearClamped: AL_LINEAR_DISTANCE_CLAMPED
        case .exponent: AL_EXPONENT_DISTANCE
        case .exponentClamped: AL_EXPONENT_DISTANCE_CLAMPED
        }
    }

    /// Renders `frames` frames of `scene` from the moment the source starts, interleaved stereo.
    package func render(_ scene: Scene3D, frames: Int) throws -> [Float] {
        device.makeCurrent()
        let s = scene.source, l = scene.listener
        // Context state (OpenAL 1.1 §3.4 distance model, §3.5.2 doppler).
        alDistanceModel(Self.alModel(scene.settings.distanceModel))
        alDopplerFactor(scene.settings.dopplerFactor)
        alSpeedOfSound(scene.settings.speedOfSound)
        if s.distanceModel != nil { alEnable(AL_SOURCE_DISTANCE_MODEL) } else { alDisable(AL_SOURCE_DISTANCE_MODEL) }
        // Listener (§4.2).
        alListener3f(AL_POSITION, l.position.x, l.position.y, l.position.z)
        alListener3f(AL_VELOCITY, l.velocity.x, l.velocity.y, l.velocity.z)
        var orientation: [ALfloat] = [l.at.x, l.at.y, l.at.z, l.up.x, l.up.y, l.up.z]
        alListenerfv(AL_ORIENTATION, &orientation)
        alListenerf(AL_GAIN, l.gain)
        try check("listener")

        var source: ALuint = 0
        alGenSources(1, &source)
        defer {
            alSourceStop(source)
            alDeleteSources(1, &source)
        }
        try check("alGenSources")
        alSourcei(source, AL_BUFFER, ALint(buffer))
        alSourcei(source, AL_LOOPING, AL_TRUE)
        // Source (§4.3).
        alSourcei(source, AL_SOURCE_RELATIVE, s.relative ? AL_TRUE : AL_FALSE)
        alSource3f(source, AL_POSITION, s.position.x, s.position.y, s.position.z)
        alSource3f(source, AL_VELOCITY, s.velocity.x, s.velocity.y, s.velocity.z)
        alSource3f(source, AL_DIRECTION, s.direction.x, s.direction.y, s.direction.z)
        alSourcef(source, AL_REFERENCE_DISTANCE, s.referenceDistance)
        alSourcef(source, AL_MAX_DISTANCE, s.maxDistance)
        alSourcef(source, AL_ROLLOFF_FACTOR, s.rolloff)
        alSourcef(source, AL_CONE_INNER_ANGLE, s.coneInnerAngle)
        alSourcef(source, AL_CONE_OUTER_ANGLE, s.coneOuterAngle)
        alSourcef(source, AL_CONE_OUTER_GAIN, s.coneOuterGain)
        alSourcef(source, AL_MIN_GAIN, s.minGain)
        alSourcef(source, AL_MAX_GAIN, s.maxGain)
        if s.coneOuterGainHF != 1 { alSourcef(source, alConeOuterGainHF, s.coneOuterGainHF) }
        if s.airAbsorption != 0 { alSourcef(source, alAirAbsorptionFactor, s.airAbsorption) }
        // AL_EXT_source_distance_model: the source property is AL_DISTANCE_MODEL; AL_SOURCE_DISTANCE_MODEL is only
        // the alEnable capability that makes the context honour it.
        if let model = s.distanceModel { alSourcei(source, AL_DISTANCE_MODEL, Self.alModel(model)) }
        if let resamplerIndex { alSourcei(source, AL_SOURCE_RESAMPLER_SOFT, ALint(resamplerIndex)) }
        try check("source properties")
        alSourcePlay(source)
        try check("alSourcePlay")

        var out = [Float](repeating: 0, count: 2 * frames)
        guard let renderSamples = ALExtensions.renderSamples else { throw ReferenceError.noLoopback }
        out.withUnsafeMutableBufferPointer { p in
            // In 1024-frame slices, as an application's device would pull them.
            var done = 0
            while done < frames {
                let n = min(1024, frames - done)
                renderSamples(device.device, p.baseAddress! + 2 * done, ALCsizei(n))
                done += n
            }
        }
        return out
    }

    package enum ReferenceError: Error {
        case openAL(String, code: Int)
        case noLoopback
    }
}

// MARK: - Ensemble

/// Renders `scene` through Ensemble's public API: a looping track of `TestTone` placed with `Track.setSpatial`,
/// the listener and settings with `Engine.setListener` / `setSpatialSettings`, started at frame 0 and rendered
/// with `Engine.renderOffline`. Interleaved stereo.
package func renderEnsemble(_ scene: Scene3D, frames: Int, resampler: ResamplerQuality = .sinc, blockFrames: Int = 512) throws -> [Float] {
    var c = Engine.Configuration()
    c.maxBlockFrames = 1024
    c.maxVoices = 8
    let engine = try Engine(configuration: c)
    let sound = try Sound(DecodedAudio(sampleRate: Double(TestTone.sampleRate), channels: [TestTone.samples]), name: "tone")
    let track = try engine.makeTrack(sound)
    track.resampler = resampler
    try track.setNumberOfLoops(-1)
    try engine.setSpatialSettings(scene.settings)
    try engine.setListener(scene.listener, ramp: 0)
    try track.setSpatial(scene.source)
    try track.play(at: engine.time(frame: 0))
    let out = engine.renderOffline(frames: Int64(frames), blockFrames: blockFrames)
    withExtendedLifetime(track) {}
    return out
}

// MARK: - Measurements

/// Energy per frame of each channel over `range` (frames) of an interleaved stereo signal.
package struct ChannelEnergy {
    package var left: Double
    package var right: Double

    package init(_ x: [Float], _ range: Range<Int>) {
        var l = 0.0, r = 0.0
        for i in range {
            l += Double(x[2 * i]) * Double(x[2 * i])
            r += Double(x[2 * i + 1]) * Double(x[2 * i + 1])
        }
        left = l / Double(range.count)
        right = r / Double(range.count)
    }

    /// Both channels' energy together: the level the tests compare as ratios (each renderer pans its own way, so
    /// only "level here relative to level there" of one renderer is meaningful).
    package var total: Double { left + right }
    /// The left channel's share of the energy, 0…1 (1: all left).
    package var leftShare: Double { total > 0 ? left / total : .nan }
}

/// The steady window the level tests measure: frames 2400..<7200 (50 ms after the start, past any gain glide
/// of either renderer; 100 whole periods of the tone). Level renders are `levelFrames` long.
package let levelWindow = 2400..<7200
/// Frames rendered for a level measurement.
package let levelFrames = 7200

/// Level in dB of `x`'s energy over `range` relative to `reference`'s (−∞ for silence).
package func levelRatioDB(_ x: [Float], over reference: [Float], _ range: Range<Int> = levelWindow) -> Double {
    10 * log10(ChannelEnergy(x, range).total / ChannelEnergy(reference, range).total)
}

/// 20·log10 of a gain (−∞ for 0).
package func dB(_ gain: Double) -> Double { 20 * log10(gain) }

/// The frequency of the tone in `range` of an interleaved stereo signal (both channels summed), from its
/// rising zero crossings located by linear interpolation between samples: (crossings − 1) periods between the
/// first and the last crossing. Over half a second of a ~1 kHz tone this resolves far better than 0.001 %.
package func toneFrequency(_ x: [Float], _ range: Range<Int>, sampleRate: Double = 48000) -> Double {
    var first: Double?, last = 0.0, count = 0
    var previous = Double(x[2 * range.lowerBound]) + Double(x[2 * range.lowerBound + 1])
    for i in (range.lowerBound + 1)..<range.upperBound {
        let v = Double(x[2 * i]) + Double(x[2 * i + 1])
        if previous < 0, v >= 0 {
            let t = Double(i - 1) + previous / (previous - v)
            if first == nil { first = t }
            last = t
            count += 1
        }
        previous = v
    }
    guard let first, count > 1 else { return .nan }
    return Double(count - 1) * sampleRate / (last - first)
}

// MARK: - OpenAL 1.1 specification formulas, by hand (Double)

/// The OpenAL 1.1 specification's formulas, written out in Double for the expectations of the tests.
package enum SpecFormula {
    /// Distance gain (§3.4.1–3.4.4) of `model` at `distance`, before the min/max gain clamp.
    package static func distanceGain(_ model: DistanceModel, distance d0: Double, reference ref: Double, max: Double,
                             rolloff: Double) -> Double {
        var d = d0
        switch model {
        case .inverseClamped, .linearClamped, .exponentClamped:
            d = Swift.min(Swift.max(d, ref), max)
        default: break
        }
        switch model {
        case .none: return 1
        case .inverse, .inverseClamped:
            let denominator = ref + rolloff * (d - ref)
            return denominator > 0 ? ref / denominator : .infinity
        case .linear, .linearClamped:
            return Swift.max(0, 1 - rolloff * (d - ref) / (max - ref))
        case .exponent, .exponentClamped:
            return pow(d / ref, -rolloff)
        }
    }

    /// The gain after §4.3.3's AL_MIN_GAIN / AL_MAX_GAIN clamp.
    package static func clamped(_ gain: Double, min: Double = 0, max: Double = 1) -> Double { Swift.min(Swift.max(gain, min), max) }

    /// Cone gain (§4.3.5 AL_CONE_INNER_ANGLE, AL_CONE_OUTER_ANGLE, AL_CONE_OUTER_GAIN): `angle` in degrees
    /// between the source's direction and the source-to-listener direction; the cone angles are whole apertures,
    /// so the comparison is with half of each. Linear in the angle between the two cones.
    package static func coneGain(angle: Double, inner: Double, outer: Double, outerGain: Double) -> Double {
        if angle <= inner / 2 { return 1 }
        if angle >= outer / 2 { return outerGain }
        return 1 + (outerGain - 1) * (angle - inner / 2) / (outer / 2 - inner / 2)
    }

    /// Doppler pitch factor (§3.5.2): velocities projected on the source-to-listener axis SL, clamped to SS / DF,
    /// f' = f · (SS − DF·vls) / (SS − DF·vss).
    package static func dopplerPitch(sourcePosition: Vector3, sourceVelocity: Vector3, listenerPosition: Vector3,
                             listenerVelocity: Vector3, dopplerFactor df: Double, speedOfSound ss: Double) -> Double {
        let sl = (Double(listenerPosition.x - sourcePosition.x), Double(listenerPosition.y - sourcePosition.y),
                  Double(listenerPosition.z - sourcePosition.z))
        let length = (sl.0 * sl.0 + sl.1 * sl.1 + sl.2 * sl.2).squareRoot()
        func project(_ v: Vector3) -> Double {
            (Double(v.x) * sl.0 + Double(v.y) * sl.1 + Double(v.z) * sl.2) / length
        }
        let vls = Swift.min(project(listenerVelocity), ss / df), vss = Swift.min(project(sourceVelocity), ss / df)
        return (ss - df * vls) / (ss - df * vss)
    }

    /// The pitch OpenAL Soft 1.19 actually plays for `pitch` at equal buffer and device rates: its resampler
    /// steps in fixed point with 12 fraction bits (`Step = lrintf(Pitch · 4096)`, FRACTIONBITS in alu.h), so a
    /// rate is off by up to 1/8192 (0.012 %) — well inside the 0.1 % the comparison with Ensemble allows.
    package static func openALSoftStep(_ pitch: Double) -> Double { (pitch * 4096).rounded() / 4096 }
}

/// The unit vector at `azimuth` degrees on the horizontal plane, clockwise from straight ahead (−z) seen from
/// above: 90 is to the right (+x), −90 to the left.
package func horizontalDirection(azimuth degrees: Double) -> Vector3 {
    let a = degrees * Double.pi / 180
    return Vector3(Float(sin(a)), 0, Float(-cos(a)))
}
