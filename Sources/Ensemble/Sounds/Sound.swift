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
    /// Where a live sound's frames come from (`init(pushStream:)`, `init(pcm:)`), or nil.
    let live: LiveFeed?
    /// True for a sound tracks read while playing rather than from memory: streamed from a file
    /// (`init(streamingContentsOf:)`) or live (`init(pushStream:)`, `init(pcm:)`).
    public var isStreamed: Bool { stream != nil || live != nil }
    /// True for a live sound: a push stream or PCM from the application, played once from its start.
    public var isLive: Bool { live != nil }
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
        live = nil
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
        live = nil
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

    /// A live sound over a feed whose format is known; its length is 0 until the stream ends.
    init(live feed: LiveFeed, name: String) throws(EngineError) {
        guard feed.channelCount == 1 || feed.channelCount == 2 else {
            throw .unsupportedChannelCount(sound: name, channels: feed.channelCount)
        }
        guard feed.sampleRate >= 1000, feed.sampleRate <= 768_000 else {
            throw .invalidParameter(name: "sampleRate of \(name)", value: feed.sampleRate, expected: "1000…768000")
        }
        self.name = name
        sampleRate = feed.sampleRate
        channelCount = feed.channelCount
        frameCount = 0
        stream = nil
        live = feed
        loopPoints = nil
        samples = .allocate(capacity: 4)
        samples.initialize(repeating: 0, count: 4)
    }

    /// A sound that plays a push stream as its bytes arrive (one track, once): the stream's header must have been
    /// parsed (`PushStream.isReady`), else `.invalidParameter`.
    public convenience init(pushStream: PushStream) throws(EngineError) {
        guard pushStream.isReady else {
            throw .invalidParameter(name: "PushStream \(pushStream.name) header", value: 0,
                                    expected: "append bytes until isReady (the header parsed) before making its sound")
        }
        try self.init(live: pushStream, name: pushStream.name)
    }

    /// A sound that plays PCM the application supplies (one track, once).
    public convenience init(pcm queue: PCMQueue, name: String = "PCM queue") throws(EngineError) {
        try self.init(live: queue, name: name)
    }

    deinit { samples.deallocate() }

    /// Sample `frame` of `channel`, for tests and tools (not for the hot path).
    public func sample(channel: Int, frame: Int) -> Float {
        precondition(!isStreamed, "a streamed sound has no samples in memory")
        precondition(channel >= 0 && channel < channelCount && frame >= 0 && frame < frameCount)
        return samples[channel * frameCount + frame]
    }

    var voiceSource: VoiceSource {
        let left = UnsafePointer(samples)
        let right = channelCount == 2 && !isStreamed ? UnsafePointer(samples + frameCount) : left
        return VoiceSource(left: left, right: right, channelCount: channelCount,
                           frameCount: live != nil ? LiveReader.unboundedLength : frameCount, sampleRate: sampleRate)
    }
}
