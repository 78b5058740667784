/// Constants of Apple's IMA4 packet layout and the IMA ADPCM tables it shares with every IMA variant.
package enum IMA4 {
    package static let framesPerPacket = 64
    /// Two header bytes plus 64 four-bit codes, per channel.
    package static let bytesPerChannelPacket = 34
    static let formatID = FourCC("ima4")

    /// The 89 quantizer step sizes of IMA ADPCM.
    package static let stepTable: [Int32] = [
        7, 8, 9, 10, 11, 12, 13, 14, 16, 17,
        19, 21, 23, 25, 28, 31, 34, 37, 41, 45,
        50, 55, 60, 66, 73, 80, 88, 97, 107, 118,
        130, 143, 157, 173, 190, 209, 230, 253, 279, 307,
        337, 371, 408, 449, 494, 544, 598, 658, 724, 796,
        876, 963, 1060, 1166, 1282, 1411, 1552, 1707, 1878, 2066,
        2272, 2499, 2749, 3024, 3327, 3660, 4026, 4428, 4871, 5358,
        5894, 6484, 7132, 7845, 8630, 9493, 10442, 11487, 12635, 13899,
        15289, 16818, 18500, 20350, 22385, 24623, 27086, 29794, 32767,
    ]

    /// How each code moves the step index: small codes shrink the step, large ones grow it.
    package static let indexTable: [Int] = [-1, -1, -1, -1, 2, 4, 6, 8, -1, -1, -1, -1, 2, 4, 6, 8]

    package static let maxStepIndex = 88
}

/// The running predictor and step index of one channel, shared by decoder and encoder so the encoder can track
/// exactly what a decoder will reconstruct.
package struct IMA4ChannelState: Equatable {
    package var predictor: Int32 = 0
    package var stepIndex: Int = 0

    /// Adopts a packet header the way ffmpeg's `adpcm_ima_qt` decoder (and, by its account, Apple's) does.
    ///
    /// The header holds only the top 9 bits of the predictor. When its step index matches the running one and its
    /// predictor is within 127 of the running predictor, the header is taken to describe the same state and the
    /// running predictor (which has all 16 bits) is kept; otherwise the decoder resynchronises from the header.
    /// Returns false for a step index outside the table.
    package mutating func applyHeader(_ header: UInt16) -> Bool {
        let headerPredictor = Int32(Int16(bitPattern: header & 0xFF80))
        let headerStepIndex = Int(header & 0x7F)
        if headerStepIndex != stepIndex || abs(headerPredictor - predictor) > 0x7F {
            predictor = headerPredictor
            stepIndex = headerStepIndex
        }
        return stepIndex <= IMA4.maxStepIndex
    }

    /// The sample `code` reconstructs from this state, and the state after it, without changing `self`.
    ///
    /// Uses the shift-and-add form of the IMA dequantizer (step/8 + step/4 + step/2 + step), whose truncations
    /// differ from the multiply form and are what Apple and ffmpeg reproduce.
    package func expanded(_ code: UInt8) -> IMA4ChannelState {
        let unclamped = predictor + Self.difference(code, stepIndex: stepIndex)
        return IMA4ChannelState(predictor: min(max(unclamped, -32768), 32767),
                                stepIndex: Self.nextStepIndex(code, after: stepIndex))
    }

    /// The signed difference `code` adds to the predictor at `stepIndex` (the shift-and-add dequantizer).
    package static func difference(_ code: UInt8, stepIndex: Int) -> Int32 {
        let step = IMA4.stepTable[stepIndex]
        var diff = step >> 3
        if code & 4 != 0 { diff += step }
        if code & 2 != 0 { diff += step >> 1 }
        if code & 1 != 0 { diff += step >> 2 }
        return code & 8 != 0 ? -diff : diff
    }

    /// The step index after `code`.
    package static func nextStepIndex(_ code: UInt8, after stepIndex: Int) -> Int {
        min(max(stepIndex + IMA4.indexTable[Int(code & 0x0F)], 0), IMA4.maxStepIndex)
    }

    /// Applies one 4-bit code and returns the reconstructed sample.
    package mutating func expand(_ code: UInt8) -> Int16 {
        self = expanded(code)
        return Int16(truncatingIfNeeded: predictor)
    }

    /// Decodes one channel's block of a packet (`IMA4.bytesPerChannelPacket` bytes at `block`): its big-endian
    /// header (`applyHeader`), then its 64 codes, low nibble first (the earlier sample sits in the low bits), as
    /// int16 / 32768 into `out[0]`, `out[stride]`, … `out[63 × stride]`. The one packet reader of the in-memory
    /// and the streamed decoder. Returns the header's step index when it is out of range (nothing written), else nil.
    mutating func decodeBlock(_ block: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<Float>, stride: Int) -> Int? {
        let header = UInt16(block[0]) << 8 | UInt16(block[1])
        guard applyHeader(header) else { return Int(header & 0x7F) }
        let scale: Float = 1.0 / 32768.0
        var state = self
        var o = out
        for i in 0..<(IMA4.framesPerPacket / 2) {
            let byte = block[2 + i]
            o.pointee = Float(state.expand(byte & 0x0F)) * scale
            o += stride
            o.pointee = Float(state.expand(byte >> 4)) * scale
            o += stride
        }
        self = state
        return nil
    }

    package init(predictor: Int32 = 0, stepIndex: Int = 0) {
        self.predictor = predictor
        self.stepIndex = stepIndex
    }
}

