// Values: parsed on the thread that feeds an `AudioFileStream`.

/// The header chunks an `AudioFileStream` reads whole, each parsed from its body alone (RIFF/WAVE `fmt `, AIFF/AIFC
/// `COMM`, CAF `desc` and `pakt`), with the checks the whole-file decoders make.
enum StreamHeaderChunks {
    /// WAVE `fmt ` (Microsoft RIFF spec; WAVE_FORMAT_EXTENSIBLE takes its codec from the sub-format GUID).
    static func wavFormat(_ body: [UInt8], bigEndian: Bool, name: String) throws(AudioFileError) -> AudioStreamFormat {
        var r = ByteReader(body, path: name, context: "fmt chunk")
        r.littleEndian = !bigEndian
        var tag = try r.readUInt16()
        let channels = Int(try r.readUInt16()), rate = Int(try r.readUInt32())
        _ = try r.readUInt32()
        let blockAlign = Int(try r.readUInt16()), bits = Int(try r.readUInt16())
        var samplesPerBlock = 0
        if body.count >= 20 {
            let extra = Int(try r.readUInt16())
            if tag == 0xFFFE, extra >= 22 {
                try r.skip(6)   // valid bits, channel mask
                tag = try r.readUInt16()
            } else if tag == 0x11, extra >= 2 {
                samplesPerBlock = Int(try r.readUInt16())
            }
        }
        guard channels > 0, channels <= 1024, rate > 0, blockAlign > 0 else {
            throw AudioFileError(.corrupt, path: name, "fmt chunk gives \(channels) channels at \(rate) Hz, block \(blockAlign)")
        }
        switch tag {
        case 0x0001 where [8, 16, 24, 32].contains(bits) && blockAlign == channels * bits / 8:
            return AudioStreamFormat(codec: .pcm, sampleRate: Double(rate), channelCount: channels, bitsPerSample: bits,
                                     bytesPerPacket: blockAlign, framesPerPacket: 1, isBigEndian: bigEndian, isUnsigned: bits == 8)
        case 0x0003 where (bits == 32 || bits == 64) && blockAlign == channels * bits / 8:
            return AudioStreamFormat(codec: .float, sampleRate: Double(rate), channelCount: channels, bitsPerSample: bits,
                                     bytesPerPacket: blockAlign, framesPerPacket: 1, isBigEndian: bigEndian)
        case 0x0011 where bits == 4 && !bigEndian:
            // Each block: a 4-byte header per channel (its first sample and step index), then 4-bit codes.
            let perBlock = (blockAlign - 4 * channels) * 2 / channels + 1
            guard blockAlign > 4 * channels, samplesPerBlock == 0 || samplesPerBlock == perBlock else {
                throw AudioFileError(.corrupt, path: name, "IMA ADPCM block of \(blockAlign) bytes cannot hold \(samplesPerBlock) frames")
            }
            return AudioStreamFormat(codec: .imaADPCM, sampleRate: Double(rate), channelCount: channels, bitsPerSample: 0,
                                     bytesPerPacket: blockAlign, framesPerPacket: perBlock)
        default:
            throw AudioFileError(.unsupported, path: name,
                                 "WAV codec 0x\(String(tag, radix: 16)) with \(bits)-bit samples cannot be parsed as it arrives")
        }
    }

