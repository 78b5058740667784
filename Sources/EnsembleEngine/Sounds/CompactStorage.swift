// Control side: made where a sound is loaded, freed when the sound goes.
import EnsembleFormats
import EnsembleRender

/// The memory of a sound held in its file's own sample format, and what `Sound` reports about it. Owned by one
/// `Sound` (`deallocate` in its deinit); voices read it through `packed`.
struct CompactStorage: @unchecked Sendable {
    let storage: Sound.Storage
    let packed: PackedSamples
    /// Bytes of samples (and IMA4 packet states) held.
    let bytes: Int
    let channelCount: Int
    let frameCount: Int
    let sampleRate: Double
    private let allocation: UnsafeMutableRawPointer

    /// The decoded samples in the smallest integer format that holds every one of them exactly (k·2⁻⁷, k·2⁻¹⁵,
    /// k·2⁻²³: what 8-, 16- and 24-bit PCM decode to), or nil when some sample is none of these (float files,
    /// MP3) or there are none.
    static func linear(_ audio: DecodedAudio) -> CompactStorage? {
        let frames = audio.frameCount, channels = audio.channelCount
        guard frames > 0 else { return nil }
        // Every sample as a 24-bit integer; OR-ing them shows which low bits any of them uses.
        var used: Int32 = 0
        for c in 0..<channels {
            let fits = audio.channels[c].withUnsafeBufferPointer { src -> Bool in
                for x in src {
                    let s = x * 0x1p23
                    guard s >= -8_388_608, s <= 8_388_607, s == s.rounded(.towardZero) else { return false }
                    used |= Int32(s)
                }
                return true
            }
            if !fits { return nil }
        }
        let format: PackedSamples.Format = used & 0xFFFF == 0 ? .int8 : used & 0xFF == 0 ? .int16 : .int24
        let width = format == .int8 ? 1 : format == .int16 ? 2 : 3
        let planeBytes = frames * width
        // One readable byte before the first plane lets a 24-bit sample load as the word ending on it.
        let pad = format == .int24 ? 1 : 0
        let allocation = UnsafeMutableRawPointer.allocate(byteCount: pad + channels * planeBytes, alignment: 4)
        let base = allocation + pad
        if pad == 1 { allocation.storeBytes(of: 0, as: UInt8.self) }
        for c in 0..<channels {
            audio.channels[c].withUnsafeBufferPointer { src in
                let plane = base + c * planeBytes
                switch format {
                case .int8:
                    let out = plane.bindMemory(to: Int8.self, capacity: frames)
                    for i in 0..<frames { out[i] = Int8(src[i] * 0x1p7) }
                case .int16:
                    let out = plane.bindMemory(to: Int16.self, capacity: frames)
                    for i in 0..<frames { out[i] = Int16(src[i] * 0x1p15) }
                case .int24, .ima4:
                    let out = plane.bindMemory(to: UInt8.self, capacity: 3 * frames)
                    for i in 0..<frames {
                        let v = UInt32(bitPattern: Int32(src[i] * 0x1p23))
                        out[3 * i] = UInt8(truncatingIfNeeded: v)
                        out[3 * i + 1] = UInt8(truncatingIfNeeded: v >> 8)
                        out[3 * i + 2] = UInt8(truncatingIfNeeded: v >> 16)
                    }
                }
            }
        }
        let storage: Sound.Storage = format == .int8 ? .int8 : format == .int16 ? .int16 : .int24
        return CompactStorage(storage: storage,
                              packed: PackedSamples(format: format, base: UnsafeRawPointer(base), planeBytes: planeBytes),
                              bytes: channels * planeBytes, channelCount: channels, frameCount: frames, sampleRate: audio.sampleRate,
                              allocation: allocation)
    }

    /// A 16-bit PCM file read as its integers (`PCM16Reader`), which this storage takes over: as `int16`, or as
    /// `int8` when every sample's low byte is zero (what `linear` chooses for the same samples decoded to Float).
    static func pcm16(_ pcm: PCM16Audio) -> CompactStorage {
        let frames = pcm.frameCount, channels = pcm.channelCount
        guard pcm.usedBits & 0xFF == 0 else {
            return CompactStorage(storage: .int16,
                                  packed: PackedSamples(format: .int16, base: UnsafeRawPointer(pcm.planes),
                                                        planeBytes: 2 * frames),
                                  bytes: 2 * channels * frames, channelCount: channels, frameCount: frames,
                                  sampleRate: pcm.sampleRate, allocation: UnsafeMutableRawPointer(pcm.planes))
        }
        defer { pcm.deallocate() }
        let allocation = UnsafeMutableRawPointer.allocate(byteCount: channels * frames, alignment: 4)
        let out = allocation.bindMemory(to: Int8.self, capacity: channels * frames)
        for i in 0..<(channels * frames) { out[i] = Int8(truncatingIfNeeded: pcm.planes[i] >> 8) }
        return CompactStorage(storage: .int8,
                              packed: PackedSamples(format: .int8, base: UnsafeRawPointer(allocation), planeBytes: frames),
                              bytes: channels * frames, channelCount: channels, frameCount: frames,
                              sampleRate: pcm.sampleRate, allocation: allocation)
    }

