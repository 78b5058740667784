/// The parts of a Core Audio Format (CAF) file that decoding needs, parsed from the file's bytes.
///
/// Only structure is checked here; whether the description makes sense for a particular codec is the codec's call.
package struct CAFFile {
    package static let magic = FourCC("caff")

    /// The `desc` chunk (an AudioStreamBasicDescription, all fields big-endian).
    package struct Description: Equatable {
        package var sampleRate: Double
        var formatID: FourCC
        var formatFlags: UInt32
        package var bytesPerPacket: UInt32
        package var framesPerPacket: UInt32
        var channelsPerFrame: UInt32
        var bitsPerChannel: UInt32
    }

    /// The fixed header of the `pakt` chunk; per-packet descriptions after it are not needed for constant-size codecs.
    struct PacketTable: Equatable {
        var numberPackets: Int64
        var validFrames: Int64
        var primingFrames: Int32
        var remainderFrames: Int32
    }

    package var description: Description
    var packetTable: PacketTable?
    /// Byte range of the audio packets, after the `data` chunk's edit count.
    package var audioData: Range<Int>

    /// True when `bytes` start with the CAF file type.
    package static func sniff(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 4 && bytes[0] == 0x63 && bytes[1] == 0x61 && bytes[2] == 0x66 && bytes[3] == 0x66
    }

    /// Reads the file header and the `desc` chunk, which the format requires to come first.
    ///
    /// Kept separate from `parse` so a caller can tell the codec before committing to validating the rest.
    static func readDescription(_ source: ByteSource, path: String) throws(AudioFileError) -> Description {
        var reader = ByteReader(source, path: path, context: "CAF file header")
        guard try reader.readFourCC() == magic else {
            throw AudioFileError(.corrupt, path: path, "not a CAF file (missing 'caff' header)")
        }
        let version = try reader.readUInt16()
        guard version == 1 else {
            throw AudioFileError(.unsupported, path: path, "CAF version \(version) is not supported (only version 1)")
        }
        _ = try reader.readUInt16() // file flags: none defined for version 1
        reader.context = "CAF chunk header"
        let type = try reader.readFourCC()
        let size = try reader.readInt64()
        guard type == FourCC("desc") else {
            throw AudioFileError(.corrupt, path: path, "CAF file does not start with a desc chunk (found \(type))")
        }
        guard size >= 32 else {
            throw AudioFileError(.corrupt, path: path, "CAF desc chunk is \(size) bytes (needs 32)")
        }
        reader.context = "CAF desc chunk"
        return Description(
            sampleRate: try reader.readFloat64(),
            formatID: try reader.readFourCC(),
            formatFlags: try reader.readUInt32(),
            bytesPerPacket: try reader.readUInt32(),
            framesPerPacket: try reader.readUInt32(),
            channelsPerFrame: try reader.readUInt32(),
            bitsPerChannel: try reader.readUInt32()
        )
    }

    /// Walks every chunk, recording `desc`, `pakt` and `data`; unknown chunks (`kuki`, `free`, `chan`, `info`, …) are skipped.
    ///
    /// Throws `.truncated` when a chunk claims more bytes than the file holds, so a cut-off download is reported
    /// rather than silently played short.
    package static func parse(_ bytes: [UInt8], path: String) throws(AudioFileError) -> CAFFile {
        try parse(.memory(bytes), path: path)
    }

    /// `parse` over any byte source (an open file for streaming).
    package static func parse(_ source: ByteSource, path: String) throws(AudioFileError) -> CAFFile {
        let description = try readDescription(source, path: path)
        var walk = ChunkWalker.caf(source, path: path)
        var packetTable: PacketTable?
        var audioData: Range<Int>?
        while walk.remaining > 0 {
            // Chunks may follow the audio (a pakt is often written last). Once the audio is in hand, a damaged
            // trailing chunk costs at most the trimming, so the walk stops instead of failing the whole file.
            if audioData != nil && walk.remaining < 12 { break }
            guard let chunk = try walk.next() else {
                throw AudioFileError(.truncated, path: path, "file ends inside a CAF chunk header (\(walk.remaining) bytes left)")
            }
            let type = chunk.id
            if type == FourCC("data") && chunk.claimedSize == -1 {
                // -1 is how a streaming writer says "to the end of the file", since it could not seek back.
            } else if chunk.claimedSize < 0 {
                if audioData != nil { break }
                throw AudioFileError(.corrupt, path: path, "CAF \(type) chunk has negative size \(chunk.claimedSize)")
            } else if !chunk.fits {
                if audioData != nil { break }
                throw AudioFileError(.truncated, path: path,
                                     "CAF \(type) chunk claims \(chunk.claimedSize) bytes but only \(chunk.available) remain (file truncated?)")
            }
            // A -1 data chunk runs to the end: `available` is what the body clamps to.
            let body = chunk.claimedSize == -1 ? chunk.bodyStart..<(chunk.bodyStart + chunk.available) : chunk.body
            var reader = walk.bodyReader(chunk, context: "CAF \(type) chunk")
            switch type {
            case FourCC("pakt"):
                guard body.count >= 24 else {
                    if audioData != nil { break }
                    throw AudioFileError(.corrupt, path: path, "CAF pakt chunk is \(body.count) bytes (needs 24)")
                }
                packetTable = PacketTable(numberPackets: try reader.readInt64(), validFrames: try reader.readInt64(),
                                          primingFrames: try reader.readInt32(), remainderFrames: try reader.readInt32())
            case FourCC("data") where audioData == nil:
                guard body.count >= 4 else {
                    throw AudioFileError(.corrupt, path: path, "CAF data chunk is \(body.count) bytes (needs a 4-byte edit count)")
                }
                audioData = (body.lowerBound + 4)..<body.upperBound
            default:
                break
            }
            if chunk.claimedSize == -1 { break }
            walk.skip(chunk)
        }
        guard let audioData else {
            throw AudioFileError(.corrupt, path: path, "CAF file has no data chunk")
        }
        return CAFFile(description: description, packetTable: packetTable, audioData: audioData)
    }
}
