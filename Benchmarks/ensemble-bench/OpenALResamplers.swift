import COpenAL
import Foundation

/// OpenAL Soft's resamplers by name (`AL_SOFT_source_resampler`), and one source's output for a quality
/// measurement: a float32 mono sine at its own rate, played through the loopback device at 48 kHz.
extension OpenALPeer {
    typealias GetStringi = @convention(c) (ALenum, ALsizei) -> UnsafePointer<ALchar>?

    /// A loopback device and context at 48 kHz stereo float, current while `body` runs.
    private static func withContext<T>(sources: Int, _ body: (Functions, OpaquePointer) -> T?) -> T? {
        guard let fn = functions, let device = fn.open(nil) else { return nil }
        defer { alcCloseDevice(device) }
        let attributes: [ALCint] = [ALC_FORMAT_CHANNELS_SOFT, ALC_STEREO_SOFT, ALC_FORMAT_TYPE_SOFT, ALC_FLOAT_SOFT,
                                    ALC_FREQUENCY, 48000, ALC_MONO_SOURCES, ALCint(sources), 0]
        guard let context = alcCreateContext(device, attributes) else { return nil }
        defer { alcDestroyContext(context) }
        alcMakeContextCurrent(context)
        defer { alcMakeContextCurrent(nil) }
        return body(fn, device)
    }

    /// The names of the resamplers, by index (`alGetStringiSOFT(AL_RESAMPLER_NAME_SOFT, i)`); empty without the
    /// extension.
    static func resamplerNames() -> [String] {
        withContext(sources: 1) { _, _ -> [String]? in
            guard alIsExtensionPresent("AL_SOFT_source_resampler") != 0,
                  let p = alGetProcAddress("alGetStringiSOFT") else { return nil }
            let getStringi = unsafeBitCast(p, to: GetStringi.self)
            let count = alGetInteger(AL_NUM_RESAMPLERS_SOFT)
            return (0..<Int(count)).map { i in getStringi(AL_RESAMPLER_NAME_SOFT, ALsizei(i)).map { String(cString: $0) } ?? "#\(i)" }
        } ?? []
    }

    /// `frames` output frames (left channel) of `samples` at `rate` Hz played once at `pitch` by one centred source
    /// with resampler `resamplerIndex`, or nil when OpenAL is unusable.
    static func renderMono(_ samples: [Float], rate: Int, resamplerIndex: Int, frames: Int, pitch: Float = 1) -> [Float]? {
        withContext(sources: 1) { fn, device -> [Float]? in
            var buffer: ALuint = 0
            alGenBuffers(1, &buffer)
            defer { alDeleteBuffers(1, &buffer) }
            samples.withUnsafeBytes { bytes in
                alBufferData(buffer, AL_FORMAT_MONO_FLOAT32, bytes.baseAddress, ALsizei(bytes.count), ALsizei(rate))
            }
            var source: ALuint = 0
            alGenSources(1, &source)
            defer { alDeleteSources(1, &source) }
            alSourcei(source, AL_BUFFER, ALint(buffer))
            alSourcei(source, AL_SOURCE_RELATIVE, AL_TRUE)
            alSource3f(source, AL_POSITION, 0, 0, -1)
            alSourcei(source, AL_SOURCE_RESAMPLER_SOFT, ALint(resamplerIndex))
            alSourcef(source, AL_PITCH, pitch)
            guard alGetError() == AL_NO_ERROR else { return nil }
            alSourcePlay(source)
            var out = [Float](repeating: 0, count: 2 * frames)
            out.withUnsafeMutableBytes { fn.render(device, $0.baseAddress, ALCsizei(frames)) }
            alSourceStop(source)
            return stride(from: 0, to: 2 * frames, by: 2).map { out[$0] }
        }
    }
}
