import COpenAL
import CSndfile
import Foundation

/// `ensemble-bench --openal-mixdown-child SECONDS PITCH OUT VOICES FILE…`: OpenAL Soft doing the whole job `ensemble render`
/// does in section 5, in a process of its own so that its wall time counts the same work: read the 16-bit WAV files
/// with libsndfile (`sf_readf_short`, as 16-bit buffers, the way an OpenAL application loads them), `alBufferData`,
/// one looping source per voice (voice i plays FILE[`VoiceParams.source(i)`] with its gain, pan and, when PITCH is 1,
/// `AL_PITCH` = its rate; OpenAL's default resampler, linear), SECONDS rendered through `ALC_SOFT_loopback` on this
/// thread in 1024-frame blocks, and a 32-bit float stereo WAV written with libsndfile.
enum OpenALMixdownChild {
    /// Runs the child; returns its exit status (0, or 1 with a message on standard error).
    static func run(_ arguments: [String]) -> Int32 {
        guard arguments.count >= 5, let seconds = Double(arguments[0]), let pitch = Int(arguments[1]),
              let voices = Int(arguments[3]) else {
            FileHandle.standardError.write(Data("usage: --openal-mixdown-child SECONDS PITCH OUT VOICES FILE…\n".utf8))
            return 2
        }
        let out = arguments[2], files = Array(arguments[4...])
        guard let fn = OpenALPeer.functions, let device = fn.open(nil) else { return fail("no loopback device") }
        defer { alcCloseDevice(device) }
        let attributes: [ALCint] = [ALC_FORMAT_CHANNELS_SOFT, ALC_STEREO_SOFT, ALC_FORMAT_TYPE_SOFT, ALC_FLOAT_SOFT,
                                    ALC_FREQUENCY, 48000, ALC_MONO_SOURCES, ALCint(voices), ALC_STEREO_SOURCES,
                                    ALCint(voices), 0]
        guard let context = alcCreateContext(device, attributes) else { return fail("no context") }
        defer { alcDestroyContext(context) }
        alcMakeContextCurrent(context)
        defer { alcMakeContextCurrent(nil) }

        var buffers = [ALuint](repeating: 0, count: files.count)
        alGenBuffers(ALsizei(files.count), &buffers)
        defer { alDeleteBuffers(ALsizei(files.count), buffers) }
        for (k, path) in files.enumerated() {
            var info = SF_INFO()
            guard let file = sf_open(path, Int32(SFM_READ), &info) else { return fail("cannot open \(path)") }
            var pcm = [Int16](repeating: 0, count: Int(info.frames) * Int(info.channels))
            let got = pcm.withUnsafeMutableBufferPointer { sf_readf_short(file, $0.baseAddress, info.frames) }
            sf_close(file)
            guard got == info.frames else { return fail("short read of \(path)") }
            pcm.withUnsafeBytes { bytes in
                alBufferData(buffers[k], info.channels == 2 ? AL_FORMAT_STEREO16 : AL_FORMAT_MONO16, bytes.baseAddress,
                             ALsizei(bytes.count), ALsizei(info.samplerate))
            }
        }
        var sources = [ALuint](repeating: 0, count: voices)
        alGenSources(ALsizei(voices), &sources)
        guard alGetError() == AL_NO_ERROR else { return fail("alGenSources") }
        for i in 0..<voices {
            let s = sources[i]
            alSourcei(s, AL_BUFFER, ALint(buffers[VoiceParams.source(i) % files.count]))
            alSourcei(s, AL_LOOPING, AL_TRUE)
            alSourcef(s, AL_GAIN, VoiceParams.gain(i))
            alSourcei(s, AL_SOURCE_RELATIVE, AL_TRUE)
            let angle = VoiceParams.pan(i) * Float.pi / 2
            alSource3f(s, AL_POSITION, sin(angle), 0, -cos(angle))
            if pitch != 0 { alSourcef(s, AL_PITCH, VoiceParams.rate(i)) }
        }
        alSourcePlayv(ALsizei(voices), sources)

        let total = Int(seconds * 48000), block = 1024
        let mix = UnsafeMutablePointer<Float>.allocate(capacity: 2 * total)
        defer { mix.deallocate() }
        var done = 0
        while done < total {
            let n = min(block, total - done)
            fn.render(device, mix + 2 * done, ALCsizei(n))
            done += n
        }
        alSourceStopv(ALsizei(voices), sources)
        alDeleteSources(ALsizei(voices), sources)

        var info = SF_INFO()
        info.samplerate = 48000
        info.channels = 2
        info.format = Int32(SF_FORMAT_WAV | SF_FORMAT_FLOAT)
        guard let file = sf_open(out, Int32(SFM_WRITE), &info) else { return fail("cannot write \(out)") }
        let wrote = sf_writef_float(file, mix, sf_count_t(total))
        sf_close(file)
        return wrote == total ? 0 : fail("short write")
    }

    private static func fail(_ message: String) -> Int32 {
        FileHandle.standardError.write(Data("openal mixdown child: \(message)\n".utf8))
        return 1
    }
}
