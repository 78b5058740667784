/// Wraps encoded IMA4 packets in a CAF or AIFC container.
enum IMA4Writer {
    /// A CAF file: `caff` header, `desc`, `pakt`, `data`.
    ///
    /// IMA4 has fixed-size packets, so the `pakt` carries no packet descriptions; it exists to record the true
    /// frame count (`validFrames`) and the silence padding the last packet (`remainderFrames`), so readers that
    /// honour it, ours included, return exactly the frames that were written.
    static func caf(packets: [UInt8], sampleRate: Double, channelCount: Int, frameCount: Int) -> [UInt8] {
        let packetCount = IMA4Encoder.packetCount(frames: frameCount)
        var w = ByteWriter(capacity: packets.count + 128)
        w.append(CAFFile.magic)
        w.append(UInt16(1)) // version
        w.append(UInt16(0)) // flags

        w.append(FourCC("desc"))
        w.append(Int64(32))
        w.append(sampleRate)
        w.append(IMA4.formatID)
        w.append(UInt32(0)) // format flags: none for ima4
        w.append(UInt32(IMA4.bytesPerChannelPacket * channelCount))
        w.append(UInt32(IMA4.framesPerPacket))
        w.append(UInt32(channelCount))
        w.append(UInt32(0)) // bits per channel: 0 for compressed formats, as Core Audio writes it

        w.append(FourCC("pakt"))
        w.append(Int64(24))
        w.append(Int64(packetCount))
        w.append(Int64(frameCount))
        w.append(Int32(0)) // priming frames: the encoder has no delay
        w.append(Int32(packetCount * IMA4.framesPerPacket - frameCount))

        w.append(FourCC("data"))
        w.append(Int64(4 + packets.count))
        w.append(UInt32(0)) // edit count
        w.append(contentsOf: packets)
        return w.bytes
    }

    /// An AIFF-C file: `FORM`/`AIFC` with `FVER`, `COMM` (compression `ima4`, name "IMA 4:1") and `SSND`.
    ///
    /// `numSampleFrames` holds the packet count, not the frame count: that is what ffmpeg's AIFF muxer writes and
    /// what its demuxer (multiplying by 64) expects, matching Apple's files. AIFC has no field for padding, so a
    /// reader sees the frame count rounded up to a multiple of 64.
    static func aifc(packets: [UInt8], sampleRate: Double, channelCount: Int, frameCount: Int) -> [UInt8] {
        let packetCount = IMA4Encoder.packetCount(frames: frameCount)
        let compressionName: [UInt8] = [7] + Array("IMA 4:1".utf8) // Pascal string; 8 bytes, so no pad byte
        let commSize = 18 + 4 + compressionName.count
        let ssndSize = 8 + packets.count
        let pad = ssndSize & 1
        let formSize = 4 + (8 + 4) + (8 + commSize) + (8 + ssndSize + pad)

        var w = ByteWriter(capacity: formSize + 8)
        w.append(FourCC("FORM"))
        w.append(UInt32(truncatingIfNeeded: formSize))
        w.append(FourCC("AIFC"))

        w.append(FourCC("FVER"))
        w.append(UInt32(4))
        w.append(UInt32(0xA280_5140)) // AIFC version 1 timestamp, the only version defined

        w.append(FourCC("COMM"))
        w.append(UInt32(commSize))
        w.append(Int16(truncatingIfNeeded: channelCount))
        w.append(UInt32(truncatingIfNeeded: packetCount))
        w.append(Int16(16)) // sample size of the decoded audio
        w.appendFloat80(sampleRate)
        w.append(IMA4.formatID)
        w.append(contentsOf: compressionName)

        w.append(FourCC("SSND"))
        w.append(UInt32(truncatingIfNeeded: ssndSize))
        w.append(UInt32(0)) // offset
        w.append(UInt32(0)) // block size
        w.append(contentsOf: packets)
        if pad == 1 { w.append(UInt8(0)) }
        return w.bytes
    }

    /// Largest packet payload an AIFC can describe: FORM and SSND sizes are 32-bit.
    static let maxAIFCPayload = Int(UInt32.max) - 256
}
