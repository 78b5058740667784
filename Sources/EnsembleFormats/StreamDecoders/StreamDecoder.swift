// Loader thread: the stream loader alone calls a decoder (opened lazily, read a chunk at a time).

/// A decoder the stream loader pulls frames from, a little at a time, with random access.
package protocol StreamDecoder: AnyObject {
    /// Moves so that the next `read` starts at file frame `frame`.
    func seek(toFrame frame: Int) throws(AudioFileError)
    /// Decodes up to `frames` frames, interleaved, into `buffer`; returns how many (0 at the end).
    func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileError) -> Int
    /// NaN or infinite samples this decoder has read and replaced with silence so far (float files only).
    var nonFiniteSamples: Int { get }
}

extension StreamDecoder {
    /// Formats whose samples are always finite (integer PCM, IMA4, MP3) never replace any.
    package var nonFiniteSamples: Int { 0 }
}
