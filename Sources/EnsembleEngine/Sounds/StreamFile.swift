// Control side: made when a streamed `Sound` is loaded; `open()` runs on the loader thread.
import CSndfile
#if canImport(Glibc)
import Glibc
import EnsembleFormats
import EnsembleRender
#endif

/// What a streamed sound is: a file, its format, and a way to open a decoder on it. Opening is lazy and
/// repeatable: the loader opens a decoder when the stream needs data and may close it again to bound the number
/// of open files.
public struct StreamFile: Sendable {
    /// The file streamed: its path, or the name given to bytes in memory or a reader.
    public let path: String
    /// Where the bytes are: a path (each decoder opens the file itself, so the loader can bound open files), or
    /// bytes in memory or an application's reader, shared by every decoder of the sound.
    private let shared: ByteSource?
    /// The file's sample rate in Hz.
    public let sampleRate: Double
    /// 1 (mono) or 2 (stereo).
    public let channelCount: Int
    /// Length in frames at `sampleRate`, from the file's header.
    public let frameCount: Int
    /// The codec family: "ima4" (Apple IMA4 in CAF/AIFC, decoded here), "mp3" (libmpg123), "sndfile" (WAV/AIFF/CAF PCM, FLAC
    /// and Ogg Vorbis), or "pcm" (a `PCMSource`).
    public let codec: String
    package let ima4: IMA4StreamDecoder.Layout?
    /// Decoder states of an IMA4 file, shared by every stream of it (the loader thread alone touches them).
    let ima4Checkpoints = IMA4StreamDecoder.Checkpoints()
    /// An MP3 without a LAME/Xing tag: every MPEG frame's byte offset (counted when the file is opened).
    private(set) var mp3FrameOffsets: [Int]? = nil
    /// Set for frames the application computes (`codec` "pcm").
    package private(set) var pcm: PCMSource? = nil
    /// Length in seconds (`frameCount / sampleRate`).
    public var duration: Double { Double(frameCount) / sampleRate }

    /// Reads the header of `path`. Streams WAV, AIFF, CAF and AIFC with PCM or float samples, FLAC and Ogg
    /// Vorbis (through libsndfile), Apple IMA4 in CAF or AIFC, and MP3 (libmpg123's feed API; an MP3 without a
    /// LAME/Xing header has its frames counted here, which reads the whole file without decoding it).
    public init(path: String) throws(AudioFileError) {
        let head = try Self.readPrefix(path: path, count: 64 * 1024)
        try self.init(source: .file(OpenFile(path: path)), head: head, name: path, shared: false)
    }

    /// A stream over a whole file held in memory (any format `init(path:)` streams); `name` stands for it in
    /// messages. The bytes are shared by every track that plays it; only the decoded ring is per track.
    public init(bytes: [UInt8], name: String) throws(AudioFileError) {
        guard !bytes.isEmpty else { throw AudioFileError(.empty, path: name, "file is empty") }
        try self.init(source: .memory(bytes), head: Array(bytes.prefix(64 * 1024)), name: name, shared: true)
    }

    /// A stream of frames the application computes: its name, format and length are the source's.
    public init(pcm source: PCMSource) {
        path = source.name
        shared = nil
        sampleRate = source.sampleRate
        channelCount = source.channelCount
        frameCount = source.frameCount
        codec = "pcm"
        ima4 = nil
        pcm = source
    }

    /// A stream over an application's reader, which must seek and know its size (a pipe cannot be streamed:
    /// `.unsupported`; decode it into memory with `Sound(reader:name:)`). The loader thread reads it while the
    /// sound plays, one call at a time.
    public init(reader: AudioByteReader, name: String) throws(AudioFileError) {
        let source = ByteSource.reader(try SharedReader(reader, name: name))
        try self.init(source: source, head: source.bytes(at: 0, count: 64 * 1024), name: name, shared: true)
    }

