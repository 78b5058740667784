// Loader thread: the stream loader alone pulls from a feed; producers push into it from their own threads.
import EnsembleFormats
import EnsembleRender

/// Where a live stream's frames come from: a `PushStream` (file bytes as they arrive, decoded) or a `PCMQueue`
/// (samples the application supplies). The stream loader pulls frames into the voice's ring as they become
/// available; the voice waits for them rather than skipping ahead (`LiveReader`).
package protocol LiveFeed: AnyObject, Sendable {
    var sampleRate: Double { get }
    var channelCount: Int { get }
    /// Loader thread: up to `frames` interleaved frames into `buffer`, without waiting.
    func pull(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> LivePull
}

/// What a pull found.
package enum LivePull {
    /// This many frames (0: none yet; the voice starves until more come).
    case frames(Int)
    /// The producer has finished and every frame has been pulled.
    case ended
    /// The stream cannot go on (bad bytes); every frame before the failure has been pulled.
    case failed(AudioFileError)
}
