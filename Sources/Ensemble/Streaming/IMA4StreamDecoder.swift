#if canImport(Glibc)
import Glibc
#endif

/// Apple IMA4 in CAF or AIFC, streamed: the headers are walked with a few small reads, and packets are read and
/// decoded on the fly with the same per-sample arithmetic as `IMA4Decoder` (`IMA4ChannelState`).
///
/// A packet is not quite independent: like ffmpeg's `adpcm_ima_qt` (and Apple's), the decoder keeps its running
/// 16-bit predictor when a packet header agrees with it, so a packet's samples can depend on earlier packets. A seek
/// therefore starts from the nearest saved decoder state at or before the target packet (`Checkpoints`: the state
/// every 256 packets, recorded while decoding and shared by every stream of the file) and decodes forward from
/// there, which makes it exact; the first seek far into a file decodes up to it once (IMA4 decodes at hundreds of
/// MB/s).
final class IMA4StreamDecoder: StreamDecoder {
    struct Layout: Sendable {
        var sampleRate: Double
        var channelCount: Int
        /// Byte range of the packets in the file.
        var data: Range<Int>
        /// Decoded frames presented: the CAF packet table's valid frames after its priming, or every whole packet.
        var keep: Range<Int>
    }

    /// Decoder states at the start of every `interval`-th packet. Used by the loader thread only.
    final class Checkpoints: @unchecked Sendable {
        static let interval = 256
        var states: [[IMA4ChannelState]] = []
    }

    private let fd: Int32
    private let path: String
    private let layout: Layout
    private let checkpoints: Checkpoints
    private var position = 0
    private var bytes: [UInt8] = []
    private let packetBytes: Int
    private let packetCount: Int
    /// The packet the running `states` are at the start of.
    private var nextPacket = 0
    private var states: [IMA4ChannelState]

