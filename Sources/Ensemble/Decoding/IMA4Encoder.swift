/// Encodes audio as Apple IMA4 packets: per packet and channel, a 2-byte header and 64 four-bit codes.
enum IMA4Encoder {
    /// Converts a float sample to the int16 the codec works on, clamping out-of-range values and mapping NaN to 0.
    static func int16Sample(_ value: Float) -> Int32 {
        guard value.isFinite else { return value.isNaN ? 0 : (value > 0 ? 32767 : -32768) }
        let scaled = (value * 32768).rounded()
        return Int32(min(max(scaled, -32768), 32767))
    }

    /// The number of packets needed for `frameCount` frames; the last one is padded with silence.
    static func packetCount(frames frameCount: Int) -> Int {
        frameCount / IMA4.framesPerPacket + (frameCount % IMA4.framesPerPacket == 0 ? 0 : 1)
    }

    /// Encodes planar channels (equal lengths) into interleaved packets: packet 0 of channel 0, of channel 1, …,
    /// then packet 1 of each channel.
    ///
    /// Each channel's state carries over between packets and each header stores that running state (predictor with
    /// its low 7 bits cleared). A decoder following ffmpeg's rule therefore keeps its precise predictor across
    /// packets and reconstructs exactly what the encoder tracked, while a decoder that starts mid-stream still
    /// resynchronises to within 127 of it.
    static func encode(_ channels: [[Float]]) -> [UInt8] {
        let channelCount = channels.count
        let frameCount = channels.first?.count ?? 0
        let packets = packetCount(frames: frameCount)
        var out = [UInt8]()
        out.reserveCapacity(packets * channelCount * IMA4.bytesPerChannelPacket)
        var states = [IMA4ChannelState](repeating: IMA4ChannelState(), count: channelCount)
        var block = [Int32](repeating: 0, count: IMA4.framesPerPacket)
        for packet in 0..<packets {
            let first = packet * IMA4.framesPerPacket
            let available = min(IMA4.framesPerPacket, frameCount - first)
            for channel in 0..<channelCount {
                channels[channel].withUnsafeBufferPointer { samples in
                    for i in 0..<IMA4.framesPerPacket {
                        block[i] = i < available ? int16Sample(samples[first + i]) : 0
                    }
                }
                var state = states[channel]
                let header = UInt16(bitPattern: Int16(truncatingIfNeeded: state.predictor)) & 0xFF80 | UInt16(state.stepIndex)
                // Run the decoder's own header rule so the tracked state cannot drift from what a decoder sees.
                _ = state.applyHeader(header)
                out.append(UInt8(header >> 8))
                out.append(UInt8(header & 0xFF))
                for pair in 0..<(IMA4.framesPerPacket / 2) {
                    let low = nearestCode(to: block[2 * pair], from: &state)
                    let high = nearestCode(to: block[2 * pair + 1], from: &state)
                    out.append(low | high << 4)
                }
                states[channel] = state
            }
        }
        return out
    }

    /// Picks the code whose reconstruction lands closest to `target`, advances `state` by it, and returns it.
    ///
    /// Trying all 16 codes instead of the textbook successive-approximation quantizer costs little and avoids
    /// that quantizer's bias, because the dequantizer's truncations make the textbook choice occasionally not the
    /// closest reachable value.
    private static func nearestCode(to target: Int32, from state: inout IMA4ChannelState) -> UInt8 {
        var bestCode: UInt8 = 0
        var bestState = state.expanded(0)
        var bestError = abs(bestState.predictor - target)
        for code in UInt8(1)...15 {
            let candidate = state.expanded(code)
            let error = abs(candidate.predictor - target)
            if error < bestError {
                bestError = error
                bestCode = code
                bestState = candidate
            }
        }
        state = bestState
        return bestCode
    }
}
