import Foundation

/// Immutable audio decoded into memory, shared by every track and effect that plays it.
///
/// A `Sound` knows its format and nothing about playback. Its samples stay at a fixed address for its whole
/// life, so the render side can read them through raw pointers; the engine keeps a `Sound` alive while any
/// voice may still read it, so dropping your reference while it plays is safe.
public final class Sound: @unchecked Sendable {
    /// How a sound in memory holds its samples.
    public enum Storage: Sendable, Equatable {
        /// 32-bit float, as decoded.
        case float32
        /// 16-bit integers, half the memory: a file of 16-bit (or 8-bit) PCM keeps its own samples; voices convert
        /// them while mixing (×2⁻¹⁵, exact), with the same bits out as the Float copy would give.
        case int16
    }

    /// How a sound loaded from a file should be held.
    public enum StoragePreference: Sendable, Equatable {
        /// In the file's own sample format when voices can mix it directly (16- and 8-bit PCM as `int16`),
        /// else as Float.
        case compact
        /// Decoded ahead to Float, whatever the file holds (more memory; no conversion while mixing).
        case float32
    }

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

    /// Planar: channel 0's frames, then channel 1's. Never written after `init`. (Four zeros for a streamed sound
    /// or one stored as 16-bit.)
    private let samples: UnsafeMutablePointer<Float>
    /// Planar 16-bit samples of an `int16` sound, else nil.
    private let pcm16: UnsafeMutablePointer<Int16>?
    /// How the samples are held (`float32` for streamed and live sounds, which hold none).
    public var storage: Storage { pcm16 == nil ? .float32 : .int16 }
    /// Bytes of samples this sound holds in memory.
    public var sampleBytes: Int {
        isStreamed ? 0 : channelCount * frameCount * (pcm16 == nil ? MemoryLayout<Float>.size : MemoryLayout<Int16>.size)
    }
    /// A Float copy of an `int16` sound, made the first time a pitch-preserving voice needs one (`TimeStretch`
    /// reads Float), then kept for the sound's life.
    private let floatCopy = FloatCopy()

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
        pcm16 = nil
        samples = .allocate(capacity: 4)
        samples.initialize(repeating: 0, count: 4)
    }

    /// Takes decoded audio (mono or stereo) into engine memory.
    public convenience init(_ audio: DecodedAudio, name: String) throws(EngineError) {
        try self.init(audio, name: name, loopPoints: nil)
    }

    /// Takes decoded audio into engine memory, with loop points (ignored unless 0 ≤ start < end ≤ frameCount),
    /// as Float.
    public convenience init(_ audio: DecodedAudio, name: String, loopPoints: (start: Int, end: Int)?) throws(EngineError) {
        try self.init(audio, name: name, loopPoints: loopPoints, storage: .float32)
    }

    /// Takes decoded audio into engine memory; `.compact` keeps it as 16-bit when every sample is a 16-bit value
    /// (k / 32768, as 16- and 8-bit PCM decode), losslessly.
    public init(_ audio: DecodedAudio, name: String, loopPoints: (start: Int, end: Int)?,
                storage preference: StoragePreference) throws(EngineError) {
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
        if preference == .compact, let compact = Self.int16(audio) {
            pcm16 = compact
            samples = .allocate(capacity: 4)
            samples.initialize(repeating: 0, count: 4)
            return
        }
        pcm16 = nil
        samples = .allocate(capacity: max(1, channelCount * frameCount))
        for c in 0..<channelCount {
            audio.channels[c].withUnsafeBufferPointer { src in
                if let base = src.baseAddress {
                    (samples + c * frameCount).initialize(from: base, count: frameCount)
                }
            }
        }
    }

    /// The samples as planar 16-bit integers, if every one of them is exactly k / 32768 (else nil).
    private static func int16(_ audio: DecodedAudio) -> UnsafeMutablePointer<Int16>? {
        let frames = audio.frameCount, n = audio.channelCount * frames
        guard n > 0 else { return nil }
        let out = UnsafeMutablePointer<Int16>.allocate(capacity: n)
        for c in 0..<audio.channelCount {
            let ok = audio.channels[c].withUnsafeBufferPointer { src -> Bool in
                let dst = out + c * frames
                for i in 0..<frames {
                    let scaled = src[i] * 32768
                    guard scaled >= -32768, scaled <= 32767, scaled == scaled.rounded(.towardZero) else { return false }
                    dst[i] = Int16(scaled)
                }
                return true
            }
            if !ok {
                out.deallocate()
                return nil
            }
        }
        return out
    }

    /// Decodes the file at `path` (any format `AudioFile` reads) into memory.
    public convenience init(contentsOf path: String, storage: StoragePreference = .compact) throws(EngineError) {
        let bytes: [UInt8]
        do { bytes = try FileBytes.read(path: path) } catch { throw .file(error) }
        try self.init(bytes: bytes, name: path, storage: storage)
    }

    /// Decodes a whole file held in memory (any format `AudioFile` reads), with its loop points; `name` stands
    /// for the file in messages. Every way of loading a sound into memory ends here.
    public convenience init(bytes: [UInt8], name: String, storage: StoragePreference = .compact) throws(EngineError) {
        let audio: DecodedAudio
        do {
            audio = try AudioFile.decode(bytes: bytes, name: name)
        } catch {
            throw .file(error)
        }
        try self.init(audio, name: name, loopPoints: FileLoopPoints.read(.memory(bytes), path: name), storage: storage)
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
        pcm16 = nil
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

    deinit {
        samples.deallocate()
        pcm16?.deallocate()
        floatCopy.free()
    }

    /// Sample `frame` of `channel`, for tests and tools (not for the hot path).
    public func sample(channel: Int, frame: Int) -> Float {
        precondition(!isStreamed, "a streamed sound has no samples in memory")
        precondition(channel >= 0 && channel < channelCount && frame >= 0 && frame < frameCount)
        if let pcm16 { return Float(pcm16[channel * frameCount + frame]) * 0x1p-15 }
        return samples[channel * frameCount + frame]
    }

    var voiceSource: VoiceSource {
        let left = UnsafePointer(samples)
        let right = channelCount == 2 && !isStreamed && pcm16 == nil ? UnsafePointer(samples + frameCount) : left
        return VoiceSource(left: left, right: right, channelCount: channelCount,
                           frameCount: live != nil ? LiveReader.unboundedLength : frameCount, sampleRate: sampleRate,
                           pcm16: pcm16.map { UnsafePointer($0) })
    }

    /// The source a pitch-preserving voice reads: Float samples (for an `int16` sound, its Float copy).
    var floatVoiceSource: VoiceSource {
        guard let pcm16 else { return voiceSource }
        let copy = floatCopy.make(from: pcm16, count: channelCount * frameCount)
        let right = channelCount == 2 ? UnsafePointer(copy + frameCount) : UnsafePointer(copy)
        return VoiceSource(left: UnsafePointer(copy), right: right, channelCount: channelCount, frameCount: frameCount,
                           sampleRate: sampleRate)
    }
}

/// The Float copy of an `int16` sound for pitch-preserving voices: made once, under a lock, on the control side.
final class FloatCopy: @unchecked Sendable {
    private let lock = NSLock()
    private var samples: UnsafeMutablePointer<Float>?

    func make(from pcm: UnsafePointer<Int16>, count: Int) -> UnsafeMutablePointer<Float> {
        lock.lock()
        defer { lock.unlock() }
        if let samples { return samples }
        let made = UnsafeMutablePointer<Float>.allocate(capacity: max(count, 1))
        for i in 0..<count { made[i] = Float(pcm[i]) * 0x1p-15 }
        samples = made
        return made
    }

    func free() { samples?.deallocate() }
}
