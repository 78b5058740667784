#if canImport(Glibc)
import Glibc
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
#endif

/// Writes whole decoded audio to files, atomically: the destination either keeps its old contents or
/// receives the complete new file, never a partial one.
public enum AudioFileWriter {
    /// Frames converted to interleaved form per write, so writing never needs a second full-size copy.
    package static let chunkFrames = 8192

    /// Writes `audio` to `path` in `format` via a temporary file in the same directory and a rename.
    ///
    /// - Throws: `.unsupported` for impossible format combinations (e.g. FLAC + float32, IMA4 in WAV) or
    ///   sample rates; `.writeFailed` when the file cannot be created or written. No file is left behind.
    public static func write(_ audio: DecodedAudio, format: OutputFormat, to path: String) throws(AudioFileError) {
        try format.validate(path: path)
        if format.codec == .ima4 {
            try writeIMA4(audio, container: format.container, to: path)
            return
        }
        let sink = try SndfileSink(path: path, format: format, sampleRate: audio.sampleRate, channelCount: audio.channelCount)
        let channels = audio.channelCount
        var interleaved = [Float](repeating: 0, count: min(chunkFrames, audio.frameCount) * channels)
        var start = 0
        while start < audio.frameCount {
            let frames = min(chunkFrames, audio.frameCount - start)
            for c in 0..<channels {
                audio.channels[c].withUnsafeBufferPointer { source in
                    for i in 0..<frames { interleaved[i * channels + c] = source[start + i] }
                }
            }
            try interleaved.withUnsafeBufferPointer { (buffer) throws(AudioFileError) in
                try sink.write(UnsafeBufferPointer(rebasing: buffer[0..<frames * channels]))
            }
            start += frames
        }
        try sink.finish()
    }

    private static func writeIMA4(_ audio: DecodedAudio, container: OutputFormat.Container, to path: String) throws(AudioFileError) {
        let appleContainer: AppleIMA4.Container
        switch container {
        case .caf: appleContainer = .caf
        case .aifc: appleContainer = .aifc
        default: throw AudioFileError(.unsupported, path: path, "IMA4 can only be written to .caf or .aifc files")
        }
        let output = try AtomicOutputFile(destination: path)
        close(output.descriptor)
        do throws(AudioFileError) {
            try AppleIMA4.write(audio, container: appleContainer, to: output.temporaryPath)
        } catch {
            output.discard()
            // The encoder names the file it was given; the user only knows the destination.
            throw AudioFileError(error.kind, path: path, error.detail)
        }
        try output.commit()
    }
}
