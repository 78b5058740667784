// Control side: made by the application; its `read` runs on the engine's stream loader thread.
import EnsembleFormats
import EnsembleRender

/// PCM the application computes on request, with a known length, played like a streamed file: the engine's stream
/// loader asks for frames a little ahead of playback (never on the render thread), at any position, so a track can
/// loop it, seek in it, start it late or at an offset, and several tracks can play it at once — everything a track
/// does with a streamed file (`Sound(pcmSource:)`; loop regions need a sound in memory). For procedural audio, a synthesizer's rendered
/// voice, or a codec Ensemble does not decode that can seek. Where the frames only exist as they arrive (no
/// random access), use `PCMQueue`.
public struct PCMSource: Sendable {
    /// Writes the frames from frame `frame` on, interleaved, into `buffer` (room for `buffer.count / channelCount`
    /// frames, never past `frameCount`) and returns how many it wrote. Returning fewer than asked means the source
    /// failed: the track plays what it got and ends with `EndReason.failed` (a `.truncated` error naming the source).
    /// Called on the loader thread, one call at a time per playing track; the same frame must always give the same
    /// samples (tracks read it again at every loop and seek).
    public typealias Read = @Sendable (_ frame: Int, _ buffer: UnsafeMutableBufferPointer<Float>) -> Int

    /// Stands for the source in messages.
    public let name: String
    /// The frames' rate in Hz; tracks resample them to the engine's.
    public let sampleRate: Double
    /// 1 (mono) or 2 (stereo, interleaved).
    public let channelCount: Int
    /// Length in frames.
    public let frameCount: Int
    package let read: Read

    /// A source of `frameCount` frames of `channelCount` (1 or 2) channels at `sampleRate` (1000…768000 Hz).
    public init(name: String = "PCM source", sampleRate: Double, channelCount: Int, frameCount: Int,
                read: @escaping Read) throws(EngineError) {
        guard sampleRate.isFinite, sampleRate >= 1000, sampleRate <= 768_000 else {
            throw .invalidParameter(name: "sampleRate of \(name)", value: sampleRate, expected: "1000…768000")
        }
        guard channelCount == 1 || channelCount == 2 else {
            throw .unsupportedChannelCount(sound: name, channels: channelCount)
        }
        guard frameCount > 0 else {
            throw .invalidParameter(name: "frameCount of \(name)", value: Double(frameCount), expected: "at least 1")
        }
        self.name = name
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.frameCount = frameCount
        self.read = read
    }
}

/// The stream loader's decoder over a `PCMSource`: a position, and the application's `read`.
final class PCMSourceDecoder: StreamDecoder {
    private let source: PCMSource
    private var position = 0

    init(_ source: PCMSource) { self.source = source }

    func seek(toFrame frame: Int) throws(AudioFileError) {
        guard frame >= 0, frame <= source.frameCount else {
            throw AudioFileError(.corrupt, path: source.name, "cannot seek to frame \(frame) of \(source.frameCount)")
        }
        position = frame
    }

    func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileError) -> Int {
        let n = min(frames, source.frameCount - position)
        guard n > 0 else { return 0 }
        let wrote = source.read(position, UnsafeMutableBufferPointer(start: buffer, count: n * source.channelCount))
        // Whatever the callback says, no more than was asked is taken (and nothing negative).
        let got = min(max(wrote, 0), n)
        position += got
        return got
    }
}
