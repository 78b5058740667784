/// Immutable audio decoded into memory, shared by every track and effect that plays it.
///
/// A `Sound` knows its format and nothing about playback. Its samples stay at a fixed address for its whole
/// life, so the render side can read them through raw pointers; the engine keeps a `Sound` alive while any
/// voice may still read it, so dropping your reference while it plays is safe.
public final class Sound: @unchecked Sendable {
    /// Where the sound came from (a file path, or a name you gave), used in messages.
    public let name: String
    public let sampleRate: Double
    /// 1 (mono) or 2 (stereo).
    public let channelCount: Int
    public let frameCount: Int
    public var duration: Double { Double(frameCount) / sampleRate }

    /// Planar: channel 0's frames, then channel 1's. Never written after `init`.
    private let samples: UnsafeMutablePointer<Float>

    /// Takes decoded audio (mono or stereo) into engine memory.
    public init(_ audio: DecodedAudio, name: String) throws(EngineError) {
        guard audio.channelCount == 1 || audio.channelCount == 2 else {
            throw .unsupportedChannelCount(sound: name, channels: audio.channelCount)
        }
        guard audio.sampleRate.isFinite, audio.sampleRate >= 1000, audio.sampleRate <= 768_000 else {
            throw .invalidParameter(name: "sampleRate of \(name)", value: audio.sampleRate, expected: "1000…768000")
        }
        self.name = name
        sampleRate = audio.sampleRate
        channelCount = audio.channelCount
        frameCount = audio.frameCount
        samples = .allocate(capacity: max(1, channelCount * frameCount))
        for c in 0..<channelCount {
            audio.channels[c].withUnsafeBufferPointer { src in
                if let base = src.baseAddress {
                    (samples + c * frameCount).initialize(from: base, count: frameCount)
                }
            }
        }
    }

    /// Decodes the file at `path` (any format `AudioFile` reads) into memory.
    public convenience init(contentsOf path: String) throws(EngineError) {
        let audio: DecodedAudio
        do {
            audio = try AudioFile.decode(path: path)
        } catch {
            throw .file(error)
        }
        try self.init(audio, name: path)
    }

    deinit { samples.deallocate() }

    /// Sample `frame` of `channel`, for tests and tools (not for the hot path).
    public func sample(channel: Int, frame: Int) -> Float {
        precondition(channel >= 0 && channel < channelCount && frame >= 0 && frame < frameCount)
        return samples[channel * frameCount + frame]
    }

    var voiceSource: VoiceSource {
        let left = UnsafePointer(samples)
        let right = channelCount == 2 ? UnsafePointer(samples + frameCount) : left
        return VoiceSource(left: left, right: right, channelCount: channelCount, frameCount: frameCount,
                           sampleRate: sampleRate)
    }
}
