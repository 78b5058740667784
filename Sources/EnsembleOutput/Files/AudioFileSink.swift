// The offline render loop's thread (control side): file I/O between rendered blocks, never the render path.
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
#if canImport(Glibc)
import Glibc
#endif

/// Writes a file incrementally, as the mixer's offline render produces blocks, and only puts it at its
/// destination when `finish` succeeds; `abort` (or dropping the writer unfinished) deletes everything.
public final class AudioFileSink {
    /// Where the finished file will appear.
    public let path: String
    /// The container and sample encoding of the file.
    public let format: OutputFormat
    /// The file's sample rate in Hz (frames per second), a whole number as the engine's is (`Engine.sampleRate`).
    public let sampleRate: Double
    /// Channels per frame; `write(interleaved:)` takes whole frames of this many samples.
    public let channelCount: Int
    /// The speakers the channels feed, when the sink was made for a layout (`init(path:format:sampleRate:layout:)`).
    public let layout: SpeakerLayout?
    private let sink: SndfileSink

    /// Opens a temporary file next to `path`. Any format except IMA4 is accepted; the render normally
    /// uses WAV float32 or WAV pcm16.
    public init(path: String, format: OutputFormat = OutputFormat(container: .wav, codec: .float32),
                sampleRate: Double, channelCount: Int) throws(AudioFileError) {
        self.path = path
        self.format = format
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        layout = nil
        sink = try SndfileSink(path: path, format: format, sampleRate: sampleRate, channelCount: channelCount)
    }

    /// Opens a temporary file next to `path` for an engine's output in `layout` (`Engine.speakerLayout`):
    /// `layout.channelCount` channels, in `SpeakerLayout` order. Stereo is written exactly as
    /// `init(path:format:sampleRate:channelCount:)` writes 2 channels. Surround records the layout where the
    /// container can:
    /// - WAV: `WAVE_FORMAT_EXTENSIBLE` with the channel mask (5.1: 0x60F, FL FR FC LFE SL SR; 7.1: 0x63F,
    ///   FL FR FC LFE BL BR SL SR), as Microsoft's multichannel WAVE documents it;
    /// - CAF: a channel layout chunk (`chan`) naming the same speakers;
    /// - FLAC: nothing is written, and nothing is needed: the FLAC format assigns 6 channels to front left/right,
    ///   centre, LFE and the surround pair, and 8 to FL FR FC LFE BL BR SL SR, which is this order;
    /// - AIFF/AIFC: the channels in this order without a layout (libsndfile writes none).
    public convenience init(path: String, format: OutputFormat = OutputFormat(container: .wav, codec: .float32),
                            sampleRate: Double, layout: SpeakerLayout) throws(AudioFileError) {
        try self.init(path: path, format: format, sampleRate: sampleRate, channelCount: layout.channelCount,
                      layout: layout)
    }

    private init(path: String, format: OutputFormat, sampleRate: Double, channelCount: Int,
                 layout: SpeakerLayout) throws(AudioFileError) {
        self.path = path
        self.format = format
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.layout = layout
        sink = try SndfileSink(path: path, format: format, sampleRate: sampleRate, channelCount: channelCount,
                               layout: layout)
    }

    /// Samples written so far whose magnitude exceeded 1 (or were NaN), for integer formats; always 0 for float.
    public var clippedSampleCount: Int { sink.clippedSampleCount }
    /// The largest magnitude among the samples written so far (1 is full scale, 0 dBFS), whatever the codec: for an
    /// integer codec the value before clipping. NaN samples are left out.
    public var peak: Float { sink.peak }
    /// Samples written so far whose magnitude exceeded 1 (or were NaN), whatever the codec: a float file keeps them
    /// as they are (a player may clip them), an integer one clips them (`clippedSampleCount`).
    public var samplesOverFullScale: Int { sink.overFullScaleCount }
    /// Frames written so far.
    public var framesWritten: Int { sink.framesWritten }
    /// The hidden file being written until `finish` renames it to `path`.
    public var temporaryPath: String { sink.output.temporaryPath }

    /// Appends interleaved frames (`frame0ch0, frame0ch1, …`); the count must be a multiple of `channelCount`.
    public func write(interleaved samples: UnsafeBufferPointer<Float>) throws(AudioFileError) {
        try sink.write(samples)
    }

    /// Completes the file and renames it to `path`.
    public func finish() throws(AudioFileError) {
        try sink.finish()
    }

    /// Stops writing and removes the temporary file; `path` is left untouched. Safe to call repeatedly.
    public func abort() {
        sink.abort()
    }

    /// Whether `path` names a file (a regular file or a new name, through symbolic links), which a finished output
    /// replaces, rather than standard output (`-`), a character device or a FIFO, which it is copied into.
    public static func isFileOutput(_ path: String) throws(AudioFileError) -> Bool {
        if case .file = try AtomicOutputFile.target(of: path) { return true }
        return false
    }

    /// Removes a finished output again (when a later output of the same command failed): the file `path` leads to,
    /// never a device, a FIFO or standard output, whose bytes are already gone.
    public static func withdraw(_ path: String) {
        guard case let .file(file)? = try? AtomicOutputFile.target(of: path) else { return }
        unlink(file)
    }
}
