// Loader thread: opened, seeked and read by the stream loader only.
import CSndfile
#if canImport(Glibc)
import Glibc
#endif

/// libsndfile on a file path: one open handle, `sf_seek` and `sf_readf_float` (the same library calls and
/// defaults as the in-memory decoder, so the same samples).
///
/// Ogg Vorbis is the exception for seeking: libsndfile's Vorbis seek does not land on the exact sample, so a
/// Vorbis stream seeks by decoding forward (from the start when the target is behind), which is exact but costs
/// decoding time proportional to the distance.
final class SndfileStreamDecoder: StreamDecoder {
    private var handle: OpaquePointer
    private let path: String
    private let frameCount: Int
    private let channelCount: Int
    private let seekByDecoding: Bool
    private var position = 0

    init(path: String, channelCount: Int, frameCount: Int) throws(AudioFileError) {
        self.path = path
        self.frameCount = frameCount
        self.channelCount = channelCount
        var info = SF_INFO()
        handle = try Self.open(path, channelCount, &info)
        seekByDecoding = Int(info.format) & SF_FORMAT_TYPEMASK == SF_FORMAT_OGG
    }

    private static func open(_ path: String, _ channelCount: Int, _ info: inout SF_INFO) throws(AudioFileError) -> OpaquePointer {
        guard let handle = sf_open(path, Int32(SFM_READ), &info) else {
            throw AudioFileError(.unreadable, path: path, "cannot open for streaming: \(SndfileDecoder.message(sf_strerror(nil)))")
        }
        guard Int(info.channels) == channelCount else {
            sf_close(handle)
            throw AudioFileError(.corrupt, path: path, "the file changed while streaming")
        }
        return handle
    }

    deinit { sf_close(handle) }

    func seek(toFrame frame: Int) throws(AudioFileError) {
        if seekByDecoding {
            if frame < position {
                var info = SF_INFO()
                let fresh = try Self.open(path, channelCount, &info)
                sf_close(handle)
                handle = fresh
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

    func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileError) -> Int {
        let got = Int(sf_readf_float(handle, buffer, sf_count_t(frames)))
        if got < frames && sf_error(handle) != 0 {
            throw AudioFileError(.corrupt, path: path, "decoding failed while streaming: \(SndfileDecoder.message(sf_strerror(handle)))")
        }
        position += max(got, 0)
        return max(got, 0)
    }
}
