// The thread that feeds the stream (a push-stream track's loader turn, a pipe reader); its owner serialises calls.

/// Bytes in, Float PCM out: an `AudioFileStream` parsing the container as bytes arrive and a decoder for its
/// packets (`StreamPacketDecoder`; MP3 through libmpg123's feed API, gapless, fed the same bytes as
/// `AudioFile.decode` feeds it). The frames read are those `AudioFile.decode` gives for the whole file, bit for
/// bit, whatever the chunk sizes: a CAF packet table's priming and remainder are trimmed the same way, and a WAV
/// IMA ADPCM block cut short at the end decodes to the frames it holds, as libsndfile decodes it.
package final class AudioFileStreamDecoder: PCMFeedDecoder {
    package let parser: AudioFileStream
    private var packets: StreamPacketDecoder?
    private var mp3: MP3Decoder?
    /// Bytes held until the parser has told MPEG from the rest (the MP3 decoder must see the stream from byte 0).
    private var early: [UInt8] = []
    private var decided = false
    /// Decoded interleaved samples not yet read: `pending[pendingStart...]`.
    private var pending: [Float] = []
    private var pendingStart = 0
    /// Frames decoded so far (before trimming), and frames handed out.
    private var decodedFrames = 0
    private var finished = false
    package private(set) var format: PCMFeedFormat?

    /// A decoder for one stream; `name` stands for it in errors.
    package init(name: String) {
        parser = AudioFileStream(name: name)
    }

    /// The decoder a push stream uses.
    package static func make(name: String) -> PCMFeedDecoder { AudioFileStreamDecoder(name: name) }

    package func feed(_ bytes: UnsafeRawBufferPointer) throws(AudioFileError) {
        let events = try parser.parse(bytes)
        try route(raw: bytes, events)
    }

    package func finish() throws(AudioFileError) {
        guard !finished else { return }
        finished = true
        var failure: AudioFileError?
        do { try route(raw: UnsafeRawBufferPointer(start: nil, count: 0), try parser.finish()) } catch { failure = error }
        if let mp3 {
            let tail = try mp3.finish()
            append(tail)
        }
        if let failure { throw failure }
    }

    package var isDrained: Bool { finished && pendingStart == pending.count }

    package func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileError) -> Int {
        guard let c = format?.channelCount, c > 0 else { return 0 }
        let n = min(frames, (pending.count - pendingStart) / c)
        pending.withUnsafeBufferPointer { p in
            for i in 0..<(n * c) { buffer[i] = p[pendingStart + i] }
        }
        pendingStart += n * c
        if pendingStart > 1 << 16 && pendingStart * 2 > pending.count {
            pending.removeFirst(pendingStart)
            pendingStart = 0
        }
        return n
    }

    private func route(raw: UnsafeRawBufferPointer, _ events: [AudioFileStreamEvent]) throws(AudioFileError) {
        if !decided {
            early.append(contentsOf: raw)
            guard let f = parser.format else { return }
            decided = true
            format = PCMFeedFormat(sampleRate: f.sampleRate, channelCount: f.channelCount, frameCount: parser.frameCount)
            if f.codec == .mpeg {
                // libmpg123 sees the tags and the Xing/LAME frame (for gapless trimming), then whole frames only:
                // garbage the parser skipped never reaches it.
                let decoder = try MP3Decoder(path: parser.name)
                mp3 = decoder
                try feedMP3(Array(early.prefix(parser.dataOffset ?? 0)))
                early = []
                try feedPackets(events)
                return
            }
            early = []
            packets = StreamPacketDecoder(format: f, name: parser.name)
        } else if mp3 != nil {
            try feedPackets(events)
            return
        }
        // Properties such as a late `pakt` refine the length as they come.
        if parser.frameCount != format?.frameCount { format?.frameCount = parser.frameCount }
        for case let .packets(p) in events {
            var decoded: [Float] = []
            try packets?.decode(p.bytes, into: &decoded)
            append(decoded)
        }
    }

    private func feedPackets(_ events: [AudioFileStreamEvent]) throws(AudioFileError) {
        for case let .packets(p) in events { try feedMP3(p.bytes) }
    }

    private func feedMP3(_ bytes: [UInt8]) throws(AudioFileError) {
        guard let mp3, !bytes.isEmpty else { return }
        let result = bytes.withUnsafeBytes { raw -> Result<Void, AudioFileError> in
            do throws(AudioFileError) { try mp3.feed(raw) } catch { return .failure(error) }
            return .success(())
        }
        try result.get()
        append(try mp3.decodeAvailable())
    }

    /// Keeps the decoded frames the file presents: after the priming frames, up to the frame count when known.
    private func append(_ samples: [Float]) {
        guard let c = format?.channelCount, c > 0, !samples.isEmpty else { return }
        let frames = samples.count / c
        let first = decodedFrames
        decodedFrames += frames
        // MP3's delay and padding are already trimmed by libmpg123's gapless mode.
        let priming = mp3 == nil ? parser.primingFrames : 0
        let limit = mp3 == nil ? parser.frameCount.map { $0 + priming } : nil
        let lo = max(first, priming), hi = min(first + frames, limit ?? Int.max)
        guard hi > lo else { return }
        pending.append(contentsOf: samples[((lo - first) * c)..<((hi - first) * c)])
    }
}
