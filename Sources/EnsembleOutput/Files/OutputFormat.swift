import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// What kind of file to write: a container and the sample encoding inside it.
public struct OutputFormat: Sendable, Equatable, CustomStringConvertible {
    /// The file type written.
    public enum Container: String, Sendable, CaseIterable {
        /// RIFF WAVE (`WAVE_FORMAT_IEEE_FLOAT` for float32).
        case wav
        /// AIFF: integer PCM only.
        case aiff
        /// AIFF-C: PCM, float or Apple IMA4.
        case aifc
        /// Apple Core Audio Format: PCM, float or Apple IMA4.
        case caf
        /// FLAC: lossless, 16 or 24-bit integer samples only.
        case flac
    }

    /// How samples are encoded inside the container.
    public enum Codec: String, Sendable, CaseIterable {
        /// 16-bit integer PCM; samples are scaled by 32768, dithered (`OutputFormat.dither`), rounded and clipped to
        /// [-32768, 32767].
        case pcm16
        /// 24-bit integer PCM; samples are scaled by 2^23, dithered (`OutputFormat.dither`), rounded and clipped.
        case pcm24
        /// 32-bit IEEE float, written exactly.
        case float32
        /// Apple IMA4 ADPCM (CAF and AIFC only).
        case ima4
    }

    /// The file type.
    public var container: Container
    /// The sample encoding.
    public var codec: Codec
    /// How samples are rounded to an integer codec (pcm16, pcm24): TPDF dither by default; ignored for float32 and
    /// IMA4.
    public var dither: Dither = .tpdf

    /// A format; whether the container can hold the codec is checked when the writer opens the file.
    public init(container: Container, codec: Codec, dither: Dither = .tpdf) {
        self.container = container
        self.codec = codec
        self.dither = dither
    }

    /// The container's usual codec: pcm16 for FLAC (which cannot store float), IMA4 for AIFC (the reason
    /// to ask for AIFC at all), float32 elsewhere so nothing is lost.
    public init(container: Container) {
        let codec: Codec
        switch container {
        case .flac: codec = .pcm16
        case .aifc: codec = .ima4
        case .wav, .aiff, .caf: codec = .float32
        }
        self.init(container: container, codec: codec)
    }

    /// The container a file name's extension asks for (case-insensitive; `.aif` counts as AIFF, `.wave` as WAV).
    public static func container(forPath path: String) -> Container? {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let ext = name[name.index(after: dot)...].lowercased()
        switch ext {
        case "wav", "wave": return .wav
        case "aif", "aiff": return .aiff
        case "aifc": return .aifc
        case "caf": return .caf
        case "flac": return .flac
        default: return nil
        }
    }

    public var description: String { "\(container.rawValue)/\(codec.rawValue)" }

    /// Bytes one sample takes in the file before any compression (an upper bound for FLAC and IMA4).
    public var bytesPerSample: Int {
        switch codec {
        case .pcm16: 2
        case .pcm24: 3
        case .float32: 4
        case .ima4: 1
        }
    }

    /// Throws `.unsupported` for combinations that cannot be written, naming what would work instead.
    public func validate(path: String) throws(AudioFileError) {
        switch (container, codec) {
        case (.flac, .float32):
            throw AudioFileError(.unsupported, path: path, "FLAC cannot store float samples; use pcm16 or pcm24")
        case (.wav, .ima4), (.aiff, .ima4), (.flac, .ima4):
            throw AudioFileError(.unsupported, path: path, "IMA4 can only be written to .caf or .aifc files")
        case (.aifc, .pcm16), (.aifc, .pcm24):
            // libsndfile writes integer PCM as plain AIFF, which would not be the AIFC the name promises.
            throw AudioFileError(.unsupported, path: path, "\(codec.rawValue) is written as .aiff, not .aifc; use ima4 or float for .aifc")
        default:
            return
        }
    }
}