    /// An Apple IMA4 file (CAF or AIFC) kept as its packets, each channel's blocks together, with every packet's
    /// decoder state: nil when `source` is not an IMA4 file. Runs the decoder over every packet once (the cost of a
    /// decode, without its output), so a corrupt packet fails here as the Float decode would. Whole packets only,
    /// trimmed by a CAF packet table, as `AppleIMA4.decodeIfIMA4` decodes. Reads the packets a chunk at a time, so
    /// loading from a file never holds the whole file beside its packets (which also spares the heap the holes such
    /// transient buffers leave: with them, 1,000 sounds took 0.32× their 16-bit size instead of 0.28×).
    static func ima4(_ source: ByteSource, name: String) throws(AudioFileError) -> CompactStorage? {
        guard let layout = try IMA4ContainerLayout.locate(in: source, path: name) else { return nil }
        let channels = layout.channelCount
        guard channels <= 2 else { return nil }   // `Sound` refuses it with its own error
        let lower = min(max(layout.data.lowerBound, 0), source.count)
        let upper = min(max(layout.data.upperBound, lower), source.count)
        let packetBytes = IMA4.bytesPerChannelPacket * channels
        let packets = (upper - lower) / packetBytes
        let keep = try layout.framesToKeep(decodedFrames: packets * IMA4.framesPerPacket, path: name)
        guard !keep.isEmpty else { return nil }
        let planeBytes = packets * IMA4.bytesPerChannelPacket
        let total = channels * (planeBytes + packets)
        try MemoryBudget.requireRoom(fileBytes: total, decodedSamples: 0, path: name)
        let allocation = UnsafeMutableRawPointer.allocate(byteCount: total, alignment: 4)
        let deltas = (allocation + channels * planeBytes).bindMemory(to: Int8.self, capacity: channels * packets)
        do {
            try fill(allocation, deltas: deltas, from: source, at: lower, packets: packets, channels: channels, name: name)
        } catch {
            allocation.deallocate()
            throw error
        }
        return CompactStorage(storage: .ima4,
                              packed: PackedSamples(format: .ima4, base: UnsafeRawPointer(allocation), planeBytes: planeBytes,
                                                    deltas: UnsafePointer(deltas), packetCount: packets,
                                                    firstFrame: keep.lowerBound),
                              bytes: total, channelCount: channels,
                              frameCount: keep.count, sampleRate: layout.sampleRate, allocation: allocation)
    }

    /// Copies `packets` packets from `offset` into per-channel planes at `planes`, and records each block's state
    /// offset in `deltas` (see `PackedSamples.deltas`).
    private static func fill(_ planes: UnsafeMutableRawPointer, deltas: UnsafeMutablePointer<Int8>, from source: ByteSource,
                             at offset: Int, packets: Int, channels: Int, name: String) throws(AudioFileError) {
        let blockBytes = IMA4.bytesPerChannelPacket, packetBytes = blockBytes * channels
        let planeBytes = packets * blockBytes
        let chunkPackets = 1024
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkPackets * packetBytes, alignment: 1)
        defer { buffer.deallocate() }
        var states = [IMA4ChannelState](repeating: IMA4ChannelState(), count: channels)
        var first = 0
        while first < packets {
            let n = min(chunkPackets, packets - first), want = n * packetBytes
            var got = 0
            while got < want {
                let r = try source.read(at: offset + first * packetBytes + got,
                                        into: UnsafeMutableRawBufferPointer(rebasing: buffer[got..<want]), path: name)
                if r == 0 { break }
                got += r
            }
            guard got == want else {
                throw AudioFileError(.unreadable, path: name, "file ended while reading its IMA4 packets (it shrank while loading?)")
            }
            let bytes = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: UInt8.self)
            for q in 0..<n {
                let p = first + q
                for c in 0..<channels {
                    let block = bytes + q * packetBytes + c * blockBytes
                    (planes + c * planeBytes + p * blockBytes).copyMemory(from: block, byteCount: blockBytes)
                    let header = UInt16(block[0]) << 8 | UInt16(block[1])
                    guard states[c].applyHeader(header) else {
                        throw AudioFileError(.corrupt, path: name,
                                             "IMA4 packet \(p) channel \(c) has step index \(header & 0x7F) (at most \(IMA4.maxStepIndex))")
                    }
                    deltas[c * packets + p] = Int8(states[c].predictor - Int32(Int16(bitPattern: header & 0xFF80)))
                    var state = states[c]
                    for k in 0..<(IMA4.framesPerPacket / 2) {
                        let byte = block[2 + k]
                        state = state.expanded(byte & 0x0F).expanded(byte >> 4)
                    }
                    states[c] = state
                }
            }
            first += n
        }
    }

    func deallocate() { allocation.deallocate() }

    /// Every sample as Float, planar, into `out` (`channelCount × frameCount`).
    func decode(into out: UnsafeMutablePointer<Float>) {
        guard case .ima4 = packed.format else {
            for c in 0..<channelCount {
                packed.integers(channel: c, from: 0, count: frameCount, into: out + c * frameCount)
            }
            let scale = packed.scale
            for i in 0..<(channelCount * frameCount) { out[i] *= scale }
            return
        }
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: 2 * IMA4Packets.framesPerPacket)
        defer { scratch.deallocate() }
        let stereo = channelCount == 2
        let right = stereo ? out + frameCount : out
        var first = 0
        // `IMA4Packets.convert` in window-sized pieces (its scratch handles the partial packets at the ends).
        while first < frameCount {
            let n = min(ResamplerTables.windowFrames, frameCount - first)
            IMA4Packets.convert(packed, stereo: stereo, from: first, width: n, left: out + first, right: right + first,
                                scratch: scratch, table: IMA4Packets.table)
            first += n
        }
    }

    /// One sample, for tests and tools.
    func sample(channel: Int, frame: Int) -> Float {
        guard case .ima4 = packed.format else { return packed.sample(channel: channel, frame) }
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: 2 * IMA4Packets.framesPerPacket)
        defer { scratch.deallocate() }
        var cached = -1
        let (l, r) = IMA4Packets.frame(packed, stereo: channelCount == 2, frame, scratch: scratch, cached: &cached,
                                       table: IMA4Packets.table)
        return channel == 0 ? l : r
    }
}
