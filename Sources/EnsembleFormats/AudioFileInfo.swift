/// What a file holds, as `ensemble info` reports it.
public struct AudioFileInfo: Sendable, Equatable, Codable {
    /// Container found by sniffing the bytes: "wav", "aiff", "aifc", "caf", "flac", "ogg", "mp3".
    public var container: String
    /// Codec inside the container, e.g. "pcm16", "pcm24", "float32", "ima4", "ima-adpcm", "ulaw", "alaw", "flac", "vorbis", "mp3".
    public var codec: String
    /// Frames per second.
    public var sampleRate: Double
    /// Interleaved channels in the file.
    public var channelCount: Int
    /// Sample frames the file holds (exact: counted or taken from a checked header).
    public var frameCount: Int
    /// `frameCount / sampleRate` in seconds (0 for a rate of 0).
    public var duration: Double
    /// Average bit rate in bits per second, for compressed streams where it is meaningful (MP3).
    public var bitRate: Int?

    /// A description; `duration` is computed from the frame count and rate.
    public init(container: String, codec: String, sampleRate: Double, channelCount: Int, frameCount: Int, bitRate: Int? = nil) {
        self.container = container
        self.codec = codec
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.frameCount = frameCount
        self.duration = sampleRate > 0 ? Double(frameCount) / sampleRate : 0
        self.bitRate = bitRate
    }
}
