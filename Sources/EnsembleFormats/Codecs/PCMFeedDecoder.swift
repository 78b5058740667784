// Whoever owns a push stream calls it (the loader thread for a push-stream track); its owner serialises calls.

/// Bytes in, PCM out, a piece at a time: the decoder behind a push stream, for bytes that arrive in order in
/// chunks of any size (a download, a pipe). It parses the container as bytes come (`AudioFileStream`) and
/// decodes the packets it has. Not thread-safe: its owner serialises every call.
package protocol PCMFeedDecoder: AnyObject {
    /// Takes the next bytes of the file, in order; any chunk size, 1 byte to megabytes.
    func feed(_ bytes: UnsafeRawBufferPointer) throws(AudioFileError)
    /// No more bytes will come. A stream that stops mid-packet or before its audio throws here (what did
    /// decode stays readable).
    func finish() throws(AudioFileError)
    /// The sample format once the header has been parsed; nil before.
    var format: PCMFeedFormat? { get }
    /// Decodes up to `frames` interleaved frames into `buffer` and returns how many; 0 when it needs more bytes,
    /// or, after `finish`, when every frame has been read (`isDrained`).
    func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileError) -> Int
    /// True after `finish` once every frame has been read.
    var isDrained: Bool { get }
}

/// What a push stream's header says of its samples.
package struct PCMFeedFormat: Sendable, Equatable {
    package var sampleRate: Double
    package var channelCount: Int
    /// Total frames when the header says (a WAV's data size, a CAF's packet table, an MP3's Xing/LAME count);
    /// nil when only the end of the stream tells.
    package var frameCount: Int?
}
