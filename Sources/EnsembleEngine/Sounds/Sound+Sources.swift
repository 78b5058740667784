// Control side: loading a sound from somewhere other than a path.
import Foundation
import EnsembleFormats
import EnsembleRender

extension Sound {
    /// Decodes a whole file held in memory as `Data` (any format `AudioFile` reads); `name` stands for it in
    /// messages.
    public convenience init(data: Data, name: String, storage: StoragePreference = .compact) throws(EngineError) {
        try self.init(bytes: [UInt8](data), name: name, storage: storage)
    }

    /// Decodes the file an `AudioByteReader` reads, from its current position to its end. A reader that cannot
    /// seek (a pipe) works: it is read once.
    public convenience init(reader: AudioByteReader, name: String, storage: StoragePreference = .compact) throws(EngineError) {
        let bytes: [UInt8]
        do { bytes = try reader.readToEnd(name: name) } catch { throw .file(error) }
        try self.init(bytes: bytes, name: name, storage: storage)
    }

    /// A streamed sound over a whole file held in memory: it stays compressed (an MP3, a FLAC) and each track
    /// decodes a little ahead of playback, as `init(streamingContentsOf:)` does for a path.
    public convenience init(streamingBytes bytes: [UInt8], name: String) throws(EngineError) {
        let file: StreamFile
        do { file = try StreamFile(bytes: bytes, name: name) } catch { throw .file(error) }
        try self.init(streaming: file)
    }

    /// A streamed sound read through an application's reader while it plays (the reader must seek and know its
    /// size; a pipe throws `.unsupported`: load it with `init(reader:name:)`).
    public convenience init(streamingFrom reader: AudioByteReader, name: String) throws(EngineError) {
        let file: StreamFile
        do { file = try StreamFile(reader: reader, name: name) } catch { throw .file(error) }
        try self.init(streaming: file)
    }

    /// A sound over frames the application computes on request (`PCMSource`): streamed, so tracks loop it, seek
    /// in it and schedule it like a streamed file, and several tracks can play it at once.
    public convenience init(pcmSource source: PCMSource) throws(EngineError) {
        try self.init(streaming: StreamFile(pcm: source))
    }
}