    /// AIFF / AIFC `COMM` (AIFF 1.3, AIFF-C draft): channels, frames, sample size, 80-bit rate, and for AIFC the
    /// compression type.
    static func aiffFormat(_ body: [UInt8], aifc: Bool, name: String) throws(AudioFileError) -> (AudioStreamFormat, frames: Int) {
        var r = ByteReader(body, path: name, context: "COMM chunk")
        let channels = Int(try r.readUInt16()), frames = Int(try r.readUInt32()), bits = Int(try r.readUInt16())
        let rate = try r.readFloat80()
        let type = aifc ? try r.readFourCC() : FourCC("NONE")
        guard channels > 0, channels <= 1024, rate.isFinite, rate >= 1, rate <= 1e7 else {
            throw AudioFileError(.corrupt, path: name, "COMM chunk gives \(channels) channels at \(rate) Hz")
        }
        let bytes = (bits + 7) / 8
        switch type {
        case FourCC("NONE"), FourCC("twos"), FourCC("sowt"):
            guard (1...32).contains(bits) else { throw AudioFileError(.corrupt, path: name, "COMM chunk gives \(bits)-bit samples") }
            return (AudioStreamFormat(codec: .pcm, sampleRate: rate, channelCount: channels, bitsPerSample: bytes * 8,
                                      bytesPerPacket: bytes * channels, framesPerPacket: 1,
                                      isBigEndian: type != FourCC("sowt")), frames)
        case FourCC("fl32"), FourCC("FL32"), FourCC("fl64"), FourCC("FL64"):
            let width = type == FourCC("fl32") || type == FourCC("FL32") ? 32 : 64
            return (AudioStreamFormat(codec: .float, sampleRate: rate, channelCount: channels, bitsPerSample: width,
                                      bytesPerPacket: width / 8 * channels, framesPerPacket: 1, isBigEndian: true), frames)
        case IMA4.formatID:
            return (AudioStreamFormat(codec: .ima4, sampleRate: rate, channelCount: channels, bitsPerSample: 0,
                                      bytesPerPacket: IMA4.bytesPerChannelPacket * channels,
                                      framesPerPacket: IMA4.framesPerPacket), frames * IMA4.framesPerPacket)
        default:
            throw AudioFileError(.unsupported, path: name, "AIFC compression \(type) cannot be parsed as it arrives")
        }
    }

    /// CAF `desc` (Apple's CAF specification): the AudioStreamBasicDescription.
    static func cafFormat(_ body: [UInt8], name: String) throws(AudioFileError) -> AudioStreamFormat {
        var r = ByteReader(body, path: name, context: "desc chunk")
        let rate = try r.readFloat64(), id = try r.readFourCC(), flags = try r.readUInt32()
        let bytesPerPacket = Int(try r.readUInt32()), framesPerPacket = Int(try r.readUInt32())
        let channels = Int(try r.readUInt32()), bits = Int(try r.readUInt32())
        guard rate.isFinite, rate >= 1, rate <= 1e7, channels > 0, channels <= 1024 else {
            throw AudioFileError(.corrupt, path: name, "desc chunk gives \(channels) channels at \(rate) Hz")
        }
        switch id {
        case FourCC("lpcm"):
            let float = flags & 1 != 0, little = flags & 2 != 0
            guard framesPerPacket == 1, bits > 0, bits <= 64, bits % 8 == 0, bytesPerPacket == channels * bits / 8,
                  !float || bits == 32 || bits == 64 else {
                throw AudioFileError(.unsupported, path: name, "CAF lpcm layout (\(bits) bits, \(bytesPerPacket) bytes a packet) cannot be parsed as it arrives")
            }
            return AudioStreamFormat(codec: float ? .float : .pcm, sampleRate: rate, channelCount: channels,
                                     bitsPerSample: bits, bytesPerPacket: bytesPerPacket, framesPerPacket: 1,
                                     isBigEndian: !little)
        case IMA4.formatID:
            guard bytesPerPacket == IMA4.bytesPerChannelPacket * channels, framesPerPacket == IMA4.framesPerPacket else {
                throw AudioFileError(.corrupt, path: name, "CAF ima4 with \(bytesPerPacket)-byte packets of \(framesPerPacket) frames")
            }
            return AudioStreamFormat(codec: .ima4, sampleRate: rate, channelCount: channels, bitsPerSample: 0,
                                     bytesPerPacket: bytesPerPacket, framesPerPacket: framesPerPacket)
        default:
            throw AudioFileError(.unsupported, path: name, "CAF codec \(id) cannot be parsed as it arrives")
        }
    }

    /// CAF `pakt`: packets, valid frames, priming and remainder frames.
    static func cafPacketTable(_ body: [UInt8], name: String) throws(AudioFileError) -> (packets: Int, valid: Int, priming: Int, remainder: Int) {
        var r = ByteReader(body, path: name, context: "pakt chunk")
        let packets = try r.readInt64(), valid = try r.readInt64(), priming = Int(try r.readInt32()), remainder = Int(try r.readInt32())
        guard packets >= 0, valid >= 0, priming >= 0, remainder >= 0, packets < 1 << 40, valid < 1 << 50 else {
            throw AudioFileError(.corrupt, path: name, "CAF packet table has impossible counts (packets \(packets), valid \(valid), priming \(priming), remainder \(remainder))")
        }
        return (Int(packets), Int(valid), priming, remainder)
    }
}