    init(path: String, layout: Layout, checkpoints: Checkpoints) throws(AudioFileError) {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw AudioFileError(.unreadable, path: path, "cannot open for streaming") }
        self.fd = fd
        self.path = path
        self.layout = layout
        self.checkpoints = checkpoints
        packetBytes = IMA4.bytesPerChannelPacket * layout.channelCount
        packetCount = layout.data.count / packetBytes
        states = [IMA4ChannelState](repeating: IMA4ChannelState(), count: layout.channelCount)
        if checkpoints.states.isEmpty { checkpoints.states.append(states) }
    }

    deinit { close(fd) }

    func seek(toFrame frame: Int) throws(AudioFileError) { position = frame }

    func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileError) -> Int {
        let first = layout.keep.lowerBound + position
        let last = min(first + frames, layout.keep.upperBound)
        guard last > first else { return 0 }
        let p0 = first / IMA4.framesPerPacket, p1 = min((last + IMA4.framesPerPacket - 1) / IMA4.framesPerPacket, packetCount)
        if p0 != nextPacket {
            // Restart from the nearest known state at or before p0, then decode up to p0 without output.
            let k = min(p0 / Checkpoints.interval, checkpoints.states.count - 1)
            states = checkpoints.states[k]
            nextPacket = k * Checkpoints.interval
            while nextPacket < p0 {
                let n = min(p0 - nextPacket, 1024)
                guard try decode(packets: n, into: nil, firstFrame: 0, skip: 0, frames: 0) == n else { return 0 }
            }
        }
        let skip = first - p0 * IMA4.framesPerPacket
        let want = last - first
        let done = try decode(packets: p1 - p0, into: buffer, firstFrame: p0 * IMA4.framesPerPacket, skip: skip, frames: want)
        let produced = max(0, min(want, done * IMA4.framesPerPacket - skip))
        position += produced
        return produced
    }

    /// Decodes `packets` packets from `nextPacket` with the running states, writing the frames [skip, skip + frames)
    /// of what they produce, interleaved, into `buffer` (nil: decode only). Returns the packets decoded (fewer when
    /// the file is shorter than its header said).
    private func decode(packets: Int, into buffer: UnsafeMutablePointer<Float>?, firstFrame: Int, skip: Int,
                        frames: Int) throws(AudioFileError) -> Int {
        let count = packets * packetBytes
        if bytes.count < count { bytes = [UInt8](repeating: 0, count: count) }
        let offset = layout.data.lowerBound + nextPacket * packetBytes
        var got = 0
        while got < count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + got, count - got, off_t(offset + got)) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw AudioFileError(.unreadable, path: path, "read failed while streaming") }
            if n == 0 { break }
            got += n
        }
        let whole = got / packetBytes
        let c = layout.channelCount
        let scale: Float = 1.0 / 32768.0
        var position = 0
        for packet in 0..<whole {
            if (nextPacket % Checkpoints.interval) == 0 && nextPacket / Checkpoints.interval == checkpoints.states.count {
                checkpoints.states.append(states)
            }
            let base = packet * IMA4.framesPerPacket - skip // output index of this packet's frame 0
            for channel in 0..<c {
                let header = UInt16(bytes[position]) << 8 | UInt16(bytes[position + 1])
                position += 2
                guard states[channel].applyHeader(header) else {
                    throw AudioFileError(.corrupt, path: path, "IMA4 packet \(nextPacket) channel \(channel) has step index \(header & 0x7F)")
                }
                var state = states[channel]
                var j = base
                for _ in 0..<(IMA4.framesPerPacket / 2) {
                    let byte = bytes[position]
                    position += 1
                    let a = Float(state.expand(byte & 0x0F)) * scale
                    let b = Float(state.expand(byte >> 4)) * scale
                    if let buffer {
                        if j >= 0 && j < frames { buffer[j * c + channel] = a }
                        if j + 1 >= 0 && j + 1 < frames { buffer[(j + 1) * c + channel] = b }
                    }
                    j += 2
                }
                states[channel] = state
            }
            nextPacket += 1
        }
        return whole
    }

    /// The IMA4 layout of a CAF or AIFC file, from its headers; nil when the file is not IMA4.
    static func locate(path: String, head: [UInt8], fileSize: Int) throws(AudioFileError) -> Layout? {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw AudioFileError(.unreadable, path: path, "cannot open") }
        defer { close(fd) }
        func readAt(_ offset: Int, _ count: Int) -> [UInt8] {
            var b = [UInt8](repeating: 0, count: count)
            let n = b.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, count, off_t(offset)) }
            return n == count ? b : []
        }
        func be(_ b: [UInt8], _ at: Int, _ width: Int) -> Int64 {
            var v: UInt64 = 0
            for i in 0..<width { v = v << 8 | UInt64(b[at + i]) }
            if width == 8 { return Int64(bitPattern: v) }
            return Int64(v)
        }
        if CAFFile.sniff(head) {
            let desc = try CAFFile.readDescription(head, path: path)
            guard desc.formatID == IMA4.formatID else { return nil }
            let channels = Int(desc.channelsPerFrame)
            guard channels >= 1, Int(desc.bytesPerPacket) == IMA4.bytesPerChannelPacket * channels,
                  Int(desc.framesPerPacket) == IMA4.framesPerPacket else {
                throw AudioFileError(.corrupt, path: path, "CAF desc does not describe ima4 packets")
            }
            var offset = 8
            var data: Range<Int>?
            var keep: Range<Int>?
            while offset + 12 <= fileSize {
                let h = readAt(offset, 12)
                guard h.count == 12 else { break }
                let type = String(decoding: h[0..<4], as: UTF8.self)
                let size = be(h, 4, 8)
                let start = offset + 12
                if type == "data" {
                    let end = size < 0 ? fileSize : min(fileSize, start + Int(size))
                    data = (start + 4)..<max(start + 4, end)
                    if size < 0 { break }
                } else if type == "pakt" {
                    let p = readAt(start, 24)
                    if p.count == 24 {
                        let valid = Int(be(p, 8, 8)), priming = Int(Int32(truncatingIfNeeded: be(p, 16, 4)))
                        if valid >= 0 && priming >= 0 { keep = priming..<(priming + valid) }
                    }
                }
                guard size >= 0 else { break }
                offset = start + Int(size)
            }
            guard let data else { throw AudioFileError(.corrupt, path: path, "CAF file has no data chunk") }
            let whole = data.count / (IMA4.bytesPerChannelPacket * channels) * IMA4.framesPerPacket
            let kept = keep ?? 0..<whole
            guard kept.upperBound <= whole else {
                throw AudioFileError(.corrupt, path: path, "CAF packet table claims more frames than the data holds")
            }
            return Layout(sampleRate: desc.sampleRate, channelCount: channels, data: data, keep: kept)
        }
        if AIFCFile.sniff(head) == FourCC("AIFC") {
            let common = try AIFCFile.parse(head, path: path, commonOnly: true).common
            guard common.compressionType == IMA4.formatID else { return nil }
            let channels = common.channelCount
            guard channels >= 1 else { throw AudioFileError(.corrupt, path: path, "AIFC header says \(channels) channels") }
            var offset = 12
            while offset + 8 <= fileSize {
                let h = readAt(offset, 8)
                guard h.count == 8 else { break }
                let type = String(decoding: h[0..<4], as: UTF8.self)
                let size = Int(be(h, 4, 4))
                let start = offset + 8
                if type == "SSND" {
                    let s = readAt(start, 8)
                    guard s.count == 8 else { break }
                    let dataStart = start + 8 + Int(be(s, 0, 4))
                    let end = min(fileSize, start + size)
                    let data = dataStart..<max(dataStart, end)
                    let whole = data.count / (IMA4.bytesPerChannelPacket * channels) * IMA4.framesPerPacket
                    return Layout(sampleRate: common.sampleRate, channelCount: channels, data: data, keep: 0..<whole)
                }
                offset = start + size + (size & 1)
            }
            throw AudioFileError(.corrupt, path: path, "AIFC file has no SSND chunk")
        }
        return nil
    }
}
