import COpenAL
import Foundation

/// OpenAL Soft's own mixer as a peer: N looping sources rendered offline through ALC_SOFT_loopback, stereo
/// float32 at 48 kHz in 1024-frame blocks. One source per voice with AL_GAIN, AL_PITCH, AL_LOOPING and a
/// position for the pan; only the render loop is timed.
enum OpenALPeer {
    typealias OpenLoopback = @convention(c) (UnsafePointer<ALCchar>?) -> OpaquePointer?
    typealias IsFormatSupported = @convention(c) (OpaquePointer?, ALCsizei, ALCenum, ALCenum) -> ALCboolean
    typealias RenderSamples = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, ALCsizei) -> Void

    struct Functions {
        let open: OpenLoopback
        let isSupported: IsFormatSupported
        let render: RenderSamples
    }

    static let functions: Functions? = {
        guard alcIsExtensionPresent(nil, "ALC_SOFT_loopback") != 0,
              let o = alcGetProcAddress(nil, "alcLoopbackOpenDeviceSOFT"),
              let s = alcGetProcAddress(nil, "alcIsRenderFormatSupportedSOFT"),
              let r = alcGetProcAddress(nil, "alcRenderSamplesSOFT") else { return nil }
        return Functions(open: unsafeBitCast(o, to: OpenLoopback.self),
                         isSupported: unsafeBitCast(s, to: IsFormatSupported.self),
                         render: unsafeBitCast(r, to: RenderSamples.self))
    }()

    enum Resampler: Int {
        case point = 0, linear = 1, cubic = 2
        var name: String { ["point", "linear", "cubic"][rawValue] }
    }

    /// Renders `seconds` of N voices; returns the wall time of the render loop, or nil when OpenAL is unusable.
    static func run(inputs: InputSet, voices n: Int, pitch: Bool, resampler: Resampler?, seconds: Double) -> Double? {
        run(inputs: inputs, voices: n, pitch: pitch, resamplerIndex: resampler?.rawValue, seconds: seconds)
    }

    /// The same with `AL_SOURCE_RESAMPLER_SOFT` set to resampler number `resamplerIndex` (see `resamplerNames`).
    static func run(inputs: InputSet, voices n: Int, pitch: Bool, resamplerIndex: Int?, seconds: Double) -> Double? {
        guard let fn = functions, let device = fn.open(nil) else { return nil }
        defer { alcCloseDevice(device) }
        guard fn.isSupported(device, 48000, ALCenum(ALC_STEREO_SOFT), ALCenum(ALC_FLOAT_SOFT)) != 0 else { return nil }
        let attributes: [ALCint] = [ALC_FORMAT_CHANNELS_SOFT, ALC_STEREO_SOFT, ALC_FORMAT_TYPE_SOFT, ALC_FLOAT_SOFT,
                                    ALC_FREQUENCY, 48000, ALC_MONO_SOURCES, ALCint(n), ALC_STEREO_SOURCES, ALCint(n), 0]
        guard let context = alcCreateContext(device, attributes) else { return nil }
        defer { alcDestroyContext(context) }
        alcMakeContextCurrent(context)
        defer { alcMakeContextCurrent(nil) }

        var buffers = [ALuint](repeating: 0, count: 16)
        alGenBuffers(16, &buffers)
        defer { alDeleteBuffers(16, buffers) }
        for k in 0..<16 {
            let stereo = k >= 8
            inputs.pcm[k].withUnsafeBytes { bytes in
                alBufferData(buffers[k], stereo ? AL_FORMAT_STEREO16 : AL_FORMAT_MONO16, bytes.baseAddress,
                             ALsizei(bytes.count), ALsizei(inputs.sampleRate))
            }
        }
        var sources = [ALuint](repeating: 0, count: n)
        alGenSources(ALsizei(n), &sources)
        guard alGetError() == AL_NO_ERROR else { return nil }
        defer {
            alSourceStopv(ALsizei(n), sources)
            alDeleteSources(ALsizei(n), sources)
        }
        for i in 0..<n {
            let s = sources[i]
            alSourcei(s, AL_BUFFER, ALint(buffers[VoiceParams.source(i)]))
            alSourcei(s, AL_LOOPING, AL_TRUE)
            alSourcef(s, AL_GAIN, VoiceParams.gain(i))
            alSourcei(s, AL_SOURCE_RELATIVE, AL_TRUE)
            let angle = VoiceParams.pan(i) * Float.pi / 2
            alSource3f(s, AL_POSITION, sin(angle), 0, -cos(angle))
            if pitch { alSourcef(s, AL_PITCH, VoiceParams.rate(i)) }
            if let resamplerIndex { alSourcei(s, AL_SOURCE_RESAMPLER_SOFT, ALint(resamplerIndex)) }
        }
        guard alGetError() == AL_NO_ERROR else { return nil }
        alSourcePlayv(ALsizei(n), sources)

        let block = 1024
        let total = Int(seconds * 48000)
        let out = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
        defer { out.deallocate() }
        let t0 = now()
        var done = 0
        while done < total {
            let k = min(block, total - done)
            fn.render(device, out, ALCsizei(k))
            done += k
        }
        return now() - t0
    }
}
