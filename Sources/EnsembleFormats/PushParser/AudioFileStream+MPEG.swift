// Whichever thread feeds the parser: MPEG audio frames, their sync, resync and the Xing/VBRI tags.

extension AudioFileStream {
    /// Looks for a frame header that the next frame confirms (or the end of the stream, for a one-frame file).
    func mpegSearch() throws(AudioFileError) {
        let raw = buffer.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[head...]) }
        var k = 0
        var found: (Int, MPEGFrameHeader)?
        while k + 4 <= raw.count {
            if let h = MPEGFrameHeader(raw, at: k), mpegReference.map({ $0.continues(h) }) ?? true {
                if k + h.frameLength + 4 <= raw.count {
                    if let next = MPEGFrameHeader(raw, at: k + h.frameLength), h.continues(next) {
                        found = (k, h)
                        break
                    }
                } else if finished && k + h.frameLength <= raw.count && everLocked {
                    found = (k, h)
                    break
                } else if !finished {
                    break // wait for the next frame's header
                }
            }
            k += 1
        }
        let skippedHere = found?.0 ?? k
        consume(skippedHere)
        skipped += skippedHere
        searchedSinceLock += skippedHere
        guard let (_, header) = found else {
            if !everLocked && searchedSinceLock > Self.syncSearchLimit {
                throw AudioFileError(.unsupported, path: name,
                                     "not a recognised audio stream (no MPEG frames in its first \(Self.syncSearchLimit) bytes)")
            }
            return
        }
        if everLocked && skipped > 0 && !seekedSearch {
            events.append(.resynchronized(byteOffset: position, skippedBytes: skipped))
        }
        skipped = 0
        searchedSinceLock = 0
        seekedSearch = false
        if !everLocked {
            everLocked = true
            try lock(on: header, raw: buffer.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[head...]) })
        }
        state = .mpegFrames
    }

    /// The first frame: the stream's format, and the Xing/VBRI tag if the frame holds one (it is not audio).
    private func lock(on header: MPEGFrameHeader, raw: UnsafeRawBufferPointer) throws(AudioFileError) {
        mpegReference = header
        if container == nil {
            container = .mp3
            property(.fileFormat(.mp3))
        }
        let f = AudioStreamFormat(codec: .mpeg, sampleRate: Double(header.sampleRate), channelCount: header.channelCount,
                                  bitsPerSample: 0, bytesPerPacket: 0, framesPerPacket: header.samples)
        setFormat(f)
        firstFrameOffset = position
        var rate = header.bitRate
        if let tag = MPEGInfoTag(UnsafeRawBufferPointer(rebasing: raw[0..<min(header.frameLength, raw.count)]), header: header) {
            infoTag = tag
            consume(header.frameLength)
            property(.seekTable(tag.kind == .xing ? "xing" : "vbri"))
            if let frames = tag.frames {
                audioDataPacketCount = frames
                property(.audioDataPacketCount(frames))
                if let bytes = tag.bytes, frames > 0 {
                    rate = Int((Double(bytes) * 8 * Double(header.sampleRate) / Double(frames * header.samples)).rounded())
                }
            }
            if let bytes = tag.bytes {
                let audioBytes = max(bytes - header.frameLength, 0)
                audioDataByteCount = audioBytes
                property(.audioDataByteCount(audioBytes))
            }
            if let delay = tag.delay, let padding = tag.padding {
                primingFrames = delay
                remainderFrames = padding
                property(.packetTable(primingFrames: delay, remainderFrames: padding))
            }
            if let frames = tag.frames {
                let total = max(frames * header.samples - primingFrames - remainderFrames, 0)
                frameCount = total
                property(.frameCount(total))
            }
        }
        bitRate = rate
        property(.bitRate(rate))
        dataOffset = position
        property(.dataOffset(position))
        isReadyToProducePackets = true
        events.append(.readyToProducePackets)
    }

    /// Hands out whole frames while their headers continue the stream; anything else sends it back to searching.
    func mpegFrames() throws(AudioFileError) {
        guard let reference = mpegReference else { return }
        var bytes: [UInt8] = []
        var descriptions: [AudioStreamPacketDescription] = []
        var k = 0
        let raw = buffer.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[head...]) }
        var lost = false
        while k + 4 <= raw.count {
            guard let h = MPEGFrameHeader(raw, at: k), reference.continues(h) else {
                lost = true
                break
            }
            guard k + h.frameLength <= raw.count else { break }
            descriptions.append(AudioStreamPacketDescription(byteOffset: position + k, byteCount: h.frameLength, frameCount: h.samples))
            k += h.frameLength
        }
        if k > 0 {
            bytes = Array(raw[0..<k])
            for d in descriptions {
                let index = nextPacket + descriptions.firstIndex(of: d)!
                if index == frameOffsets.count { frameOffsets.append(d.byteOffset) }
            }
            events.append(.packets(AudioStreamPackets(firstPacket: nextPacket, bytes: bytes, descriptions: descriptions)))
            nextPacket += descriptions.count
            consume(k)
        }
        if lost { state = .mpegSearch }
    }

    /// Where an estimated MPEG seek lands: the Xing table of contents (1 % steps, interpolated), the VBRI table
    /// (runs of frames), or the average bit rate.
    func estimatedOffset(packet: Int, format: AudioStreamFormat, dataOffset: Int) -> Int {
        let start = firstFrameOffset ?? dataOffset
        if let tag = infoTag, let frames = tag.frames, frames > 0 {
            if let toc = tag.xingTOC, let bytes = tag.bytes {
                let percent = min(max(Double(packet) / Double(frames) * 100, 0), 99.999)
                let i = Int(percent)
                let a = Double(toc[i]), b = i < 99 ? Double(toc[i + 1]) : 256
                let fraction = (a + (b - a) * (percent - Double(i))) / 256
                return start + Int(fraction * Double(bytes))
            }
            if let entries = tag.vbriEntries, tag.vbriFramesPerEntry > 0 {
                let whole = min(packet / tag.vbriFramesPerEntry, entries.count)
                var offset = dataOffset + entries.prefix(whole).reduce(0, +)
                if whole < entries.count {
                    let within = Double(packet % tag.vbriFramesPerEntry) / Double(tag.vbriFramesPerEntry)
                    offset += Int(within * Double(entries[whole]))
                }
                return offset
            }
        }
        let seconds = Double(packet * format.framesPerPacket) / format.sampleRate
        return dataOffset + Int(seconds * Double(bitRate ?? 128_000) / 8)
    }
}
