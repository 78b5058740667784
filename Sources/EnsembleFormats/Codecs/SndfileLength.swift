import CSndfile
#if canImport(Glibc)
import Glibc
#endif

/// Checks the frame count libsndfile reports against the bytes actually present, so no length is believed that the
/// file cannot back (a believed length sizes buffers, sets a streamed track's end and the length of a render).
///
/// Runs on the control thread that opens a file. The rules:
/// - `SF_COUNT_MAX` is libsndfile's "unknown" (an Ogg stream whose last page is missing): the file is truncated.
/// - Uncompressed samples (PCM, float, µ-law, A-law): at most the file's bytes / bytes per frame.
/// - Compressed (FLAC, Vorbis, ADPCM, …): the frames up to the last promised one must decode (`verifyLastFrame`),
///   since such codecs can pack very many frames into few bytes.
package enum SndfileLength {
    /// The frame count of an open file, after the checks that need no decoding.
    package static func checked(_ info: SF_INFO, byteCount: Int, path: String) throws(AudioFileError) -> Int {
        // SF_COUNT_MAX (INT64_MAX) is not imported into Swift.
        guard info.frames != sf_count_t.max else {
            throw AudioFileError(.truncated, path: path,
                                 "file is truncated: its length cannot be determined (the end of the stream is missing)")
        }
        guard info.frames >= 0 else {
            throw AudioFileError(.corrupt, path: path, "header gives a negative length")
        }
        let frames = Int(info.frames)
        if let bytesPerSample = bytesPerSample(format: info.format), info.channels > 0 {
            let most = byteCount / (bytesPerSample * Int(info.channels))
            guard frames <= most else {
                throw AudioFileError(.truncated, path: path,
                                     "file is truncated or its header is wrong: header promises \(frames) frames but its \(byteCount) bytes hold at most \(most)")
            }
        }
        return frames
    }

    /// True when the frame count of `format` is bounded by the byte count alone (uncompressed samples).
    package static func isUncompressed(format: Int32) -> Bool { bytesPerSample(format: format) != nil }

    /// Seeks a little before the last promised frame and decodes up to it; throws `.truncated` when the data ends
    /// sooner. Starting `tail` frames early tolerates a seek that lands near rather than on its target (libsndfile's
    /// Vorbis seek). Leaves the handle at an unspecified position.
    /// `reopen`, when given, opens the file afresh for a decode from the start when the seek fails.
    package static func verifyLastFrame(_ handle: OpaquePointer, frames: Int, channelCount: Int, path: String,
                                        reopen: (() -> OpaquePointer?)? = nil) throws(AudioFileError) {
        guard frames > 0 else { return }
        let tail = 1024, chunk = 256
        var scratch = [Float](repeating: 0, count: chunk * max(channelCount, 1))
        let start = sf_count_t(max(0, frames - tail))
        func read(_ handle: OpaquePointer, from start: Int) -> Int {
            scratch.withUnsafeMutableBufferPointer { buffer -> Int in
                var position = start
                while position < frames {
                    let n = Int(sf_readf_float(handle, buffer.baseAddress, sf_count_t(min(chunk, frames - position))))
                    guard n > 0 else { break }
                    position += n
                }
                return position
            }
        }
        var reached = sf_seek(handle, start, SEEK_SET) == start ? read(handle, from: Int(start)) : 0
        if reached < frames, start > 0, let fresh = reopen?() {
            // A seek can fail where decoding does not: libFLAC's seek trusts STREAMINFO's block sizes, which an
            // encoder may leave 0, swapped or 65535. Decode from the start on a fresh handle, as `decode` does.
            reached = read(fresh, from: 0)
            sf_close(fresh)
        }
        guard reached >= frames else {
            throw AudioFileError(.truncated, path: path,
                                 "file is truncated or its header is wrong: header promises \(frames) frames but the data ends sooner")
        }
    }

    /// Bytes per sample of the uncompressed encodings in WAV, AIFF and CAF; nil for compressed ones (FLAC reports
    /// its decoded bit depth as a PCM subtype, so its major format is excluded).
    private static func bytesPerSample(format: Int32) -> Int? {
        let major = Int(format) & SF_FORMAT_TYPEMASK
        guard major != SF_FORMAT_FLAC, major != SF_FORMAT_OGG else { return nil }
        switch Int(format) & SF_FORMAT_SUBMASK {
        case SF_FORMAT_PCM_S8, SF_FORMAT_PCM_U8, SF_FORMAT_ULAW, SF_FORMAT_ALAW: return 1
        case SF_FORMAT_PCM_16: return 2
        case SF_FORMAT_PCM_24: return 3
        case SF_FORMAT_PCM_32, SF_FORMAT_FLOAT: return 4
        case SF_FORMAT_DOUBLE: return 8
        default: return nil
        }
    }
}
