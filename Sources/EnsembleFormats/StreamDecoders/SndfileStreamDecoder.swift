// Loader thread: opened, seeked and read by the stream loader only.
import CSndfile
#if canImport(Glibc)
import Glibc
#endif

/// libsndfile on a stream's bytes (`SndfileVirtualFile`: its own open file, or bytes shared by every stream of the
/// sound): one open handle, `sf_seek` and `sf_readf_float` (the same library calls and
/// defaults as the in-memory decoder, so the same samples).
///
/// Ogg Vorbis is the exception for seeking: libsndfile's Vorbis seek does not land on the exact sample, so a
/// Vorbis stream seeks by decoding forward (from the start when the target is behind), which is exact but costs
/// decoding time proportional to the distance.
package final class SndfileStreamDecoder: StreamDecoder {
    /// NaN or infinite samples read so far, each played as silence.
    package private(set) var nonFiniteSamples = 0
    private var handle: OpaquePointer
    private var file: SndfileVirtualFile
    private let source: ByteSource
    private let path: String
    private let frameCount: Int
    private let channelCount: Int
    private let seekByDecoding: Bool
    private var position = 0

    package init(source: ByteSource, path: String, channelCount: Int, frameCount: Int) throws(AudioFileError) {
        // Everything that can throw comes before the first stored property: a class init that throws after
        // storing some leaked them (LeakSanitizer, fuzz target `stream`).
        var info = SF_INFO()
        let file = SndfileVirtualFile(source, path: path)
        let handle = try Self.open(file, channelCount, &info)
        self.source = source
        self.path = path
        self.frameCount = frameCount
        self.channelCount = channelCount
        self.file = file
        self.handle = handle
        seekByDecoding = Int(info.format) & SF_FORMAT_TYPEMASK == SF_FORMAT_OGG
    }

    private static func open(_ file: SndfileVirtualFile, _ channelCount: Int, _ info: inout SF_INFO) throws(AudioFileError) -> OpaquePointer {
        let path = file.path
        guard let handle = SndfileVirtualFile.open(file, &info) else {
            throw file.failure ?? AudioFileError(.unreadable, path: path, "cannot open for streaming: \(SndfileDecoder.message(sf_strerror(nil)))")
        }
        guard Int(info.channels) == channelCount else {
            sf_close(handle)
            throw AudioFileError(.corrupt, path: path, "the file changed while streaming")
        }
        return handle
    }

    deinit { sf_close(handle) }

    package func seek(toFrame frame: Int) throws(AudioFileError) {
        if seekByDecoding {
            if frame < position {
                var info = SF_INFO()
                let freshFile = SndfileVirtualFile(source, path: path)
                let fresh = try Self.open(freshFile, channelCount, &info)
                sf_close(handle)
                handle = fresh
                file = freshFile
                position = 0
            }
            let chunk = 4096
            let scratch = UnsafeMutablePointer<Float>.allocate(capacity: chunk * channelCount)
            defer { scratch.deallocate() }
            while position < frame {
                let got = try read(into: scratch, frames: min(chunk, frame - position))
                if got == 0 {
                    throw AudioFileError(.truncated, path: path, "cannot reach frame \(frame) while streaming")
                }
            }
            return
        }
        guard sf_seek(handle, sf_count_t(frame), SEEK_SET) == sf_count_t(frame) else {
            throw AudioFileError(.truncated, path: path, "cannot seek to frame \(frame) while streaming: \(SndfileDecoder.message(sf_strerror(handle)))")
        }
        position = frame
    }

    package func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileError) -> Int {
        let got = Int(sf_readf_float(handle, buffer, sf_count_t(frames)))
        if got < frames, let failure = file.failure { throw failure }
        if got < frames && sf_error(handle) != 0 {
            throw AudioFileError(.corrupt, path: path, "decoding failed while streaming: \(SndfileDecoder.message(sf_strerror(handle)))")
        }
        position += max(got, 0)
        // A float file's NaN or infinity plays as silence, as the whole-file decode gives it.
        nonFiniteSamples += NonFiniteSamples.silence(UnsafeMutableBufferPointer(start: buffer, count: max(got, 0) * channelCount))
        return max(got, 0)
    }
}
