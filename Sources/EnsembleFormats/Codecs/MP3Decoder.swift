import CMpg123
#if canImport(Glibc)
import Glibc
#endif

/// mpg123_init must run once per process before any handle exists; a global `let` is initialised exactly
/// once, thread-safely, on first use.
private let mpg123InitResult: Int32 = mpg123_init()

/// Streaming MPEG audio decoder on libmpg123's feed API, producing interleaved 32-bit float.
///
/// Feed bytes in any chunking (`feed`), collect whatever can be decoded (`decodeAvailable`), and call
/// `finish` after the last byte. The decoded samples do not depend on how the input was chunked.
/// Gapless decoding is on: the encoder delay and padding recorded in a LAME/Xing header are trimmed, so
/// an MP3 made by LAME decodes to exactly as many frames as its source had.
public final class MP3Decoder {
    private let handle: OpaquePointer
    /// Names the stream in errors.
    public let path: String
    /// Sample rate of the stream, known once the first frame has been parsed.
    public private(set) var sampleRate: Int?
    /// Channel count of the stream (1 or 2), known once the first frame has been parsed.
    public private(set) var channelCount: Int?
    /// PCM frames handed out so far by `decodeAvailable`/`finish` (counted from the last seek target).
    public private(set) var decodedFrameCount = 0
    /// MPEG audio layer (1, 2 or 3) of the first decoded frame.
    public private(set) var layer: Int?
    /// Most samples one `decodeAvailable` call may collect before it checks `MemoryBudget` (nil: no check).
    var sampleLimit: Int?
    private var bitRateSum = 0
    private var bitRateFrames = 0

    /// Frames decoded and discarded before the target after a seek (see `init`).
    static let seekPrerollFrames = 8

