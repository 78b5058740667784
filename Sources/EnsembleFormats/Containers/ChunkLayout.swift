/// Checks that the chunk sizes in a WAV, AIFF or CAF header fit the bytes actually present.
///
/// libsndfile quietly clamps a data chunk that claims more bytes than the file holds and decodes the rest,
/// so a file cut short in transfer would load as shorter audio with no warning. For these uncompressed-style
/// containers the sizes are exact, so a mismatch means the file is truncated (or its header is lying), and
/// the user should hear about it.
package enum ChunkLayout {
    package static func validate(_ bytes: [UInt8], container: AudioContainer, path: String) throws(AudioFileError) {
        try validate(.memory(bytes), container: container, path: path)
    }

    package static func validate(_ source: ByteSource, container: AudioContainer, path: String) throws(AudioFileError) {
        switch container {
        case .wav: try walkRIFF(source, bigEndian: false, path: path)
        case .rifx: try walkRIFF(source, bigEndian: true, path: path)
        case .aiff, .aifc: try walkIFF(source, path: path)
        case .caf: try walkCAF(source, path: path)
        // RF64 keeps its real sizes in a 'ds64' chunk; FLAC, Ogg and MP3 have no chunk sizes to check.
        case .rf64, .flac, .ogg, .mp3: return
        }
    }

    /// The format tag in a WAV file's 'fmt ' chunk, if the chunk is present and complete.
    static func wavFormatTag(_ b: [UInt8], bigEndian: Bool) -> UInt16? {
        var walk = ChunkWalker.riff(.memory(b), path: "", bigEndian: bigEndian)
        while let chunk = try? walk.next() {
            if chunk.id == FourCC("fmt ") {
                var body = walk.bodyReader(chunk, context: "fmt chunk")
                return try? body.readUInt16()
            }
            guard chunk.fits else { return nil }
            walk.skip(chunk)
        }
        return nil
    }

    /// Streaming writers that cannot seek back put this in the data size to mean "until end of file".
    private static let unknownSize32: Int64 = 0xFFFF_FFFF

    private static func walkRIFF(_ source: ByteSource, bigEndian: Bool, path: String) throws(AudioFileError) {
        var walk = ChunkWalker.riff(source, path: path, bigEndian: bigEndian)
        while let chunk = try walk.next() {
            if chunk.id == FourCC("data") {
                if chunk.claimedSize != unknownSize32, !chunk.fits {
                    throw truncated(path, "data chunk claims \(chunk.claimedSize) bytes but only \(chunk.available) are present")
                }
                return
            }
            guard chunk.fits else {
                throw truncated(path, "\(chunk.id) chunk claims \(chunk.claimedSize) bytes but only \(chunk.available) are present")
            }
            walk.skip(chunk)
        }
    }

    private static func walkIFF(_ source: ByteSource, path: String) throws(AudioFileError) {
        var walk = ChunkWalker(source, path: path, range: 12..<source.count, sizeBytes: 4, littleEndian: false, padded: true)
        while let chunk = try walk.next() {
            guard chunk.fits else {
                let what = chunk.id == FourCC("SSND") ? "sound data chunk" : "\(chunk.id) chunk"
                throw truncated(path, "\(what) claims \(chunk.claimedSize) bytes but only \(chunk.available) are present")
            }
            if chunk.id == FourCC("SSND") { return }
            walk.skip(chunk)
        }
    }

    private static func walkCAF(_ source: ByteSource, path: String) throws(AudioFileError) {
        var walk = ChunkWalker.caf(source, path: path)
        while let chunk = try walk.next() {
            // CAF allows -1 for a final data chunk whose length was unknown when the header was written.
            if chunk.id == FourCC("data"), chunk.claimedSize == -1 { return }
            guard chunk.fits else {
                let what = chunk.id == FourCC("data") ? "data chunk" : "\(chunk.id) chunk"
                throw truncated(path, "\(what) claims \(chunk.claimedSize) bytes but only \(chunk.available) are present")
            }
            if chunk.id == FourCC("data") { return }
            walk.skip(chunk)
        }
    }

    private static func truncated(_ path: String, _ detail: String) -> AudioFileError {
        AudioFileError(.truncated, path: path, "file is truncated or its header is wrong: \(detail)")
    }
}
