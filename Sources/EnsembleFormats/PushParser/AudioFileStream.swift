// The thread that feeds it (a download's callback, a pipe reader, the stream loader): not thread-safe, its owner
// serialises calls.

/// A push parser for audio files arriving as bytes (Audio File Stream Services): feed it the file's bytes in
/// order, in chunks of any size, and it reports the file's properties as each becomes known, says when it is
/// ready to produce packets, and hands out whole packets with their descriptions. Whatever the chunk sizes (one
/// byte at a time or the whole file at once), the properties, packets and their bytes are the same.
///
/// Reads WAV and RIFX, AIFF and AIFC, CAF and MP3; FLAC and Ogg are refused (`.unsupported`: their frames are
/// found only by decoding), so decode them whole or stream them from a file. Memory stays bounded: bytes are kept
/// only until they form a whole header chunk or packet (MPEG streams also keep 8 bytes per frame seen, for exact
/// seeks). Formats and seeking: the "Bytes as they arrive" article (Ensemble.docc/BytesAsTheyArrive.md).
public final class AudioFileStream {
    /// Stands for the stream in errors.
    public let name: String
    /// The container, once the first bytes have identified it.
    public internal(set) var container: AudioContainer?
    /// The audio data's format, once its header chunk (or first MPEG frame) is parsed.
    public private(set) var format: AudioStreamFormat?
    /// Byte offset of the first audio packet.
    public internal(set) var dataOffset: Int?
    /// Bytes of audio data, when the header says.
    public internal(set) var audioDataByteCount: Int?
    /// Packets in the file, when the header says.
    public internal(set) var audioDataPacketCount: Int?
    /// Frames the file presents (priming and remainder trimmed), when the header says.
    public internal(set) var frameCount: Int?
    /// Average bit rate, MPEG only.
    public internal(set) var bitRate: Int?
    /// Frames to drop before the decoded packets (CAF `pakt`, LAME encoder delay).
    public internal(set) var primingFrames = 0
    /// Frames to drop after the decoded packets (CAF `pakt`, LAME padding).
    public internal(set) var remainderFrames = 0
    /// True once the header is parsed and packets follow.
    public internal(set) var isReadyToProducePackets = false
    /// Index of the next packet to be handed out.
    public internal(set) var nextPacket = 0

    /// Largest header chunk held whole (`fmt `, `COMM`, `desc`, `pakt`): bigger ones are damage.
    static let maxHeaderChunk = 1 << 20
    /// Bytes of a stream searched for an MPEG sync before it is declared not audio.
    static let syncSearchLimit = 64 * 1024

    enum Layout: Equatable { case riff(bigEndian: Bool), iff, caf, mpeg }
    indirect enum State: Equatable {
        case sniffing
        case chunkHeader
        case chunkBody(FourCC, Int)
        /// Bytes to pass over, then the state to go on in.
        case skipping(Int, then: State)
        case ssndPrefix(Int)
        case cafEditCount(Int)
        case audio(remaining: Int?)
        case id3
        case mpegSearch
        case mpegFrames
    }

    private var layout: Layout?
    var state = State.sniffing
    /// Unparsed bytes are `buffer[head...]`; `position` is the file offset of `buffer[head]`.
    var buffer: [UInt8] = []
    var head = 0
    /// File offset of the next byte to parse (what has been fed is `position` + the unparsed bytes).
    package private(set) var position = 0
    var events: [AudioFileStreamEvent] = []
    var finished = false
    private var sawData = false
    private var isAIFC = false
    /// CAF `pakt`: packets and valid frames it claims.
    private var paktPackets: Int?
    private var paktValidFrames: Int?
    /// MPEG: the locked stream's first header, the tag, frame offsets seen, and bytes skipped while searching.
    var mpegReference: MPEGFrameHeader?
    var infoTag: MPEGInfoTag?
    var firstFrameOffset: Int?
    var frameOffsets: [Int] = []
    var skipped = 0
    var searchedSinceLock = 0
    var everLocked = false
    var seekedSearch = false

    /// A parser for one stream; `name` stands for it in errors.
    public init(name: String = "stream") {
        self.name = name
    }

