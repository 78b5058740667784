import Foundation
import EnsembleFormats
import EnsembleRender

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
        /// 16-bit integers, half the memory (16-bit PCM).
        case int16
        /// 8-bit integers, a quarter of the memory (8-bit PCM).
        case int8
        /// 24-bit integers packed in three bytes, three quarters of the memory (24-bit PCM).
        case int24
        /// Apple IMA4 packets as the file holds them (4 bits a sample) plus one byte of decoder state per packet
        /// and channel: 35 bytes for 64 frames of a channel, 0.27× the same sound as 16-bit. Voices decode the
        /// packets they read as they mix.
        case ima4
    }

    /// How a sound loaded from a file should be held.
    public enum StoragePreference: Sendable, Equatable {
        /// In the file's own sample format: 8-, 16- and 24-bit PCM as `int8`, `int16`, `int24` (the smallest that
        /// holds every sample exactly), Apple IMA4 as its packets (`ima4`), anything else (float, MP3, FLAC and
        /// Vorbis decode to Float) as Float. Voices convert while mixing, exactly: the same bits out as Float.
        case compact
        /// Decoded ahead to Float, whatever the file holds (more memory; no conversion while mixing).
        case float32
    }

    /// Where the sound came from (a file path, or a name you gave), used in messages.
    public let name: String
    /// Samples of the file that were NaN or infinite, kept as silence (`DecodedAudio.nonFiniteSamples`).
    public private(set) var nonFiniteSamples = 0
    /// The sound's own sample rate in Hz (a decoded file's rate); voices resample it to the engine's rate as they play.
    public let sampleRate: Double
    /// 1 (mono) or 2 (stereo).
    public let channelCount: Int
    /// Length in frames at `sampleRate`.
    public let frameCount: Int
    /// Length in seconds (`frameCount / sampleRate`), at normal rate.
    public var duration: Double { Double(frameCount) / sampleRate }

    /// Planar: channel 0's frames, then channel 1's. Never written after `init`. (Four zeros for a streamed sound
    /// or a compact one.)
    private let samples: UnsafeMutablePointer<Float>
    /// The samples of a sound held in its file's format, else nil.
    private let held: CompactStorage?
    /// How the samples are held (`float32` for streamed and live sounds, which hold none).
    public var storage: Storage { held?.storage ?? .float32 }
    /// Bytes of samples this sound holds in memory.
    public var sampleBytes: Int {
        isStreamed ? 0 : held?.bytes ?? channelCount * frameCount * MemoryLayout<Float>.size
    }
    /// A Float copy of a compact sound, made the first time a pitch-preserving voice needs one (`TimeStretch`
    /// reads Float), then kept for the sound's life.
    private let floatCopy = FloatCopy()

    /// The file a streamed sound reads while it plays, or nil for a sound decoded into memory.
    public let stream: StreamFile?
    /// Where a live sound's frames come from (`init(pushStream:)`, `init(pcm:)`), or nil.
    package let live: LiveFeed?
    /// The application's generator a generated sound plays (`init(generator:sampleRate:name:)`), or nil.
    package private(set) var generator: GeneratedSource?
    /// True for a sound tracks read while playing rather than from memory: streamed from a file
    /// (`init(streamingContentsOf:)`), live (`init(pushStream:)`, `init(pcm:)`) or generated (`init(generator:)`).
    public var isStreamed: Bool { stream != nil || live != nil || generator != nil }
    /// True for a live sound: a push stream, PCM or a generator from the application, played once from its start.
    public var isLive: Bool { live != nil || generator != nil }
    /// The file's loop points in frames (start, end exclusive), read from a WAV `smpl` chunk's first loop when
    /// the file has one that lies inside the sound; nil otherwise. Tracks playing the sound start with it as
    /// their loop region (`Track.setLoopRegion` overrides it, `clearLoopRegion` drops it).
    public let loopPoints: (start: Int, end: Int)?

    /// A streamed sound: only the header is read now; each track that plays it decodes a little ahead of
    /// playback on the engine's stream loader, holding about `Engine.Configuration.streamBufferDuration` of audio.
    /// Streams WAV, AIFF, CAF/AIFC with PCM or float samples, FLAC, Ogg Vorbis, Apple IMA4, and MP3
    /// (see `StreamFile`).
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
        held = nil
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

    /// Takes decoded audio into engine memory; `.compact` keeps it as 8-, 16- or 24-bit integers when every
    /// sample is such a value (k / 128, k / 32768, k / 8388608, as PCM decodes), losslessly.
    public init(_ audio: DecodedAudio, name: String, loopPoints: (start: Int, end: Int)?,
                storage preference: StoragePreference) throws(EngineError) {
        guard audio.channelCount == 1 || audio.channelCount == 2 else {
            throw .unsupportedChannelCount(sound: name, channels: audio.channelCount)
        }
        guard audio.sampleRate.isFinite, audio.sampleRate >= 1000, audio.sampleRate <= 768_000 else {
            throw .invalidParameter(name: "sampleRate of \(name)", value: audio.sampleRate, expected: "1000…768000")
        }
        self.name = name
        nonFiniteSamples = audio.nonFiniteSamples
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
        if preference == .compact, let compact = CompactStorage.linear(audio) {
            held = compact
            samples = .allocate(capacity: 4)
            samples.initialize(repeating: 0, count: 4)
            return
        }
        held = nil
        samples = .allocate(capacity: max(1, channelCount * frameCount))
        for c in 0..<channelCount {
            audio.channels[c].withUnsafeBufferPointer { src in
                if let base = src.baseAddress {
                    (samples + c * frameCount).initialize(from: base, count: frameCount)
                }
            }
        }
    }

    /// Loads the file at `path` (any format `AudioFile` reads) into memory, held as `storage` says (see
    /// `StoragePreference.compact`: by default in the file's own sample format).
    public convenience init(contentsOf path: String, storage: StoragePreference = .compact) throws(EngineError) {
        // IMA4 packets and 16-bit PCM are read straight from the file into the sound; anything else (and any file
        // that cannot be opened, whose error the read below words) is read whole first.
        if storage == .compact, !FileBytes.isSequential(path: path), let source = try? ByteSource.open(path: path) {
            let packets: CompactStorage?
            do { packets = try CompactStorage.ima4(source, name: path) } catch { throw .file(error) }
            if let packets {
                try self.init(packets: packets, name: path, sampleRate: packets.sampleRate,
                              loopPoints: FileLoopPoints.read(source, path: path))
                return
            }
            // 16-bit PCM straight from the file into 16-bit storage (no copy of the whole file, no Float decode).
            if let pcm = PCM16Reader.read(source: source, name: path) {
                try self.init(packets: CompactStorage.pcm16(pcm), name: path, sampleRate: pcm.sampleRate,
                              loopPoints: FileLoopPoints.read(source, path: path))
                return
            }
        }
        let bytes: [UInt8]
        do { bytes = try FileBytes.read(path: path) } catch { throw .file(error) }
        try self.init(bytes: bytes, name: path, storage: storage)
    }

    /// Decodes a whole file held in memory (any format `AudioFile` reads), with its loop points; `name` stands
    /// for the file in messages. Every way of loading a sound into memory ends here.
    public convenience init(bytes: [UInt8], name: String, storage: StoragePreference = .compact) throws(EngineError) {
        let loopPoints = FileLoopPoints.read(.memory(bytes), path: name)
        if storage == .compact {
            let packets: CompactStorage?
            do { packets = try CompactStorage.ima4(.memory(bytes), name: name) } catch { throw .file(error) }
            if let packets {
                try self.init(packets: packets, name: name, sampleRate: packets.sampleRate, loopPoints: loopPoints)
                return
            }
            // 16-bit PCM straight into 16-bit storage, without a Float decode to convert back.
            if let pcm = PCM16Reader.read(bytes: bytes, name: name) {
                try self.init(packets: CompactStorage.pcm16(pcm), name: name, sampleRate: pcm.sampleRate,
                              loopPoints: loopPoints)
                return
            }
        }
        let audio: DecodedAudio
        do {
            audio = try AudioFile.decode(bytes: bytes, name: name)
        } catch {
            throw .file(error)
        }
        try self.init(audio, name: name, loopPoints: loopPoints, storage: storage)
    }

    /// A sound over compact storage read straight from a file (IMA4 packets, 16-bit PCM), which it then owns.
    private init(packets: CompactStorage, name: String, sampleRate: Double,
                 loopPoints: (start: Int, end: Int)?) throws(EngineError) {
        guard sampleRate.isFinite, sampleRate >= 1000, sampleRate <= 768_000 else {
            packets.deallocate()
            throw .invalidParameter(name: "sampleRate of \(name)", value: sampleRate, expected: "1000…768000")
        }
        self.name = name
        self.sampleRate = sampleRate
        channelCount = packets.channelCount
        frameCount = packets.frameCount
        stream = nil
        live = nil
        if let l = loopPoints, l.start >= 0, l.start < l.end, l.end <= frameCount {
            self.loopPoints = l
        } else {
            self.loopPoints = nil
        }
        held = packets
        samples = .allocate(capacity: 4)
        samples.initialize(repeating: 0, count: 4)
    }

    /// A live sound over a feed whose format is known; its length is 0 until the stream ends.
    package init(live feed: LiveFeed, name: String) throws(EngineError) {
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
        held = nil
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

    /// A sound whose samples an application's generator computes on the render thread as its track plays (one
    /// track; it plays from its start, at rate 1, without loops, seeks or a fade-out, and ends when the generator
    /// says so).
    /// `sampleRate` must be the engine's (`Engine.makeTrack` throws `sampleRateMismatch` otherwise): the generator
    /// writes output frames. Throws `.invalidParameter` for a rate outside 1000…768000 Hz.
    public convenience init(generator: GeneratedSource, sampleRate: Double, name: String = "generated") throws(EngineError) {
        guard sampleRate.isFinite, sampleRate >= 1000, sampleRate <= 768_000 else {
            throw .invalidParameter(name: "sampleRate of \(name)", value: sampleRate, expected: "1000…768000")
        }
        self.init(generated: generator, sampleRate: sampleRate, name: name)
    }

    /// A generated sound, its length 0 like a live one's (it is known only when the generator ends).
    private init(generated: GeneratedSource, sampleRate: Double, name: String) {
        self.name = name
        self.sampleRate = sampleRate
        channelCount = generated.channelCount
        frameCount = 0
        stream = nil
        live = nil
        generator = generated
        loopPoints = nil
        held = nil
        samples = .allocate(capacity: 4)
        samples.initialize(repeating: 0, count: 4)
    }

    /// A sound that plays PCM the application supplies (one track, once).
    public convenience init(pcm queue: PCMQueue, name: String = "PCM queue") throws(EngineError) {
        try self.init(live: queue, name: name)
    }

    deinit {
        samples.deallocate()
        held?.deallocate()
        floatCopy.free()
    }

    /// Sample `frame` of `channel`, for tests and tools (not for the hot path).
    public func sample(channel: Int, frame: Int) -> Float {
        precondition(!isStreamed, "a streamed sound has no samples in memory")
        precondition(channel >= 0 && channel < channelCount && frame >= 0 && frame < frameCount)
        if let held { return held.sample(channel: channel, frame: frame) }
        return samples[channel * frameCount + frame]
    }

    var voiceSource: VoiceSource {
        if let generator { return generator.voiceSource(sampleRate: sampleRate) }
        let left = UnsafePointer(samples)
        let right = channelCount == 2 && !isStreamed && held == nil ? UnsafePointer(samples + frameCount) : left
        return VoiceSource(left: left, right: right, channelCount: channelCount,
                           frameCount: live != nil ? LiveReader.unboundedLength : frameCount, sampleRate: sampleRate,
                           packed: held?.packed)
    }

    /// The source a pitch-preserving voice reads: Float samples (for a compact sound, its Float copy).
    var floatVoiceSource: VoiceSource {
        guard let held else { return voiceSource }
        let copy = floatCopy.make(from: held)
        let right = channelCount == 2 ? UnsafePointer(copy + frameCount) : UnsafePointer(copy)
        return VoiceSource(left: UnsafePointer(copy), right: right, channelCount: channelCount, frameCount: frameCount,
                           sampleRate: sampleRate)
    }
}

/// The Float copy of a compact sound for pitch-preserving voices: made once, under a lock, on the control side.
final class FloatCopy: @unchecked Sendable {
    private let lock = NSLock()
    private var samples: UnsafeMutablePointer<Float>?

    func make(from compact: CompactStorage) -> UnsafeMutablePointer<Float> {
        lock.lock()
        defer { lock.unlock() }
        if let samples { return samples }
        let made = UnsafeMutablePointer<Float>.allocate(capacity: max(compact.channelCount * compact.frameCount, 1))
        compact.decode(into: made)
        samples = made
        return made
    }

    func free() { samples?.deallocate() }
}
