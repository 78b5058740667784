/// The one way into the decoders: checks the path, reads the bytes, identifies the container from them
/// (never from the file name) and hands the bytes to the decoder for that container.
public enum AudioFile {
    /// Decodes the file at `path` to planar 32-bit float at the file's own sample rate and channel count.
    ///
    /// - Throws: `AudioFileError` with kind `.notFound`, `.isDirectory`, `.empty`, `.unreadable`,
    ///   `.tooLarge` for path problems; `.unsupported` for bytes that are not a recognised audio file or an
    ///   encoding no decoder handles; `.truncated` or `.corrupt` for damaged files.
    public static func decode(path: String) throws(AudioFileError) -> DecodedAudio {
        try decode(bytes: FileBytes.read(path: path), name: path)
    }

    /// Decodes a whole file held in memory; `name` stands for the file in errors (a path, or a name you choose).
    ///
    /// - Throws: `AudioFileError` (`.empty`, `.unsupported`, `.truncated`, `.corrupt`) naming `name`.
    public static func decode(bytes: [UInt8], name: String) throws(AudioFileError) -> DecodedAudio {
        guard !bytes.isEmpty else { throw AudioFileError(.empty, path: name, "file is empty") }
        let path = name
        let container = try sniff(bytes, path: path)
        switch container {
        case .caf, .aifc:
            if let audio = try AppleIMA4.decodeIfIMA4(bytes: bytes, path: path) { return audio }
            return try SndfileDecoder.decode(bytes: bytes, container: container, path: path)
        case .mp3:
            return try MP3Decoder.decode(bytes: bytes, path: path).audio
        default:
            return try SndfileDecoder.decode(bytes: bytes, container: container, path: path)
        }
    }

    /// Describes the file at `path` (container, codec, rate, channels, length; bit rate for MP3) without
    /// keeping its samples. Only the headers are read, except for MP3, which is decoded to count frames exactly.
    ///
    /// - Throws: the same errors as `decode(path:)`, except that damage past the headers of FLAC and Ogg
    ///   files is only found by decoding.
    public static func info(path: String) throws(AudioFileError) -> AudioFileInfo {
        // Only a regular file can be walked header by header; a pipe or device is read whole (it can be read once).
        if FileBytes.isSequential(path: path) { return try info(bytes: FileBytes.read(path: path), name: path) }
        _ = try FileBytes.checkedPath(path: path)
        let source = try ByteSource.open(path: path)
        let head = source.bytes(at: 0, count: 64 * 1024)
        let container = try sniff(head, path: path)
        switch container {
        case .caf, .aifc:
            if let info = try AppleIMA4.infoIfIMA4(source: source, path: path) { return info }
            return try SndfileDecoder.info(source: source, head: head, container: container, path: path)
        case .mp3:
            return try MP3Decoder.info(bytes: try FileBytes.read(path: path), path: path)
        default:
            return try SndfileDecoder.info(source: source, head: head, container: container, path: path)
        }
    }

    private static func sniff(_ bytes: [UInt8], path: String) throws(AudioFileError) -> AudioContainer {
        guard let container = ContainerSniffer.sniff(bytes) else { throw ContainerSniffer.unrecognised(bytes, path: path) }
        return container
    }

    /// Describes a whole file held in memory, as `info(path:)` does; `name` stands for the file in errors.
    public static func info(bytes: [UInt8], name: String) throws(AudioFileError) -> AudioFileInfo {
        guard !bytes.isEmpty else { throw AudioFileError(.empty, path: name, "file is empty") }
        let container = try sniff(bytes, path: name)
        switch container {
        case .caf, .aifc:
            if let info = try AppleIMA4.infoIfIMA4(bytes: bytes, path: name) { return info }
            return try SndfileDecoder.info(bytes: bytes, container: container, path: name)
        case .mp3:
            return try MP3Decoder.info(bytes: bytes, path: name)
        default:
            return try SndfileDecoder.info(bytes: bytes, container: container, path: name)
        }
    }

    /// Decodes the file an `AudioByteReader` reads, from its current position to its end (a reader that cannot
    /// seek, like a pipe, works: it is read once). `name` stands for the file in errors.
    public static func decode(reader: AudioByteReader, name: String) throws(AudioFileError) -> DecodedAudio {
        try decode(bytes: reader.readToEnd(name: name), name: name)
    }

    /// Describes the file an `AudioByteReader` reads (read whole, from its current position to its end).
    public static func info(reader: AudioByteReader, name: String) throws(AudioFileError) -> AudioFileInfo {
        try info(bytes: reader.readToEnd(name: name), name: name)
    }
}