/// Decodes raw Apple IMA4 packets (the payload of a CAF `data` or AIFC `SSND` chunk).
package enum IMA4Decoder {
    /// Largest number of samples (all channels) one decode may produce: 2^31 floats is 8 GiB, beyond any sound a
    /// mixer should hold in memory, and far beyond what a header-only claim could justify.
    static let maxTotalSamples = 1 << 31

    /// Decodes every whole packet in `bytes[range]` to planar floats (int16 / 32768).
    ///
    /// Packets are `34 × channelCount` bytes, one 34-byte block per channel in channel order. A trailing partial
    /// packet cannot be decoded (its codes would run short) and is deliberately dropped rather than rejected: the
    /// container parsers already report a file cut short of its declared size, so what remains here is a writer's
    /// stray tail. Output size comes from the bytes present, never from a header's claim.
    package static func decode(_ bytes: [UInt8], range: Range<Int>, channelCount: Int, path: String) throws(AudioFileError) -> [[Float]] {
        guard channelCount > 0 else {
            throw AudioFileError(.corrupt, path: path, "IMA4 stream has no channels")
        }
        let lower = min(max(range.lowerBound, 0), bytes.count)
        let upper = min(max(range.upperBound, lower), bytes.count)
        let (packetBytes, overflow) = IMA4.bytesPerChannelPacket.multipliedReportingOverflow(by: channelCount)
        guard !overflow else {
            throw AudioFileError(.unsupported, path: path, "IMA4 stream with \(channelCount) channels is not supported")
        }
        let packetCount = (upper - lower) / packetBytes
        let frameCount = packetCount * IMA4.framesPerPacket
        guard frameCount <= maxTotalSamples / channelCount else {
            throw AudioFileError(.tooLarge, path: path,
                                 "IMA4 stream would decode to \(frameCount) frames × \(channelCount) channels, more than the \(maxTotalSamples)-sample limit")
        }
        var output = [[Float]](repeating: [Float](repeating: 0, count: frameCount), count: channelCount)
        var states = [IMA4ChannelState](repeating: IMA4ChannelState(), count: channelCount)
        var badStep: (packet: Int, channel: Int, step: Int)?
        bytes.withUnsafeBufferPointer { source in
            // Blocks stay below `lower + packetCount * packetBytes <= upper <= bytes.count` by construction.
            guard let base = source.baseAddress else { return }
            var position = lower
            for packet in 0..<packetCount {
                let firstFrame = packet * IMA4.framesPerPacket
                for channel in 0..<channelCount {
                    let bad = output[channel].withUnsafeMutableBufferPointer { samples in
                        states[channel].decodeBlock(base + position, into: samples.baseAddress! + firstFrame, stride: 1)
                    }
                    if let bad {
                        badStep = (packet, channel, bad)
                        return
                    }
                    position += IMA4.bytesPerChannelPacket
                }
            }
        }
        if let (packet, channel, step) = badStep {
            throw AudioFileError(.corrupt, path: path,
                                 "IMA4 packet \(packet) channel \(channel) has step index \(step) (at most \(IMA4.maxStepIndex))")
        }
        return output
    }
}