    /// Creates a decoder; `path` is only used to name the stream in errors.
    public init(path: String = "<stream>") throws(AudioFileError) {
        self.path = path
        guard mpg123InitResult == MPG123_OK.rawValue else {
            throw AudioFileError(.unsupported, path: path, "libmpg123 failed to initialise")
        }
        var error: Int32 = 0
        guard let handle = mpg123_new(nil, &error) else {
            throw AudioFileError(.unsupported, path: path, "cannot create an MP3 decoder: \(String(cString: mpg123_plain_strerror(error)))")
        }
        self.handle = handle
        // Gapless removes encoder delay/padding; quiet keeps libmpg123 from writing to stderr, which would
        // break the CLI's one-line error contract.
        let flags = Int(MPG123_GAPLESS.rawValue | MPG123_QUIET.rawValue)
        var ok = mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), flags, 0) == MPG123_OK.rawValue
        // Only float output: mpg123 must not pick an integer encoding. Every rate it can produce is
        // allowed because the stream's own rate is unknown until its first header arrives.
        // After a seek, layer III needs earlier frames for its bit reservoir (up to 511 bytes back, several
        // low-rate frames) and the overlap-add state; decoding that many frames silently first makes the
        // samples after a seek identical to a straight-through decode.
        ok = ok && mpg123_param2(handle, Int32(MPG123_PREFRAMES.rawValue), Self.seekPrerollFrames, 0) == MPG123_OK.rawValue
        ok = ok && mpg123_format_none(handle) == MPG123_OK.rawValue
        var rates: UnsafePointer<Int>?
        var rateCount = 0
        mpg123_rates(&rates, &rateCount)
        if let rates {
            for i in 0..<rateCount {
                let channels = Int32(MPG123_MONO.rawValue | MPG123_STEREO.rawValue)
                ok = ok && mpg123_format(handle, rates[i], channels, Int32(MPG123_ENC_FLOAT_32.rawValue)) == MPG123_OK.rawValue
            }
        }
        ok = ok && mpg123_open_feed(handle) == MPG123_OK.rawValue
        guard ok else {
            let text = String(cString: mpg123_strerror(handle))
            mpg123_delete(handle)
            throw AudioFileError(.unsupported, path: path, "cannot configure the MP3 decoder for float output: \(text)")
        }
    }

    deinit { mpg123_delete(handle) }

    /// Queues input bytes for decoding; the bytes are copied, so the buffer may be reused at once.
    public func feed(_ bytes: UnsafeRawBufferPointer) throws(AudioFileError) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        let status = mpg123_feed(handle, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        guard status == MPG123_OK.rawValue else { throw failure("cannot queue input") }
    }

    /// Decodes every complete frame fed so far and returns the samples, interleaved.
    public func decodeAvailable() throws(AudioFileError) -> [Float] {
        var out: [Float] = []
        while true {
            var frameNumber = 0
            var audio: UnsafeMutablePointer<UInt8>?
            var byteCount = 0
            let status = mpg123_decode_frame(handle, &frameNumber, &audio, &byteCount)
            switch status {
            case MPG123_NEED_MORE.rawValue:
                return out
            case MPG123_NEW_FORMAT.rawValue:
                try adoptFormat(afterFrames: decodedFrameCount + out.count / max(channelCount ?? 1, 1))
            case MPG123_OK.rawValue:
                noteBitRate()
                guard let audio, byteCount > 0 else { continue }
                let samples = byteCount / MemoryLayout<Float>.size
                if let limit = sampleLimit, out.count + samples > limit {
                    // Refused before the array grows: a failed allocation would trap.
                    try MemoryBudget.requireRoom(fileBytes: 0, decodedSamples: out.count + samples, path: path)
                    sampleLimit = out.count + samples + limit
                }
                audio.withMemoryRebound(to: Float.self, capacity: samples) { floats in
                    out.append(contentsOf: UnsafeBufferPointer(start: floats, count: samples))
                }
                let channels = max(channelCount ?? 1, 1)
                decodedFrameCount += samples / channels
            case MPG123_DONE.rawValue:
                return out
            default:
                throw failure("decoding failed")
            }
        }
    }

    /// Decodes what remains after the last `feed`. Throws `.corrupt` if no MPEG audio was ever found.
    public func finish() throws(AudioFileError) -> [Float] {
        let rest = try decodeAvailable()
        guard sampleRate != nil else {
            throw AudioFileError(.corrupt, path: path, "no decodable MPEG audio frames found")
        }
        return rest
    }

    /// Average bit rate (bits per second) over the frames decoded so far; exact for VBR because every
    /// MPEG frame covers the same duration, so the mean of per-frame rates is the overall rate.
    public var averageBitRate: Int? {
        bitRateFrames > 0 ? bitRateSum * 1000 / bitRateFrames : nil
    }

    /// Prepares to continue decoding at PCM frame `frame` (in gapless terms: frame 0 is the first real
    /// sample). Returns the byte offset in the original input from which the caller must feed next; any
    /// input already queued is discarded. Exactness needs libmpg123 to know where frames start: either
    /// from having parsed the stream up to there (its frame index), from `frameIndex` (the byte offset of every
    /// MPEG frame, as `MP3StreamDecoder.countFrames` finds them: exact anywhere), or from a Xing table of
    /// contents, which is only approximate.
    public func seek(toFrame frame: Int, frameIndex: [Int]? = nil) throws(AudioFileError) -> Int {
        guard frame >= 0 else {
            throw AudioFileError(.unsupported, path: path, "cannot seek to negative frame \(frame)")
        }
        var inputOffset = 0
        if var index = frameIndex, !index.isEmpty {
            // libmpg123 copies the table; with every frame in it, the seek is exact however far the stream has been
            // parsed (without it, an untagged file's far seek is a guess from the bit rate).
            guard mpg123_set_index(handle, &index, 1, index.count) == MPG123_OK.rawValue else {
                throw failure("cannot set the frame index")
            }
        }
        let reached = mpg123_feedseek(handle, frame, SEEK_SET, &inputOffset)
        guard reached >= 0, inputOffset >= 0 else { throw failure("seek to frame \(frame) failed") }
        decodedFrameCount = reached
        return inputOffset
    }

    /// Total PCM frames of the stream if libmpg123 knows it (from a Xing/LAME header), with gapless trimming.
    public var knownLength: Int? {
        let n = mpg123_length(handle)
        return n >= 0 ? n : nil
    }

    private func adoptFormat(afterFrames produced: Int) throws(AudioFileError) {
        var rate = 0
        var channels: Int32 = 0
        var encoding: Int32 = 0
        guard mpg123_getformat(handle, &rate, &channels, &encoding) == MPG123_OK.rawValue else {
            throw failure("cannot read the stream format")
        }
        guard encoding == Int32(MPG123_ENC_FLOAT_32.rawValue) else {
            throw AudioFileError(.unsupported, path: path, "libmpg123 cannot produce float output for this stream")
        }
        guard rate > 0, channels == 1 || channels == 2 else {
            throw AudioFileError(.corrupt, path: path, "stream reports \(rate) Hz, \(channels) channels")
        }
        // Planar output needs one format for the whole file; concatenated streams that switch are refused.
        if let sampleRate, let channelCount, produced > 0, sampleRate != rate || channelCount != Int(channels) {
            throw AudioFileError(.unsupported, path: path,
                                 "stream changes format mid-file (\(sampleRate) Hz × \(channelCount) → \(rate) Hz × \(channels))")
        }
        sampleRate = rate
        channelCount = Int(channels)
    }

    private func noteBitRate() {
        var frameInfo = mpg123_frameinfo2()
        if mpg123_info2(handle, &frameInfo) == MPG123_OK.rawValue, frameInfo.bitrate > 0 {
            bitRateSum += Int(frameInfo.bitrate)
            bitRateFrames += 1
            if layer == nil { layer = Int(frameInfo.layer) }
        }
    }

    private func failure(_ what: String) -> AudioFileError {
        let text = String(cString: mpg123_strerror(handle))
        return AudioFileError(.corrupt, path: path, "\(what): \(text)")
    }
}

