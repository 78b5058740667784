// Any thread enqueues (or the loader thread calls the fill callback); the stream loader pulls.
import Foundation
import EnsembleFormats
import EnsembleRender

/// PCM the application supplies, played by a track (the Audio Queue model): for procedural audio, synthesis, or
/// codecs Ensemble does not decode. Either enqueue interleaved Float buffers from any thread, or give a fill
/// callback that the engine's stream loader calls ahead of playback (never on the render thread) with room for
/// some frames.
///
/// The track plays it like a push stream (`PushStream`): it sounds once the pre-roll is buffered, goes silent with
/// `EngineEvent.trackStarved` when the queue runs dry and sounds again (`trackBuffered`) from where it stopped once
/// frames come back, and ends after the last frame once `finish()` is called (or the callback returns nil). It
/// can be scheduled (`play(at:)`), positioned in 3D, given a rate, sends and a filter like any track; it plays
/// once, from its start (no seek, loop or restart: the frames are consumed; `PCMSource` plays frames that can be
/// computed at any position, with all three).
public final class PCMQueue: LiveFeed, @unchecked Sendable {
    /// Fills the buffer with interleaved frames (room for `buffer.count / channelCount` of them) and returns how
    /// many it wrote: 0 when none are ready yet (the track starves until the next call brings some), nil when the
    /// stream has ended. Called on the engine's loader thread; it must not block for long.
    public typealias Fill = @Sendable (UnsafeMutableBufferPointer<Float>) -> Int?

    /// The frames' rate in Hz; the track resamples them to the engine's.
    public let sampleRate: Double
    /// 1 (mono) or 2 (stereo, interleaved).
    public let channelCount: Int
    /// Frames that may wait before `enqueue` blocks.
    public let maxBufferedFrames: Int
    private let fill: Fill?
    private let condition = NSCondition()
    private var queued: [Float] = []
    private var queuedStart = 0
    private var finished = false

    /// A queue for enqueued buffers of `channelCount` (1 or 2) interleaved channels at `sampleRate`.
    public init(sampleRate: Double, channelCount: Int, maxBufferedSeconds: Double = 10) throws(EngineError) {
        try Self.check(sampleRate, channelCount)
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        maxBufferedFrames = Int(max(maxBufferedSeconds, 0.1) * sampleRate)
        fill = nil
    }

    /// A source that the loader thread asks for frames through `fill`.
    public init(sampleRate: Double, channelCount: Int, fill: @escaping Fill) throws(EngineError) {
        try Self.check(sampleRate, channelCount)
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        maxBufferedFrames = 0
        self.fill = fill
    }

    private static func check(_ rate: Double, _ channels: Int) throws(EngineError) {
        guard rate.isFinite, rate >= 1000, rate <= 768_000 else {
            throw .invalidParameter(name: "sampleRate", value: rate, expected: "1000…768000")
        }
        guard channels == 1 || channels == 2 else { throw .unsupportedChannelCount(sound: "PCMQueue", channels: channels) }
    }

    /// Frames enqueued and not yet played.
    public var bufferedFrames: Int { condition.withLock { (queued.count - queuedStart) / channelCount } }

    /// Appends interleaved frames, waiting while `maxBufferedFrames` frames already wait.
    /// - Throws: `.invalidParameter` for a count that is not a whole number of frames, a queue with a fill
    ///   callback, or one already finished.
    public func enqueue(_ samples: [Float]) throws(EngineError) {
        guard fill == nil, samples.count % channelCount == 0 else {
            throw .invalidParameter(name: "PCMQueue.enqueue samples", value: Double(samples.count),
                                    expected: fill == nil ? "a multiple of \(channelCount) (whole frames)" : "no enqueue on a queue with a fill callback")
        }
        condition.lock()
        defer { condition.unlock() }
        guard !finished else {
            throw .invalidParameter(name: "PCMQueue.enqueue after finish", value: Double(samples.count), expected: "no samples")
        }
        while (queued.count - queuedStart) / channelCount > maxBufferedFrames { condition.wait() }
        queued.append(contentsOf: samples)
    }

    /// No more frames will be enqueued: the track ends after the last one.
    public func finish() {
        condition.withLock { finished = true }
    }

    package func pull(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> LivePull {
        if let fill {
            guard let n = fill(UnsafeMutableBufferPointer(start: buffer, count: frames * channelCount)) else { return .ended }
            return .frames(min(max(n, 0), frames))
        }
        condition.lock()
        defer { condition.unlock() }
        let n = min(frames, (queued.count - queuedStart) / channelCount)
        if n == 0 { return finished ? .ended : .frames(0) }
        queued.withUnsafeBufferPointer { q in buffer.update(from: q.baseAddress! + queuedStart, count: n * channelCount) }
        queuedStart += n * channelCount
        if queuedStart > 1 << 16 && queuedStart * 2 > queued.count {
            queued.removeFirst(queuedStart)
            queuedStart = 0
        }
        condition.broadcast()
        return .frames(n)
    }
}