    private init(source: ByteSource, head: [UInt8], name path: String, shared: Bool) throws(AudioFileError) {
        self.path = path
        self.shared = shared ? source : nil
        guard let container = ContainerSniffer.sniff(head) else { throw ContainerSniffer.unrecognised(head, path: path) }
        switch container {
        case .mp3:
            let probe = try MP3StreamDecoder.probe(source: source, path: path)
            guard probe.channelCount == 1 || probe.channelCount == 2 else {
                throw AudioFileError(.unsupported, path: path, "unsupported channel count \(probe.channelCount) (mono or stereo)")
            }
            sampleRate = probe.sampleRate
            channelCount = probe.channelCount
            frameCount = probe.frameCount
            mp3FrameOffsets = probe.frameOffsets
            codec = "mp3"
            ima4 = nil
            return
        case .caf, .aifc:
            if let layout = try IMA4StreamDecoder.locate(source: source, path: path) {
                guard layout.channelCount == 1 || layout.channelCount == 2 else {
                    throw AudioFileError(.unsupported, path: path, "unsupported channel count \(layout.channelCount) (mono or stereo)")
                }
                sampleRate = layout.sampleRate
                channelCount = layout.channelCount
                frameCount = layout.keep.count
                codec = "ima4"
                ima4 = layout
                return
            }
        default:
            break
        }
        ima4 = nil
        // The same chunk-size checks as the in-memory decoder, over the file, so both report a damaged header alike.
        try ChunkLayout.validate(source, container: container, path: path)
        var info = SF_INFO()
        let virtual = SndfileVirtualFile(source, path: path)
        guard let file = SndfileVirtualFile.open(virtual, &info) else {
            // Said as the in-memory decoder says it (a FLAC cut short, an Ogg FLAC), from the same bytes.
            throw virtual.failure ?? SndfileDecoder.openError(bytes: head, fileSize: source.count, container: container, path: path)
        }
        defer { sf_close(file) }
        guard info.channels == 1 || info.channels == 2 else {
            throw AudioFileError(.unsupported, path: path, "unsupported channel count \(info.channels) (mono or stereo)")
        }
        guard info.samplerate > 0 else {
            throw AudioFileError(.corrupt, path: path, "header gives sample rate \(info.samplerate)")
        }
        // The length sets where the track ends (and so how long a render runs): only a length the bytes back is used.
        let frames = try SndfileLength.checked(info, byteCount: source.count, path: path)
        if !SndfileLength.isUncompressed(format: info.format) {
            try SndfileLength.verifyLastFrame(file, frames: frames, channelCount: Int(info.channels), path: path)
        }
        sampleRate = Double(info.samplerate)
        channelCount = Int(info.channels)
        frameCount = frames
        codec = "sndfile"
    }

    /// The first `count` bytes of the file (fewer if it is shorter), after the same path checks as a full read
    /// except the size limit: streamed files may be of any length.
    static func readPrefix(path: String, count: Int) throws(AudioFileError) -> [UInt8] {
        guard !path.isEmpty else { throw AudioFileError(.notFound, path: path, "no such file") }
        var st = stat()
        guard stat(path, &st) == 0 else { throw AudioFileError(.notFound, path: path, "no such file") }
        let type = st.st_mode & S_IFMT
        if type == S_IFDIR { throw AudioFileError(.isDirectory, path: path, "is a directory, not an audio file") }
        guard type == S_IFREG else {
            throw AudioFileError(.unsupported, path: path,
                                 "cannot stream: not a regular file (a pipe or device reads only forward); load it into memory instead")
        }
        guard st.st_size > 0 else { throw AudioFileError(.empty, path: path, "file is empty") }
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw AudioFileError(.unreadable, path: path, "cannot open") }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: min(count, Int(st.st_size)))
        let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
        guard n > 0 else { throw AudioFileError(.unreadable, path: path, "read failed") }
        bytes.removeLast(bytes.count - n)
        return bytes
    }

    package func open() throws(AudioFileError) -> StreamDecoder {
        if let pcm { return PCMSourceDecoder(pcm) }
        let source: ByteSource
        if let shared { source = shared } else { source = try ByteSource.open(path: path) }
        if let ima4 { return try IMA4StreamDecoder(source: source, path: path, layout: ima4, checkpoints: ima4Checkpoints) }
        if codec == "mp3" {
            return try MP3StreamDecoder(source: source, path: path, channelCount: channelCount, frameOffsets: mp3FrameOffsets)
        }
        return try SndfileStreamDecoder(source: source, path: path, channelCount: channelCount, frameCount: frameCount)
    }
}