extension MP3Decoder {
    /// Decodes a whole in-memory MP3 file.
    package static func decode(bytes: [UInt8], path: String) throws(AudioFileError) -> (audio: DecodedAudio, bitRate: Int?, layer: Int?) {
        let decoder = try MP3Decoder(path: path)
        decoder.sampleLimit = MemoryBudget.available() / (2 * MemoryLayout<Float>.size)
        let result = bytes.withUnsafeBytes { (raw) -> Result<[Float], AudioFileError> in
            do throws(AudioFileError) {
                try decoder.feed(raw)
                var samples = try decoder.decodeAvailable()
                samples += try decoder.finish()
                return .success(samples)
            } catch {
                return .failure(error)
            }
        }
        let samples = try result.get()
        guard let rate = decoder.sampleRate, let channels = decoder.channelCount else {
            throw AudioFileError(.corrupt, path: path, "no decodable MPEG audio frames found")
        }
        let audio = DecodedAudio(sampleRate: Double(rate), interleaved: samples, channelCount: channels)
        return (audio, decoder.averageBitRate, decoder.layer)
    }

    /// Reports an MP3's format and exact length. libmpg123 cannot scan a stream in feed mode, and a Xing
    /// header's frame count is missing from many CBR files, so this decodes the file and counts: exact,
    /// and cheap for files this engine loads.
    package static func info(bytes: [UInt8], path: String) throws(AudioFileError) -> AudioFileInfo {
        let (audio, bitRate, layer) = try decode(bytes: bytes, path: path)
        let codec: String
        switch layer {
        case 1: codec = "mp1"
        case 2: codec = "mp2"
        default: codec = "mp3"
        }
        return AudioFileInfo(container: AudioContainer.mp3.infoName, codec: codec, sampleRate: audio.sampleRate,
                             channelCount: audio.channelCount, frameCount: audio.frameCount, bitRate: bitRate)
    }
}
