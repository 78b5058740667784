/// The parts of an AIFF or AIFF-C file that decoding needs, parsed from the file's bytes.
package struct AIFCFile {
    /// The `COMM` chunk.
    package struct Common: Equatable {
        package var channelCount: Int
        /// As stored. For compressed AIFC this is not reliably a frame count: ffmpeg and Apple store the number of
        /// packets for `ima4`, and a piped ffmpeg write leaves it 0, so decoders should trust the SSND size instead.
        package var numSampleFrames: UInt32
        package var sampleSize: Int
        package var sampleRate: Double
        /// `NONE` for plain AIFF, which has no compression field.
        package var compressionType: FourCC

        package init(channelCount: Int, numSampleFrames: UInt32, sampleSize: Int, sampleRate: Double,
                     compressionType: FourCC) {
            self.channelCount = channelCount
            self.numSampleFrames = numSampleFrames
            self.sampleSize = sampleSize
            self.sampleRate = sampleRate
            self.compressionType = compressionType
        }
    }

    /// True for an AIFF-C (`AIFC`) form, false for plain AIFF.
    package var isCompressedForm: Bool
    package var common: Common
    /// Byte range of the sound data inside `SSND`, after its offset/blockSize header and `offset` bytes of alignment.
    package var soundData: Range<Int>

    /// The form type when `bytes` start with an IFF `FORM` of type `AIFF` or `AIFC`, else nil.
    package static func sniff(_ bytes: [UInt8]) -> FourCC? {
        guard bytes.count >= 12, Array(bytes[0..<4]) == FourCC("FORM").bytes else { return nil }
        let form = Array(bytes[8..<12])
        if form == FourCC("AIFF").bytes { return FourCC("AIFF") }
        if form == FourCC("AIFC").bytes { return FourCC("AIFC") }
        return nil
    }

    /// Walks the FORM's chunks (padded to even sizes), recording `COMM` and `SSND`; others are skipped.
    ///
    /// `commonOnly` stops at the first `COMM`, so a caller can learn the codec cheaply and ignore the rest of a
    /// file it will hand to another decoder. In that mode `soundData` is empty.
    package static func parse(_ bytes: [UInt8], path: String, commonOnly: Bool = false) throws(AudioFileError) -> AIFCFile {
        try parse(.memory(bytes), path: path, commonOnly: commonOnly)
    }

    /// `parse` over any byte source (an open file for streaming).
    package static func parse(_ source: ByteSource, path: String, commonOnly: Bool = false) throws(AudioFileError) -> AIFCFile {
        var header = ByteReader(source, path: path, context: "AIFF FORM header")
        guard try header.readFourCC() == FourCC("FORM") else {
            throw AudioFileError(.corrupt, path: path, "not an AIFF file (missing FORM header)")
        }
        let formSize = Int(try header.readUInt32())
        let formType = try header.readFourCC()
        guard formType == FourCC("AIFF") || formType == FourCC("AIFC") else {
            throw AudioFileError(.corrupt, path: path, "FORM type \(formType) is not AIFF or AIFC")
        }
        let isCompressedForm = formType == FourCC("AIFC")
        guard formSize >= 4 else {
            throw AudioFileError(.corrupt, path: path, "AIFF FORM size is \(formSize) (an unfinished streaming write?)")
        }
        // Trailing bytes past the FORM are not ours to interpret; a FORM longer than the file shows up below as a
        // chunk running past the end.
        let formEnd = min(8 + formSize, source.count)
        var walk = ChunkWalker(source, path: path, range: 12..<max(12, formEnd), sizeBytes: 4, littleEndian: false, padded: true)
        var common: Common?
        var soundData: Range<Int>?
        while let chunk = try walk.next() {
            let type = chunk.id
            guard chunk.fits else {
                throw AudioFileError(.truncated, path: path,
                                     "AIFF \(type) chunk claims \(chunk.claimedSize) bytes but only \(chunk.available) remain (file truncated?)")
            }
            var body = walk.bodyReader(chunk, context: "AIFF \(type) chunk")
            switch type {
            case FourCC("COMM") where common == nil:
                common = try readCommon(&body, compressed: isCompressedForm)
            case FourCC("SSND") where soundData == nil:
                let offset = Int(try body.readUInt32())
                _ = try body.readUInt32() // blockSize: an alignment hint for writers, irrelevant to reading
                guard offset <= body.remaining else {
                    throw AudioFileError(.corrupt, path: path, "AIFF SSND offset \(offset) is past the end of its chunk")
                }
                soundData = (body.offset + offset)..<body.end
            default:
                break
            }
            if commonOnly, let common {
                return AIFCFile(isCompressedForm: isCompressedForm, common: common, soundData: 0..<0)
            }
            // The pad byte after an odd-sized chunk may be missing at the very end of a file; that is harmless.
            walk.skip(chunk)
        }
        guard let common else {
            throw AudioFileError(.corrupt, path: path, "AIFF file has no COMM chunk")
        }
        if commonOnly {
            return AIFCFile(isCompressedForm: isCompressedForm, common: common, soundData: 0..<0)
        }
        guard let soundData else {
            throw AudioFileError(.corrupt, path: path, "AIFF file has no SSND chunk")
        }
        return AIFCFile(isCompressedForm: isCompressedForm, common: common, soundData: soundData)
    }

    private static func readCommon(_ chunk: inout ByteReader, compressed: Bool) throws(AudioFileError) -> Common {
        let channels = Int(try chunk.readInt16())
        let frames = try chunk.readUInt32()
        let sampleSize = Int(try chunk.readInt16())
        let rate = try chunk.readFloat80()
        let compression = compressed ? try chunk.readFourCC() : FourCC("NONE")
        return Common(channelCount: channels, numSampleFrames: frames, sampleSize: sampleSize,
                      sampleRate: rate, compressionType: compression)
    }
}
