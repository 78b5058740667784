/// Checks that the chunk sizes in a WAV, AIFF or CAF header fit the bytes actually present.
///
/// libsndfile quietly clamps a data chunk that claims more bytes than the file holds and decodes the rest,
/// so a file cut short in transfer would load as shorter audio with no warning. For these uncompressed-style
/// containers the sizes are exact, so a mismatch means the file is truncated (or its header is lying), and
/// the user should hear about it.
enum ChunkLayout {
    static func validate(_ bytes: [UInt8], container: AudioContainer, path: String) throws(AudioFileError) {
        switch container {
        case .wav: try walkRIFF(bytes, bigEndian: false, path: path)
        case .rifx: try walkRIFF(bytes, bigEndian: true, path: path)
        case .aiff, .aifc: try walkIFF(bytes, path: path)
        case .caf: try walkCAF(bytes, path: path)
        // RF64 keeps its real sizes in a 'ds64' chunk; FLAC, Ogg and MP3 have no chunk sizes to check.
        case .rf64, .flac, .ogg, .mp3: return
        }
    }

    /// The format tag in a WAV file's 'fmt ' chunk, if the chunk is present and complete.
    static func wavFormatTag(_ b: [UInt8], bigEndian: Bool) -> UInt16? {
        var offset = 12
        while offset + 8 <= b.count {
            let size = Int(readUInt32(b, offset + 4, bigEndian: bigEndian))
            if fourCC(b, offset) == "fmt " {
                guard size >= 2, offset + 10 <= b.count else { return nil }
                let lo = UInt16(b[offset + 8]), hi = UInt16(b[offset + 9])
                return bigEndian ? lo << 8 | hi : hi << 8 | lo
            }
            guard size <= b.count - (offset + 8) else { return nil }
            offset += 8 + size + (size & 1)
        }
        return nil
    }

    /// Streaming writers that cannot seek back put this in the data size to mean "until end of file".
    private static let unknownSize32: UInt32 = 0xFFFF_FFFF

    private static func walkRIFF(_ b: [UInt8], bigEndian: Bool, path: String) throws(AudioFileError) {
        var offset = 12
        while offset + 8 <= b.count {
            let id = fourCC(b, offset)
            let size = readUInt32(b, offset + 4, bigEndian: bigEndian)
            let available = b.count - (offset + 8)
            if id == "data" {
                if size != unknownSize32, Int(size) > available {
                    throw truncated(path, "data chunk claims \(size) bytes but only \(available) are present")
                }
                return
            }
            guard Int(size) <= available else {
                throw truncated(path, "'\(id)' chunk claims \(size) bytes but only \(available) are present")
            }
            // RIFF chunks are padded to an even length.
            offset += 8 + Int(size) + Int(size & 1)
        }
    }

    private static func walkIFF(_ b: [UInt8], path: String) throws(AudioFileError) {
        var offset = 12
        while offset + 8 <= b.count {
            let id = fourCC(b, offset)
            let size = readUInt32(b, offset + 4, bigEndian: true)
            let available = b.count - (offset + 8)
            guard Int(size) <= available else {
                let what = id == "SSND" ? "sound data chunk" : "'\(id)' chunk"
                throw truncated(path, "\(what) claims \(size) bytes but only \(available) are present")
            }
            if id == "SSND" { return }
            offset += 8 + Int(size) + Int(size & 1)
        }
    }

    private static func walkCAF(_ b: [UInt8], path: String) throws(AudioFileError) {
        var offset = 8
        while offset + 12 <= b.count {
            let id = fourCC(b, offset)
            let size = Int64(bitPattern: readUInt64(b, offset + 4))
            let available = b.count - (offset + 12)
            // CAF allows -1 for a final data chunk whose length was unknown when the header was written.
            if id == "data", size == -1 { return }
            guard size >= 0, size <= Int64(available) else {
                let what = id == "data" ? "data chunk" : "'\(id)' chunk"
                throw truncated(path, "\(what) claims \(size) bytes but only \(available) are present")
            }
            if id == "data" { return }
            offset += 12 + Int(size)
        }
    }

    private static func truncated(_ path: String, _ detail: String) -> AudioFileError {
        AudioFileError(.truncated, path: path, "file is truncated or its header is wrong: \(detail)")
    }

    private static func fourCC(_ b: [UInt8], _ offset: Int) -> String {
        let raw = b[offset..<offset + 4].map { $0 >= 0x20 && $0 < 0x7F ? $0 : UInt8(ascii: "?") }
        return String(decoding: raw, as: UTF8.self)
    }

    private static func readUInt32(_ b: [UInt8], _ offset: Int, bigEndian: Bool) -> UInt32 {
        let bytes = (0..<4).map { UInt32(b[offset + $0]) }
        return bigEndian
            ? bytes[0] << 24 | bytes[1] << 16 | bytes[2] << 8 | bytes[3]
            : bytes[3] << 24 | bytes[2] << 16 | bytes[1] << 8 | bytes[0]
    }

    private static func readUInt64(_ b: [UInt8], _ offset: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(b[offset + $1]) }
    }
}
