/// Immutable audio decoded into memory, shared by every track and effect that plays it.
///
/// A `Sound` knows its format and nothing about playback. Its samples stay at a fixed address for its whole
/// life, so the render side can read them through raw pointers; the engine keeps a `Sound` alive while any
/// voice may still read it, so dropping your reference while it plays is safe.
public final class Sound: @unchecked Sendable {
    /// Where the sound came from (a file path, or a name you gave), used in messages.
    public let name: String
    /// The sound's own sample rate in Hz (a decoded file's rate); voices resample it to the engine's rate as they play.
    public let sampleRate: Double
    /// 1 (mono) or 2 (stereo).
    public let channelCount: Int
    /// Length in frames at `sampleRate`.
    public let frameCount: Int
    /// Length in seconds (`frameCount / sampleRate`), at normal rate.
    public var duration: Double { Double(frameCount) / sampleRate }

    /// Planar: channel 0's frames, then channel 1's. Never written after `init`. (Four zeros for a streamed sound.)
    private let samples: UnsafeMutablePointer<Float>

    /// The file a streamed sound reads while it plays, or nil for a sound decoded into memory.
    public let stream: StreamFile?
    /// True for a sound made with `init(streamingContentsOf:)`: tracks read it from disk while playing.
    public var isStreamed: Bool { stream != nil }
    /// The file's loop points in frames (start, end exclusive), read from a WAV `smpl` chunk's first loop when
    /// the file has one that lies inside the sound; nil otherwise. Tracks playing the sound start with it as
    /// their loop region (`Track.setLoopRegion` overrides it, `clearLoopRegion` drops it).
    public let loopPoints: (start: Int, end: Int)?

    /// A streamed sound: only the header is read now; each track that plays it decodes a little ahead of
    /// playback on the engine's stream loader, holding about `Engine.Configuration.streamBufferDuration` of audio.
    /// Streams WAV, AIFF, CAF/AIFC with PCM or float samples, FLAC, Ogg Vorbis, Apple IMA4, and MP3 with a
    /// LAME/Xing tag (see `StreamFile`).
    /// Tracks only: one-shot effects need a sound in memory.
    public convenience init(streamingContentsOf path: String) throws(EngineError) {
        let file: StreamFile
        do { file = try StreamFile(path: path) } catch { throw .file(error) }
        try self.init(streaming: file)
    }

    /// A streamed sound on a file whose header was read already.
    public init(streaming file: StreamFile) throws(EngineError) {
        guard file.sampleRate >= 1000, file.sampleRate <= 768_000 else {
            throw .invalidParameter(name: "sampleRate of \(file.path)", value: file.sampleRate, expected: "1000…768000")
        }
        name = file.path
        sampleRate = file.sampleRate
        channelCount = file.channelCount
        frameCount = file.frameCount
        stream = file
        loopPoints = nil
        samples = .allocate(capacity: 4)
        samples.initialize(repeating: 0, count: 4)
    }

    /// Takes decoded audio (mono or stereo) into engine memory.
    public convenience init(_ audio: DecodedAudio, name: String) throws(EngineError) {
        try self.init(audio, name: name, loopPoints: nil)
    }

    /// Takes decoded audio into engine memory, with loop points (ignored unless 0 ≤ start < end ≤ frameCount).
    public init(_ audio: DecodedAudio, name: String, loopPoints: (start: Int, end: Int)?) throws(EngineError) {
        guard audio.channelCount == 1 || audio.channelCount == 2 else {
            throw .unsupportedChannelCount(sound: name, channels: audio.channelCount)
        }
        guard audio.sampleRate.isFinite, audio.sampleRate >= 1000, audio.sampleRate <= 768_000 else {
            throw .invalidParameter(name: "sampleRate of \(name)", value: audio.sampleRate, expected: "1000…768000")
        }
        self.name = name
        stream = nil
        if let l = loopPoints, l.start >= 0, l.start < l.end, l.end <= audio.frameCount {
            self.loopPoints = l
        } else {
            self.loopPoints = nil
        }
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
        let bytes: [UInt8]
        do { bytes = try FileBytes.read(path: path) } catch { throw .file(error) }
        try self.init(bytes: bytes, name: path)
    }

    /// Decodes a whole file held in memory (any format `AudioFile` reads), with its loop points; `name` stands
    /// for the file in messages. Every way of loading a sound into memory ends here.
    public convenience init(bytes: [UInt8], name: String) throws(EngineError) {
        let audio: DecodedAudio
        do {
            audio = try AudioFile.decode(bytes: bytes, name: name)
        } catch {
            throw .file(error)
        }
        try self.init(audio, name: name, loopPoints: FileLoopPoints.read(.memory(bytes), path: name))
    }

    deinit { samples.deallocate() }

    /// Sample `frame` of `channel`, for tests and tools (not for the hot path).
    public func sample(channel: Int, frame: Int) -> Float {
        precondition(stream == nil, "a streamed sound has no samples in memory")
        precondition(channel >= 0 && channel < channelCount && frame >= 0 && frame < frameCount)
        return samples[channel * frameCount + frame]
    }

    var voiceSource: VoiceSource {
        let left = UnsafePointer(samples)
        let right = channelCount == 2 && stream == nil ? UnsafePointer(samples + frameCount) : left
        return VoiceSource(left: left, right: right, channelCount: channelCount, frameCount: frameCount,
                           sampleRate: sampleRate)
    }
}
