// Loader thread: opened, seeked and read by the stream loader only (`probe` runs on the control side).
#if canImport(Glibc)
import Glibc
#endif

/// MP3 streamed through libmpg123's feed API (`MP3Decoder`, gapless): the file is fed 16 kB at a time and the
/// decoded frames are handed out as the loader asks.
///
/// Seeking: forward by up to `decodeForwardLimit` frames, and to frame 0 (every loop seam and every start
/// without offset), decodes straight through, so the samples are exactly those of the in-memory decode. Any
/// other seek uses libmpg123's own seek (`mpg123_feedseek`, gapless-aware, with 8 preroll frames for the bit
/// reservoir): sample-accurate in position, from its frame index once the file has been parsed that far, else
/// from the Xing table of contents; the samples then match the in-memory decode to within 1e-6 (the synthesis
/// filter's phase can round differently), rather than bit for bit.
package final class MP3StreamDecoder: StreamDecoder {
    /// Frames decoded and dropped rather than seeking (10 s at 48 kHz): cheap, and exact.
    static let decodeForwardLimit = 480_000
    static let feedBytes = 16 * 1024

    private let source: ByteSource
    private let path: String
    private let channelCount: Int
    private var decoder: MP3Decoder
    private var inputOffset = 0
    private var pending: [Float] = []
    private var pendingStart = 0
    /// File frame of `pending[pendingStart]`.
    private var position = 0
    private var finished = false
    private var chunk = [UInt8](repeating: 0, count: MP3StreamDecoder.feedBytes)
    /// Every MPEG frame's byte offset, for a file without a Xing table (`MP3Probe.frameOffsets`).
    private let frameOffsets: [Int]?

    /// A decoder reading `source` (its own open file, or bytes shared by every stream of the sound); `path` names it.
    package init(source: ByteSource, path: String, channelCount: Int, frameOffsets: [Int]? = nil) throws(AudioFileError) {
        // The throwing call first: a class init that throws after storing properties leaked them.
        decoder = try MP3Decoder(path: path)
        self.source = source
        self.path = path
        self.channelCount = channelCount
        self.frameOffsets = frameOffsets
    }

    private func restart() throws(AudioFileError) {
        decoder = try MP3Decoder(path: path)
        inputOffset = 0
        pending = []
        pendingStart = 0
        position = 0
        finished = false
    }

    private var available: Int { (pending.count - pendingStart) / channelCount }

    /// Feeds the next piece of the file and collects what decodes; at the end, finishes the decoder.
    private func fill() throws(AudioFileError) {
        if pendingStart > 0 {
            pending.removeFirst(pendingStart)
            pendingStart = 0
        }
        let source = self.source, path = self.path, offset = inputOffset
        let n = try chunk.withUnsafeMutableBytes { raw -> Result<Int, AudioFileError> in
            do throws(AudioFileError) { return .success(try source.read(at: offset, into: raw, path: path)) } catch { return .failure(error) }
        }.get()
        if n == 0 {
            pending += try decoder.finish()
            finished = true
            return
        }
        inputOffset += n
        let result = chunk.withUnsafeBytes { raw -> Result<Void, AudioFileError> in
            do throws(AudioFileError) { try decoder.feed(UnsafeRawBufferPointer(rebasing: raw[0..<n])) } catch { return .failure(error) }
            return .success(())
        }
        try result.get()
        pending += try decoder.decodeAvailable()
    }

    package func seek(toFrame frame: Int) throws(AudioFileError) {
        if frame == position { return }
        if frame == 0 {
            try restart()
            return
        }
        if frame > position && frame - position <= Self.decodeForwardLimit {
            while position < frame {
                if available == 0 {
                    if finished { throw AudioFileError(.truncated, path: path, "cannot reach frame \(frame) while streaming") }
                    try fill()
                    continue
                }
                let skip = min(available, frame - position)
                pendingStart += skip * channelCount
                position += skip
            }
            return
        }
        // libmpg123 turns a sample into a frame with the stream's frame size, which it knows once it has parsed a
        // header: a fresh decoder (a track starting far into the file) is fed its first bytes first.
        while decoder.sampleRate == nil && !finished { try fill() }
        let offset = try decoder.seek(toFrame: frame, frameIndex: frameOffsets)
        inputOffset = offset
        pending = []
        pendingStart = 0
        position = frame
        finished = false
    }

    package func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileError) -> Int {
        while available < frames && !finished { try fill() }
        let n = min(frames, available)
        let c = channelCount
        pending.withUnsafeBufferPointer { p in
            for i in 0..<(n * c) { buffer[i] = p[pendingStart + i] }
        }
        pendingStart += n * c
        position += n
        return n
    }

    /// Format and length of an MP3: from its first bytes when it has a LAME/Xing header, else by counting its frames.
    package static func probe(source: ByteSource, path: String) throws(AudioFileError) -> MP3Probe {
        let decoder = try MP3Decoder(path: path)
        // Without a Xing/Info tag libmpg123's length is an estimate; the exact length needs a full decode.
        let head = source.bytes(at: 0, count: feedBytes)
        let tags: [[UInt8]] = [Array("Xing".utf8), Array("Info".utf8)]
        var tagged = false
        if head.count >= 4 {
            for i in 0...(head.count - 4) where tags.contains(where: { $0[0] == head[i] && Array(head[i..<(i + 4)]) == $0 }) {
                tagged = true
                break
            }
        }
        var offset = 0
        while decoder.sampleRate == nil && offset < 1 << 20 {
            let piece = source.bytes(at: offset, count: feedBytes)
            if piece.isEmpty { break }
            offset += piece.count
            let result = piece.withUnsafeBytes { raw -> Result<Void, AudioFileError> in
                do throws(AudioFileError) { try decoder.feed(raw) } catch { return .failure(error) }
                return .success(())
            }
            try result.get()
            _ = try decoder.decodeAvailable()
        }
        guard let rate = decoder.sampleRate, let channels = decoder.channelCount else {
            throw AudioFileError(.corrupt, path: path, "no decodable MPEG audio frames found")
        }
        // Untagged, libmpg123 trims nothing: the length is every frame's samples, which a walk over the frame
        // headers counts (the whole file is read, but not decoded).
        let length: Int
        var frameOffsets: [Int]? = nil
        if tagged, let known = decoder.knownLength {
            length = known
        } else {
            let frames = try countFrames(source: source, path: path)
            length = frames.count
            frameOffsets = frames.offsets
        }
        // A lying header (0xFFFFFFFF frames) would make the track, and a render of it, run for days.
        let most = maximumFrames(byteCount: source.count, sampleRate: rate, layer: decoder.layer)
        guard length <= most else {
            throw AudioFileError(.unsupported, path: path,
                                 "MP3 header claims \(length) frames, more than its bytes can hold (at most \(most)); its length is unknown until decoded, so decode it into memory")
        }
        return MP3Probe(sampleRate: Double(rate), channelCount: channels, frameCount: length, frameOffsets: frameOffsets)
    }

    /// PCM frames in every MPEG frame of `source`, and each MPEG frame's byte offset, found as `AudioFileStream`
    /// finds them (ID3 skipped, junk resynchronised over). A last frame cut short is not counted: the decoder cannot
    /// decode it either.
    static func countFrames(source: ByteSource, path: String) throws(AudioFileError) -> (count: Int, offsets: [Int]) {
        let parser = AudioFileStream(name: path)
        var frames = 0
        var offsets: [Int] = []
        func count(_ events: [AudioFileStreamEvent]) {
            for case .packets(let packets) in events {
                for d in packets.descriptions {
                    frames += d.frameCount
                    offsets.append(d.byteOffset)
                }
            }
        }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var offset = 0
        while true {
            let piece = chunk.withUnsafeMutableBytes { raw -> Result<[AudioFileStreamEvent]?, AudioFileError> in
                do throws(AudioFileError) {
                    let n = try source.read(at: offset, into: raw, path: path)
                    if n == 0 { return .success(nil) }
                    offset += n
                    return .success(try parser.parse(UnsafeRawBufferPointer(rebasing: raw[..<n])))
                } catch {
                    return .failure(error)
                }
            }
            guard let events = try piece.get() else { break }
            count(events)
        }
        do {
            count(try parser.finish())
        } catch where error.kind == .truncated {
            // The frames before the cut are counted already.
        }
        guard frames > 0 else { throw AudioFileError(.corrupt, path: path, "no MPEG audio frames found") }
        return (frames, offsets)
    }

    /// The most PCM frames `byteCount` bytes of MPEG audio can hold: every MPEG frame at its version's lowest bit
    /// rate (32 kbit/s for MPEG-1, and for Layer I; 8 kbit/s for MPEG-2/2.5 Layers II and III). At most 24 frames
    /// per byte (MPEG-2, 24 kHz, 8 kbit/s). Free-format streams below these rates are not bounded correctly.
    package static func maximumFrames(byteCount: Int, sampleRate: Int, layer: Int?) -> Int {
        let lowestBitRate = sampleRate >= 32000 || layer == 1 ? 32000 : 8000
        let (bits, overflow) = byteCount.multipliedReportingOverflow(by: 8 * sampleRate)
        return overflow ? Int.max : bits / lowestBitRate
    }
}

/// What `MP3StreamDecoder.probe` learns of a file.
package struct MP3Probe: Sendable {
    package var sampleRate: Double
    package var channelCount: Int
    package var frameCount: Int
    /// For a file without a LAME/Xing tag: every MPEG frame's byte offset, which makes its far seeks exact.
    package var frameOffsets: [Int]?
}
