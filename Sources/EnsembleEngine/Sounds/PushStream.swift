// Any thread appends (a download's callback, a pipe reader); the stream loader pulls decoded frames.
import Foundation
import EnsembleFormats
import EnsembleRender

/// An audio file arriving as bytes, played as it arrives (Audio File Stream + Audio Queue): append the bytes as
/// they come, from any thread, in chunks of any size; they are parsed and decoded on the appending thread
/// (`AudioFileStream`, the same samples as decoding the whole file), and a track made from the stream
/// (`Sound(pushStream:)`) plays them once its header is parsed and enough are buffered.
///
/// `append` blocks while more than `maxBufferedFrames` decoded frames wait (`tryAppend` refuses instead). A dry
/// track goes silent (`EngineEvent.trackStarved`) and resumes where it stopped once the pre-roll is buffered again
/// (`trackBuffered`). After `finish()` it ends with `.finished`, or `.failed` on damaged bytes (`error`). A push
/// stream plays once, from its start: its track cannot seek, loop or restart. See the "Bytes as they arrive"
/// article (Ensemble.docc/BytesAsTheyArrive.md).
public final class PushStream: LiveFeed, @unchecked Sendable {
    /// Stands for the stream in errors.
    public let name: String
    /// Decoded frames that may wait before `append` blocks.
    public let maxBufferedFrames: Int
    private let condition = NSCondition()
    private let decoder: PCMFeedDecoder
    private var finished = false
    private var failure: AudioFileError?
    private var buffered = 0
    private var delivered = 0

    /// A stream for bytes to come; `maxBufferedSeconds` (at the stream's rate) bounds the decoded backlog.
    public init(name: String = "push stream", maxBufferedSeconds: Double = 10) {
        self.name = name
        decoder = AudioFileStreamDecoder(name: name)
        // Until the rate is known, count 48 kHz; the bound only needs to be of the right size.
        maxBufferedFrames = Int(max(maxBufferedSeconds, 0.5) * 48_000)
    }

    /// The stream's sample rate, once its header has been parsed (0 before).
    public var sampleRate: Double { condition.withLock { decoder.format?.sampleRate ?? 0 } }
    /// The stream's channel count, once its header has been parsed (0 before).
    public var channelCount: Int { condition.withLock { decoder.format?.channelCount ?? 0 } }
    /// True once the header has been parsed: a track can be made from the stream.
    public var isReady: Bool { condition.withLock { decoder.format != nil } }
    /// Why the stream failed, if it did.
    public var error: AudioFileError? { condition.withLock { failure } }
    /// Decoded frames waiting to be played.
    public var bufferedFrames: Int { condition.withLock { buffered } }
    /// Frames handed to the track so far (at the stream's rate): once its track has ended, the length of the
    /// stream that was played, whatever time was spent waiting for bytes.
    public var deliveredFrames: Int { condition.withLock { delivered } }

    /// Appends the next bytes of the file, waiting while `maxBufferedFrames` frames are already waiting.
    /// - Throws: the parser's error for bytes that are not a supported audio file or contradict its header (the
    ///   track then ends with `.failed` after the frames decoded before them).
    public func append(_ bytes: [UInt8]) throws(AudioFileError) {
        try append(bytes, wait: true)
    }

    /// Appends without waiting: false (and nothing appended) when `maxBufferedFrames` frames are waiting.
    public func tryAppend(_ bytes: [UInt8]) throws(AudioFileError) -> Bool {
        try append(bytes, wait: false)
    }

    @discardableResult
    private func append(_ bytes: [UInt8], wait: Bool) throws(AudioFileError) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if let failure { throw failure }
        guard !finished else { throw AudioFileError(.corrupt, path: name, "bytes appended after finish()") }
        while buffered > maxBufferedFrames {
            guard wait else { return false }
            condition.wait()
        }
        do throws(AudioFileError) {
            let result = bytes.withUnsafeBytes { raw -> Result<Void, AudioFileError> in
                do throws(AudioFileError) { try decoder.feed(raw) } catch { return .failure(error) }
                return .success(())
            }
            try result.get()
            try collect()
        } catch {
            failure = error
            throw error
        }
        return true
    }

    /// No more bytes will come.
    /// - Throws: `.truncated` when the file stops mid-packet or before its data ends, and the parser's errors.
    public func finish() throws(AudioFileError) {
        condition.lock()
        defer { condition.unlock() }
        guard !finished else { return }
        finished = true
        if failure != nil { return }
        do throws(AudioFileError) {
            try decoder.finish()
            try collect()
        } catch {
            failure = error
            throw error
        }
    }

    /// Decoded interleaved frames not yet pulled: `queued[queuedStart...]`.
    private var queued: [Float] = []
    private var queuedStart = 0

    private func collect() throws(AudioFileError) {
        guard let c = decoder.format?.channelCount, c > 0 else { return }
        var chunk = [Float](repeating: 0, count: 4096 * c)
        while true {
            let decoder = self.decoder
            let n = try chunk.withUnsafeMutableBufferPointer { p -> Result<Int, AudioFileError> in
                do throws(AudioFileError) { return .success(try decoder.read(into: p.baseAddress!, frames: 4096)) } catch { return .failure(error) }
            }.get()
            if n == 0 { break }
            queued.append(contentsOf: chunk[0..<(n * c)])
            buffered += n
        }
    }

    package func pull(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> LivePull {
        condition.lock()
        defer { condition.unlock() }
        let c = max(decoder.format?.channelCount ?? 1, 1)
        let n = min(frames, buffered)
        if n > 0 {
            queued.withUnsafeBufferPointer { q in
                buffer.update(from: q.baseAddress! + queuedStart, count: n * c)
            }
            queuedStart += n * c
            buffered -= n
            delivered += n
            if queuedStart > 1 << 16 && queuedStart * 2 > queued.count {
                queued.removeFirst(queuedStart)
                queuedStart = 0
            }
            condition.broadcast()
            return .frames(n)
        }
        if let failure { return .failed(failure) }
        return finished ? .ended : .frames(0)
    }
}
