// The thread that feeds the stream (whoever owns the `AudioFileStreamDecoder`).

/// Turns the constant-size packets an `AudioFileStream` hands out into interleaved Float samples, with the same
/// arithmetic as the whole-file decoders, so a stream decodes to the same bits as `AudioFile.decode`:
/// - integer PCM is scaled by a power of two (×2⁻⁷ for 8-bit, ×2⁻¹⁵, ×2⁻²³, ×2⁻³¹), which is exact, as
///   libsndfile's normalised float read is; 8-bit WAV is unsigned, offset by 128;
/// - float is taken as is (64-bit rounded once to 32);
/// - Apple IMA4 runs `IMA4ChannelState` packet after packet (its predictor carries across packets);
/// - WAV IMA ADPCM decodes each block from its own header (first sample and step index per channel, then 4-bit
///   codes, low nibble first, in 4-byte groups per channel), with the same dequantiser.
struct StreamPacketDecoder {
    let format: AudioStreamFormat
    let name: String
    private var ima4States: [IMA4ChannelState]

    init(format: AudioStreamFormat, name: String) {
        self.format = format
        self.name = name
        ima4States = [IMA4ChannelState](repeating: IMA4ChannelState(), count: format.channelCount)
    }

    /// Appends the samples of the whole packets in `bytes` to `out`.
    mutating func decode(_ bytes: [UInt8], into out: inout [Float]) throws(AudioFileError) {
        let c = format.channelCount
        switch format.codec {
        case .pcm:
            let width = format.bitsPerSample / 8, n = bytes.count / width
            let scale = Float(sign: .plus, exponent: -(format.bitsPerSample - 1), significand: 1)
            out.reserveCapacity(out.count + n)
            for i in 0..<n {
                var v: Int32 = 0
                for k in 0..<width {
                    let b = Int32(bytes[i * width + (format.isBigEndian ? k : width - 1 - k)])
                    v = v << 8 | b
                }
                // Sign-extend from the sample's width (unsigned 8-bit WAV is offset instead).
                if format.isUnsigned {
                    v -= 128
                } else if width < 4 {
                    let shift = Int32(32 - 8 * width)
                    v = (v << shift) >> shift
                }
                out.append(Float(v) * scale)
            }
        case .float:
            let width = format.bitsPerSample / 8, n = bytes.count / width
            for i in 0..<n {
                var bits: UInt64 = 0
                for k in 0..<width {
                    bits = bits << 8 | UInt64(bytes[i * width + (format.isBigEndian ? k : width - 1 - k)])
                }
                let value = width == 4 ? Float(bitPattern: UInt32(bits)) : Float(Double(bitPattern: bits))
                // NaN and infinity play as silence (`NonFiniteSamples`).
                out.append(value.isFinite ? value : 0)
            }
        case .ima4:
            let packets = bytes.count / format.bytesPerPacket
            let start = out.count
            out.append(contentsOf: repeatElement(0, count: packets * IMA4.framesPerPacket * c))
            for p in 0..<packets {
                for ch in 0..<c {
                    let bad = bytes.withUnsafeBufferPointer { src in
                        out.withUnsafeMutableBufferPointer { dst in
                            ima4States[ch].decodeBlock(src.baseAddress! + (p * c + ch) * IMA4.bytesPerChannelPacket,
                                                       into: dst.baseAddress! + start + p * IMA4.framesPerPacket * c + ch,
                                                       stride: c)
                        }
                    }
                    if let bad {
                        throw AudioFileError(.corrupt, path: name, "IMA4 packet channel \(ch) has step index \(bad)")
                    }
                }
            }
        case .imaADPCM:
            let block = format.bytesPerPacket, frames = format.framesPerPacket
            for p in 0..<(bytes.count / block) {
                try decodeIMABlock(bytes, at: p * block, frames: frames, into: &out)
            }
            let short = AudioFileStream.shortBlockFrames(bytes.count % block, format)
            if short > 0 { try decodeIMABlock(bytes, at: bytes.count / block * block, frames: short, into: &out) }
        case .mpeg:
            throw AudioFileError(.unsupported, path: name, "MPEG packets are decoded by libmpg123, not here")
        }
    }

    private func decodeIMABlock(_ bytes: [UInt8], at base: Int, frames: Int, into out: inout [Float]) throws(AudioFileError) {
        let c = format.channelCount
        let scale: Float = 1.0 / 32768.0
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: frames * c))
        for ch in 0..<c {
            let h = base + 4 * ch
            var state = IMA4ChannelState()
            state.predictor = Int32(Int16(bitPattern: UInt16(bytes[h]) | UInt16(bytes[h + 1]) << 8))
            state.stepIndex = Int(bytes[h + 2])
            guard state.stepIndex <= IMA4.maxStepIndex else {
                throw AudioFileError(.corrupt, path: name, "IMA ADPCM block has step index \(state.stepIndex)")
            }
            out[start + ch] = Float(state.predictor) * scale
            // After the headers, each channel has 4 bytes (8 codes) in turn.
            var frame = 1
            var group = 0
            while frame < frames {
                let g = base + 4 * c + (group * c + ch) * 4
                for k in 0..<8 where frame < frames {
                    let byte = bytes[g + k / 2]
                    let code = k % 2 == 0 ? byte & 0x0F : byte >> 4
                    out[start + frame * c + ch] = Float(state.expand(code)) * scale
                    frame += 1
                }
                group += 1
            }
        }
    }
}
