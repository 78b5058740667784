// Loader thread: the stream loader opens, seeks and reads this decoder; `locate` runs on the control side.
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
package final class IMA4StreamDecoder: StreamDecoder {
    /// Where the packets are (the container walk shared with the in-memory decoder) and which decoded frames
    /// are presented: the CAF packet table's valid frames after its priming, or every whole packet.
    package struct Layout: Sendable {
        package var container: IMA4ContainerLayout
        package var keep: Range<Int>
        package var sampleRate: Double { container.sampleRate }
        package var channelCount: Int { container.channelCount }
        /// Byte range of the packets in the file.
        package var data: Range<Int> { container.data }
    }

    /// Decoder states at the start of every `interval`-th packet. Used by the loader thread only.
    package final class Checkpoints: @unchecked Sendable {
        package static let interval = 256
        package var states: [[IMA4ChannelState]] = []

        package init() {}
    }

    private let source: ByteSource
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

    package init(source: ByteSource, path: String, layout: Layout, checkpoints: Checkpoints) throws(AudioFileError) {
        self.source = source
        self.path = path
        self.layout = layout
        self.checkpoints = checkpoints
        packetBytes = IMA4.bytesPerChannelPacket * layout.channelCount
        packetCount = layout.data.count / packetBytes
        states = [IMA4ChannelState](repeating: IMA4ChannelState(), count: layout.channelCount)
        if checkpoints.states.isEmpty { checkpoints.states.append(states) }
    }

    package func seek(toFrame frame: Int) throws(AudioFileError) { position = frame }

    package func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileError) -> Int {
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
        let source = self.source, path = self.path
        let got = try bytes.withUnsafeMutableBytes { raw -> Result<Int, AudioFileError> in
            do throws(AudioFileError) {
                return .success(try source.read(at: offset, into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<count]), path: path))
            } catch { return .failure(error) }
        }.get()
        let whole = got / packetBytes
        let c = layout.channelCount
        var block = [Float](repeating: 0, count: IMA4.framesPerPacket)
        var position = 0
        for packet in 0..<whole {
            if (nextPacket % Checkpoints.interval) == 0 && nextPacket / Checkpoints.interval == checkpoints.states.count {
                checkpoints.states.append(states)
            }
            let base = packet * IMA4.framesPerPacket - skip // output index of this packet's frame 0
            for channel in 0..<c {
                let bad = bytes.withUnsafeBufferPointer { source in
                    block.withUnsafeMutableBufferPointer { out in
                        states[channel].decodeBlock(source.baseAddress! + position, into: out.baseAddress!, stride: 1)
                    }
                }
                if let bad {
                    throw AudioFileError(.corrupt, path: path, "IMA4 packet \(nextPacket) channel \(channel) has step index \(bad)")
                }
                position += IMA4.bytesPerChannelPacket
                // Only the frames [0, frames) of this read are wanted: the first packet may start before them.
                let first = max(0, -base), end = min(IMA4.framesPerPacket, frames - base)
                if let buffer, first < end {
                    for k in first..<end { buffer[(base + k) * c + channel] = block[k] }
                }
            }
            nextPacket += 1
        }
        return whole
    }

    /// The IMA4 layout of a CAF or AIFC file, from its headers: the one container walk (`IMA4ContainerLayout.locate`,
    /// with its sample-rate, channel and packet-size checks) over the open file, so streamed and in-memory
    /// decoding accept and reject the same files; nil when the file is not IMA4.
    package static func locate(source: ByteSource, path: String) throws(AudioFileError) -> Layout? {
        guard let container = try IMA4ContainerLayout.locate(in: source, path: path) else { return nil }
        let keep = try container.framesToKeep(decodedFrames: container.wholePacketFrames, path: path)
        return Layout(container: container, keep: keep)
    }
}