    /// Parses the next bytes of the file (any chunk size) and returns what they produced, in order.
    /// - Throws: `AudioFileError` for bytes that are not a supported audio file or contradict its header; the
    ///   parser is then unusable.
    public func parse(_ bytes: UnsafeRawBufferPointer) throws(AudioFileError) -> [AudioFileStreamEvent] {
        guard !finished else { throw AudioFileError(.corrupt, path: name, "bytes fed after the end of the stream") }
        buffer.append(contentsOf: bytes)
        try advance()
        return takeEvents()
    }

    /// `parse` for an array.
    public func parse(_ bytes: [UInt8]) throws(AudioFileError) -> [AudioFileStreamEvent] {
        let result = bytes.withUnsafeBytes { raw -> Result<[AudioFileStreamEvent], AudioFileError> in
            do throws(AudioFileError) { return .success(try parse(raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// The stream has ended: hands out what remains and checks that the file was whole.
    /// - Throws: `.truncated` when it stops inside a header, a packet, or before the data its header promised;
    ///   `.corrupt` when a CAF packet table claims more than the packets hold; `.unsupported` when the bytes never
    ///   formed a known format.
    public func finish() throws(AudioFileError) -> [AudioFileStreamEvent] {
        guard !finished else { return [] }
        finished = true
        try advance()
        try checkEnd()
        return takeEvents()
    }

    /// Where to feed from to play from `frame` (a frame of the presented audio, after priming), and moves the
    /// parser there: the next bytes fed must start at the returned `byteOffset`. Exact for constant-size packets
    /// and for MPEG frames already seen; estimated otherwise (Xing or VBRI table of contents, else the bit rate),
    /// the parser then finding the next frame boundary itself.
    /// - Throws: `.unsupported` before the stream is ready to produce packets; `.corrupt` for a negative frame.
    public func seek(toFrame frame: Int) throws(AudioFileError) -> AudioFileStreamSeek {
        guard let format, isReadyToProducePackets, let dataOffset, !finished else {
            throw AudioFileError(.unsupported, path: name, "cannot seek before the header is parsed")
        }
        guard frame >= 0 else { throw AudioFileError(.corrupt, path: name, "cannot seek to frame \(frame)") }
        let target = frame + primingFrames
        let packet = target / format.framesPerPacket, inPacket = target % format.framesPerPacket
        buffer.removeAll(keepingCapacity: true)
        head = 0
        events.removeAll()
        if format.codec != .mpeg {
            let offset = dataOffset + packet * format.bytesPerPacket
            position = offset
            nextPacket = packet
            state = .audio(remaining: audioDataByteCount.map { max($0 - packet * format.bytesPerPacket, 0) })
            return AudioFileStreamSeek(byteOffset: offset, packet: packet, framesToSkip: inPacket, isEstimated: false)
        }
        if packet < frameOffsets.count {
            position = frameOffsets[packet]
            nextPacket = packet
            state = .mpegFrames
            return AudioFileStreamSeek(byteOffset: position, packet: packet, framesToSkip: inPacket, isEstimated: false)
        }
        let offset = estimatedOffset(packet: packet, format: format, dataOffset: dataOffset)
        position = offset
        nextPacket = packet
        state = .mpegSearch
        seekedSearch = true
        searchedSinceLock = 0
        return AudioFileStreamSeek(byteOffset: offset, packet: packet, framesToSkip: 0, isEstimated: true)
    }

    // MARK: - Parsing

    private var available: Int { buffer.count - head }

    private func takeEvents() -> [AudioFileStreamEvent] {
        defer { events.removeAll(keepingCapacity: true) }
        // Dropping parsed bytes once they outweigh the rest keeps the copy cost linear in the stream's length.
        if head > 4096 && head * 2 > buffer.count {
            buffer.removeFirst(head)
            head = 0
        }
        return events
    }

    func consume(_ n: Int) {
        head += n
        position += n
    }

    private func byte(_ k: Int) -> UInt8 { buffer[head + k] }

    private func be(_ k: Int, _ n: Int) -> Int {
        var v = 0
        for i in 0..<n { v = v << 8 | Int(byte(k + i)) }
        return v
    }

    private func le(_ k: Int, _ n: Int) -> Int {
        var v = 0
        for i in (0..<n).reversed() { v = v << 8 | Int(byte(k + i)) }
        return v
    }

    private func text(_ k: Int, _ n: Int = 4) -> String {
        String(decoding: buffer[(head + k)..<(head + k + n)], as: UTF8.self)
    }

    func property(_ p: AudioFileStreamProperty) { events.append(.property(p)) }

    /// Runs the state machine until it needs more bytes.
    private func advance() throws(AudioFileError) {
        while true {
            let before = (state, head)
            try step()
            if state == before.0 && head == before.1 { return }
        }
    }

    private func step() throws(AudioFileError) {
        switch state {
        case .sniffing: try sniff()
        case .chunkHeader: try chunkHeader()
        case let .chunkBody(id, size): try chunkBody(id, size)
        case let .skipping(n, next):
            let k = min(n, available)
            consume(k)
            state = k == n ? next : .skipping(n - k, then: next)
        case let .ssndPrefix(size):
            guard available >= 8 else { return }
            let offset = be(0, 4)
            consume(8)
            guard offset <= size - 8 else {
                throw AudioFileError(.corrupt, path: name, "SSND offset \(offset) lies outside its \(size)-byte chunk")
            }
            try startAudio(size: size - 8 - offset, skip: offset)
        case let .cafEditCount(size):
            guard available >= 4 else { return }
            consume(4)
            try startAudio(size: size < 0 ? nil : size - 4, skip: 0)
        case let .audio(remaining): try audio(remaining)
        case .id3:
            guard available >= 10 else { return }
            // A syncsafe size (7 bits a byte), plus the header and an optional footer.
            let size = (0..<4).reduce(0) { $0 << 7 | Int(byte(6 + $1) & 0x7F) } + 10 + (byte(5) & 0x10 != 0 ? 10 : 0)
            state = .skipping(size, then: .mpegSearch)
        case .mpegSearch: try mpegSearch()
        case .mpegFrames: try mpegFrames()
        }
    }

    private func sniff() throws(AudioFileError) {
        guard available >= 12 || (finished && available > 0) else {
            if finished { throw AudioFileError(.empty, path: name, "stream is empty") }
            return
        }
        let magic = available >= 4 ? text(0) : ""
        let kind = available >= 12 ? text(8) : ""
        func begin(_ c: AudioContainer, _ l: Layout, header: Int) {
            container = c
            layout = l
            property(.fileFormat(c))
            consume(header)
            state = .chunkHeader
        }
        switch magic {
        case "RIFF" where kind == "WAVE": begin(.wav, .riff(bigEndian: false), header: 12)
        case "RIFX" where kind == "WAVE": begin(.rifx, .riff(bigEndian: true), header: 12)
        case "FORM" where kind == "AIFF": begin(.aiff, .iff, header: 12)
        case "FORM" where kind == "AIFC":
            isAIFC = true
            begin(.aifc, .iff, header: 12)
        case "caff": begin(.caf, .caf, header: 8)
        case "fLaC", "OggS":
            throw AudioFileError(.unsupported, path: name,
                                 "\(magic == "fLaC" ? "FLAC" : "Ogg") cannot be parsed as it arrives (its frames are found only by decoding); decode the whole file or stream it from a file")
        case "RF64":
            throw AudioFileError(.unsupported, path: name, "RF64 cannot be parsed as it arrives; decode the whole file")
        default:
            if magic.hasPrefix("ID3") {
                container = .mp3
                layout = .mpeg
                property(.fileFormat(.mp3))
                state = .id3
            } else {
                // No magic: MPEG audio if a frame sync followed by a second frame shows up soon enough.
                layout = .mpeg
                state = .mpegSearch
            }
        }
    }

    private func chunkHeader() throws(AudioFileError) {
        let headerSize = layout == .caf ? 12 : 8
        guard available >= headerSize else { return }
        let id = FourCC(rawValue: UInt32(be(0, 4)))
        var size: Int
        switch layout {
        case .riff(let bigEndian)?: size = bigEndian ? be(4, 4) : le(4, 4)
        case .caf?:
            let raw = UInt64(be(4, 4)) << 32 | UInt64(be(8, 4))
            size = raw == UInt64.max ? -1 : (raw > UInt64(Int.max / 2) ? Int.max / 2 : Int(raw))
        default: size = be(4, 4)
        }
        consume(headerSize)
        let padded = layout != .caf && size % 2 == 1 ? 1 : 0
        switch (layout, id) {
        case (.riff?, FourCC("data")):
            guard format != nil else { throw AudioFileError(.corrupt, path: name, "data chunk comes before the fmt chunk") }
            // A writer that cannot seek back (ffmpeg to a pipe) leaves the size at 0 or 0xFFFFFFFF: audio to the end.
            try startAudio(size: size == 0 || size == 0xFFFF_FFFF ? nil : size, skip: 0)
        case (.iff?, FourCC("SSND")):
            guard format != nil else { throw AudioFileError(.corrupt, path: name, "SSND chunk comes before the COMM chunk") }
            guard size >= 8 else { throw AudioFileError(.corrupt, path: name, "SSND chunk of \(size) bytes") }
            state = .ssndPrefix(size)
        case (.caf?, FourCC("data")):
            guard format != nil else { throw AudioFileError(.corrupt, path: name, "data chunk comes before the desc chunk") }
            guard size == -1 || size >= 4 else { throw AudioFileError(.corrupt, path: name, "data chunk of \(size) bytes") }
            state = .cafEditCount(size)
        case (.riff?, FourCC("fmt ")), (.iff?, FourCC("COMM")), (.caf?, FourCC("desc")),
             (.caf?, FourCC("pakt")):
            guard size >= 0, size <= Self.maxHeaderChunk else {
                throw AudioFileError(.corrupt, path: name, "\(id) chunk claims \(size) bytes")
            }
            state = .chunkBody(id, size + padded)
        default:
            guard size >= 0 else {
                throw AudioFileError(.corrupt, path: name, "\(id) chunk claims an unknown size before the data chunk")
            }
            state = .skipping(size + padded, then: .chunkHeader)
        }
    }

    private func chunkBody(_ id: FourCC, _ size: Int) throws(AudioFileError) {
        guard available >= size else { return }
        let body = Array(buffer[head..<(head + size)])
        consume(size)
        state = .chunkHeader
        switch (layout, id) {
        case (.riff(let bigEndian)?, FourCC("fmt ")):
            setFormat(try StreamHeaderChunks.wavFormat(body, bigEndian: bigEndian, name: name))
        case (.iff?, FourCC("COMM")):
            let (format, frames) = try StreamHeaderChunks.aiffFormat(body, aifc: isAIFC, name: name)
            setFormat(format)
            frameCount = frames
            property(.frameCount(frames))
        case (.caf?, FourCC("desc")):
            setFormat(try StreamHeaderChunks.cafFormat(body, name: name))
        case (.caf?, FourCC("pakt")):
            let table = try StreamHeaderChunks.cafPacketTable(body, name: name)
            paktPackets = table.packets
            paktValidFrames = table.valid
            primingFrames = table.priming
            remainderFrames = table.remainder
            frameCount = table.valid
            audioDataPacketCount = table.packets
            property(.seekTable("packet table"))
            property(.packetTable(primingFrames: table.priming, remainderFrames: table.remainder))
            property(.audioDataPacketCount(table.packets))
            property(.frameCount(table.valid))
        default:
            break
        }
    }

    func setFormat(_ f: AudioStreamFormat) {
        format = f
        property(.dataFormat(f))
    }

    /// Enters a data chunk of `size` bytes (nil: to the end of the stream) after `skip` bytes of padding.
    private func startAudio(size: Int?, skip: Int) throws(AudioFileError) {
        guard let format else { throw AudioFileError(.corrupt, path: name, "audio data comes before its format") }
        guard !sawData else { throw AudioFileError(.corrupt, path: name, "a second audio data chunk") }
        sawData = true
        let offset = position + skip
        dataOffset = offset
        property(.dataOffset(offset))
        if let size {
            guard size >= 0 else { throw AudioFileError(.corrupt, path: name, "audio data chunk of \(size) bytes") }
            audioDataByteCount = size
            property(.audioDataByteCount(size))
            let whole = size / format.bytesPerPacket
            let last = Self.shortBlockFrames(size % format.bytesPerPacket, format)
            let packets = whole + (last > 0 ? 1 : 0)
            if audioDataPacketCount == nil {
                audioDataPacketCount = packets
                property(.audioDataPacketCount(packets))
            }
            if frameCount == nil {
                frameCount = whole * format.framesPerPacket + last
                property(.frameCount(whole * format.framesPerPacket + last))
            }
        }
        isReadyToProducePackets = true
        events.append(.readyToProducePackets)
        state = .skipping(skip, then: .audio(remaining: size))
    }

    /// Frames in a WAV IMA ADPCM block cut short at the end of the data (encoders such as sox write one): its
    /// headers' first samples plus two per byte of codes; 0 for other codecs, which have no short packets.
    static func shortBlockFrames(_ bytes: Int, _ format: AudioStreamFormat) -> Int {
        let headers = 4 * format.channelCount
        guard format.codec == .imaADPCM, bytes > headers else { return 0 }
        return (bytes - headers) * 2 / format.channelCount + 1
    }

    /// Hands out the whole constant-size packets buffered (within the data chunk).
    private func audio(_ remaining: Int?) throws(AudioFileError) {
        guard let format else { return }
        let size = format.bytesPerPacket
        let usable = remaining.map { min($0, available) } ?? available
        let count = usable / size
        if count > 0 {
            let bytes = Array(buffer[head..<(head + count * size)])
            let descriptions = (0..<count).map {
                AudioStreamPacketDescription(byteOffset: position + $0 * size, byteCount: size, frameCount: format.framesPerPacket)
            }
            events.append(.packets(AudioStreamPackets(firstPacket: nextPacket, bytes: bytes, descriptions: descriptions)))
            nextPacket += count
            consume(count * size)
        }
        if let remaining {
            let left = remaining - count * size
            if left < size {
                // The chunk's end: a partial packet at its end is not audio; what follows is more chunks.
                guard available >= left else {
                    state = .audio(remaining: left)
                    return
                }
                let short = Self.shortBlockFrames(left, format)
                if short > 0 {
                    let d = AudioStreamPacketDescription(byteOffset: position, byteCount: left, frameCount: short)
                    events.append(.packets(AudioStreamPackets(firstPacket: nextPacket, bytes: Array(buffer[head..<(head + left)]),
                                                              descriptions: [d])))
                    nextPacket += 1
                    consume(left)
                    state = .skipping((audioDataByteCount ?? 0) % 2, then: .chunkHeader)
                    return
                }
                state = .skipping(left + (layout != .caf && (audioDataByteCount ?? 0) % 2 == 1 ? 1 : 0), then: .chunkHeader)
            } else {
                state = .audio(remaining: left)
            }
        }
    }

    // MARK: - The end

    private func checkEnd() throws(AudioFileError) {
        switch state {
        case .sniffing:
            throw AudioFileError(.empty, path: name, "stream is empty")
        case .mpegSearch:
            if !everLocked {
                throw AudioFileError(.unsupported, path: name, "not a recognised audio stream (no MPEG frames found)")
            }
            // Trailing bytes that are no frame (ID3v1 "TAG", an APE tag, garbage) are not audio; a cut frame is.
            let raw = buffer.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[head...]) }
            if let h = MPEGFrameHeader(raw, at: 0), let reference = mpegReference, reference.continues(h), raw.count < h.frameLength {
                throw AudioFileError(.truncated, path: name, "stream ends mid-packet: \(raw.count) of a \(h.frameLength)-byte MPEG frame")
            }
        case .mpegFrames:
            let raw = buffer.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[head...]) }
            if let h = MPEGFrameHeader(raw, at: 0), raw.count < h.frameLength {
                throw AudioFileError(.truncated, path: name, "stream ends mid-packet: \(raw.count) of a \(h.frameLength)-byte MPEG frame")
            }
        case .audio(let remaining):
            let size = format?.bytesPerPacket ?? 1
            if let remaining, remaining >= size {
                throw AudioFileError(.truncated, path: name,
                                     "stream ends \(remaining) bytes before the end of its audio data (\(audioDataByteCount ?? 0) bytes promised)")
            }
            if remaining == nil && available > 0 {
                throw AudioFileError(.truncated, path: name, "stream ends mid-packet: \(available) of a \(size)-byte packet")
            }
        case .chunkHeader, .skipping:
            if !sawData { throw AudioFileError(.truncated, path: name, "stream ends before its audio data") }
        case .chunkBody, .ssndPrefix, .cafEditCount, .id3:
            throw AudioFileError(.truncated, path: name, sawData ? "stream ends inside a chunk" : "stream ends inside its header")
        }
        if let paktPackets, let format, let paktValidFrames {
            let decodedFrames = nextPacket * format.framesPerPacket
            guard paktPackets == nextPacket, paktValidFrames + primingFrames <= decodedFrames else {
                throw AudioFileError(.corrupt, path: name,
                                     "CAF packet table claims \(paktPackets) packets and \(paktValidFrames) valid frames after \(primingFrames) priming, but the stream holds \(nextPacket) packets (\(decodedFrames) frames)")
            }
        }
    }
}
