/// Audio decoded to 32-bit float, one array per channel (planar), as the mixer reads it.
public struct DecodedAudio: Sendable, Equatable {
    /// Frames per second.
    public var sampleRate: Double
    /// `channels[c][i]` is sample `i` of channel `c`; every channel has `frameCount` samples.
    public var channels: [[Float]]
    /// Samples the file held as NaN or infinity, decoded as silence (0 for every format but float PCM).
    public var nonFiniteSamples = 0

    /// Audio from planar channels, which must be non-empty and of equal length (a programming error otherwise).
    public init(sampleRate: Double, channels: [[Float]]) {
        precondition(!channels.isEmpty, "DecodedAudio needs at least one channel")
        precondition(channels.allSatisfy { $0.count == channels[0].count }, "channels must have equal length")
        self.sampleRate = sampleRate
        self.channels = channels
    }

    /// Builds planar audio from interleaved samples (`frame0ch0, frame0ch1, …`).
    public init(sampleRate: Double, interleaved: [Float], channelCount: Int) {
        precondition(channelCount > 0 && interleaved.count % channelCount == 0)
        let frames = interleaved.count / channelCount
        var planar = [[Float]](repeating: [], count: channelCount)
        for c in 0..<channelCount {
            planar[c] = [Float](unsafeUninitializedCapacity: frames) { buffer, count in
                for i in 0..<frames { buffer[i] = interleaved[i * channelCount + c] }
                count = frames
            }
        }
        self.init(sampleRate: sampleRate, channels: planar)
    }

    /// Number of channels.
    public var channelCount: Int { channels.count }
    /// Samples per channel.
    public var frameCount: Int { channels[0].count }
    /// Length in seconds.
    public var duration: Double { Double(frameCount) / sampleRate }

    /// The samples interleaved frame by frame, as files and OpenAL buffers store them.
    public func interleaved() -> [Float] {
        let n = channelCount, frames = frameCount
        return [Float](unsafeUninitializedCapacity: frames * n) { buffer, count in
            for c in 0..<n {
                channels[c].withUnsafeBufferPointer { src in
                    for i in 0..<frames { buffer[i * n + c] = src[i] }
                }
            }
            count = frames * n
        }
    }
}
