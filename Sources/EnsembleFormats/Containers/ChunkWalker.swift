/// Steps through the chunks of a RIFF/RIFX, IFF (AIFF/AIFC) or CAF container with a `ByteReader`.
///
/// Runs on the thread that parses the file (control or loader). Sizes come straight from the file and may be
/// anything (negative, near `Int64.max`); the walker never does arithmetic with a size it has not first checked
/// against the bytes that remain, so no field can make it overflow, seek outside the file or loop forever.
package struct ChunkWalker {
    /// One chunk header as found in the file.
    package struct Chunk {
        package let id: FourCC
        /// The size the header claims, as a signed number (CAF sizes are signed; 32-bit sizes are never negative).
        package let claimedSize: Int64
        /// Offset of the chunk's first body byte.
        let bodyStart: Int
        /// Bytes from `bodyStart` to the end of the walk's range.
        package let available: Int

        /// True when the claimed size fits the bytes present.
        package var fits: Bool { claimedSize >= 0 && claimedSize <= Int64(available) }
        /// The body's byte range, clamped to what the file holds.
        package var body: Range<Int> { bodyStart..<(bodyStart + clampedSize) }
        /// The claimed size, clamped to 0…available.
        var clampedSize: Int { claimedSize < 0 ? 0 : Int(min(claimedSize, Int64(available))) }
    }

    package private(set) var reader: ByteReader
    /// 4 for RIFF and IFF, 8 for CAF.
    let sizeBytes: Int
    /// RIFF and IFF pad odd-sized chunks to an even length; CAF does not.
    let padded: Bool

    /// A walk over `source[range]`, whose first chunk header starts at `range.lowerBound`.
    package init(_ source: ByteSource, path: String, range: Range<Int>, sizeBytes: Int, littleEndian: Bool, padded: Bool) {
        reader = ByteReader(source, path: path, context: "chunk header", range: range)
        reader.littleEndian = littleEndian
        self.sizeBytes = sizeBytes
        self.padded = padded
    }

    /// The walk over a RIFF (little-endian) or RIFX (big-endian) file's chunks, after its 12-byte header.
    static func riff(_ source: ByteSource, path: String, bigEndian: Bool) -> ChunkWalker {
        ChunkWalker(source, path: path, range: 12..<source.count, sizeBytes: 4, littleEndian: !bigEndian, padded: true)
    }

    /// The walk over a CAF file's chunks, after its 8-byte file header.
    package static func caf(_ source: ByteSource, path: String) -> ChunkWalker {
        ChunkWalker(source, path: path, range: 8..<source.count, sizeBytes: 8, littleEndian: false, padded: false)
    }

    /// Offset of the next chunk header.
    package var offset: Int { reader.offset }
    /// Bytes left in the walk's range.
    package var remaining: Int { reader.remaining }

    /// The next chunk header, or nil when too few bytes remain for one.
    package mutating func next() throws(AudioFileError) -> Chunk? {
        guard reader.remaining >= 4 + sizeBytes else { return nil }
        let id = try reader.readFourCC()
        let size = sizeBytes == 8 ? try reader.readInt64() : Int64(try reader.readUInt32())
        return Chunk(id: id, claimedSize: size, bodyStart: reader.offset, available: reader.remaining)
    }

    /// Moves past `chunk`'s body (and pad byte), or to the end of the range if the body claims more than is left.
    package mutating func skip(_ chunk: Chunk) {
        let size = chunk.clampedSize
        reader.skipClamped(size + (padded ? size & 1 : 0))
    }

    /// A reader over `chunk`'s body (clamped to the file), in the walk's byte order.
    func bodyReader(_ chunk: Chunk, context: String) -> ByteReader {
        var body = ByteReader(reader.source, path: reader.path, context: context, range: chunk.body)
        body.littleEndian = reader.littleEndian
        return body
    }
}
