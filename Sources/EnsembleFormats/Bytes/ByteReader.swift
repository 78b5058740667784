/// A four-character code as stored in CAF and AIFF headers (big-endian, first character in the top byte).
package struct FourCC: Hashable, Sendable, CustomStringConvertible {
    package let rawValue: UInt32

    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Builds a code from a four-character ASCII literal such as `"caff"`.
    package init(_ text: StaticString) {
        precondition(text.utf8CodeUnitCount == 4, "a FourCC literal has exactly four ASCII characters")
        var value: UInt32 = 0
        text.withUTF8Buffer { for byte in $0 { value = value << 8 | UInt32(byte) } }
        rawValue = value
    }

    /// The bytes in file order.
    package var bytes: [UInt8] { [UInt8(rawValue >> 24), UInt8(rawValue >> 16 & 0xFF), UInt8(rawValue >> 8 & 0xFF), UInt8(rawValue & 0xFF)] }

    /// Printable form for error messages; non-printable codes are shown in hex so a message stays one line.
    package var description: String {
        let chars = bytes
        if chars.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
            return "'" + String(decoding: chars, as: UTF8.self) + "'"
        }
        return "0x" + String(rawValue, radix: 16)
    }
}

/// A cursor over a file's bytes that reads big- or little-endian fields: the one bounds-checked reader every
/// container walk uses (CAF, AIFF/AIFC, RIFF/RIFX chunk headers and bodies, loop-point chunks), over bytes in
/// memory or over an open file (`ByteSource`).
///
/// Every read is bounds-checked against `end` and throws `.truncated` rather than trapping, because the bytes come
/// from files we do not control. Limiting `end` to a chunk keeps a malformed field from reading into the next chunk.
package struct ByteReader {
    package let source: ByteSource
    package let path: String
    /// Names what is being read ("CAF desc chunk"), so a truncation error says where the file ended.
    package var context: String
    /// Byte order of multi-byte fields: false for CAF, AIFF and RIFX, true for RIFF/WAV.
    package var littleEndian = false
    /// Index of the next byte to read.
    package private(set) var offset: Int
    /// One past the last byte this reader may read.
    package let end: Int

    /// A reader over `bytes[range]` (the whole array when `range` is nil).
    package init(_ bytes: [UInt8], path: String, context: String, range: Range<Int>? = nil) {
        self.init(.memory(bytes), path: path, context: context, range: range)
    }

    /// A reader over `source[range]` (all of it when `range` is nil).
    package init(_ source: ByteSource, path: String, context: String, range: Range<Int>? = nil) {
        self.source = source
        self.path = path
        self.context = context
        let count = source.count
        let r = range ?? 0..<count
        // Clamp so a caller's miscomputed range still cannot index outside the source.
        let lower = min(max(r.lowerBound, 0), count)
        offset = lower
        end = min(max(r.upperBound, lower), count)
    }

    /// Bytes left before `end`.
    package var remaining: Int { end - offset }

    /// Throws `.truncated` unless `count` more bytes are available.
    func require(_ count: Int) throws(AudioFileError) {
        guard count >= 0, count <= remaining else {
            throw AudioFileError(.truncated, path: path,
                                 "file ends inside the \(context) (needs \(count) bytes at offset \(offset), \(remaining) left)")
        }
    }

    /// Moves past `count` bytes, or throws `.truncated` if they are not there.
    package mutating func skip(_ count: Int) throws(AudioFileError) {
        try require(count)
        offset += count
    }

    /// Moves past at most `count` bytes, stopping at `end`; for padding that may be missing at the end of a file.
    package mutating func skipClamped(_ count: Int) {
        offset += min(max(count, 0), remaining)
    }

    /// The next `count` bytes as an array, or `.truncated`.
    mutating func readBytes(_ count: Int) throws(AudioFileError) -> [UInt8] {
        try require(count)
        let bytes = source.bytes(at: offset, count: count)
        guard bytes.count == count else {
            throw AudioFileError(.truncated, path: path, "file ends inside the \(context) (it shrank while being read)")
        }
        offset += count
        return bytes
    }

    // Each read consumes the field's bytes in the reader's byte order or throws `.truncated` and leaves `offset` alone.

    mutating func readUInt8() throws(AudioFileError) -> UInt8 {
        UInt8(truncatingIfNeeded: try readInteger(1))
    }

    package mutating func readUInt16() throws(AudioFileError) -> UInt16 {
        UInt16(truncatingIfNeeded: try readInteger(2))
    }

    mutating func readUInt32() throws(AudioFileError) -> UInt32 {
        UInt32(truncatingIfNeeded: try readInteger(4))
    }

    mutating func readUInt64() throws(AudioFileError) -> UInt64 {
        try readInteger(8)
    }

    mutating func readInt16() throws(AudioFileError) -> Int16 { Int16(bitPattern: try readUInt16()) }
    mutating func readInt32() throws(AudioFileError) -> Int32 { Int32(bitPattern: try readUInt32()) }
    mutating func readInt64() throws(AudioFileError) -> Int64 { Int64(bitPattern: try readUInt64()) }
    mutating func readFloat64() throws(AudioFileError) -> Double { Double(bitPattern: try readUInt64()) }

    /// A four-character code, always in file order whatever the reader's byte order.
    mutating func readFourCC() throws(AudioFileError) -> FourCC {
        let bytes = try readBytes(4)
        return FourCC(rawValue: bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
    }

    /// Reads an 80-bit IEEE 754 extended float (AIFF's sample rate field) as a Double.
    ///
    /// Values a Double cannot hold come back as infinity or zero, which the caller's range check then rejects.
    mutating func readFloat80() throws(AudioFileError) -> Double {
        let signAndExponent = try readUInt16()
        let mantissa = try readUInt64()
        let negative = signAndExponent & 0x8000 != 0
        let biased = Int(signAndExponent & 0x7FFF)
        if mantissa == 0 { return negative ? -0.0 : 0.0 }
        if biased == 0x7FFF { return .nan }
        // The 80-bit format has an explicit integer bit, so the mantissa is an integer scaled by 2^(e - 16383 - 63).
        let magnitude = Double(sign: .plus, exponent: biased - 16383 - 63, significand: Double(mantissa))
        return negative ? -magnitude : magnitude
    }

    private mutating func readInteger(_ count: Int) throws(AudioFileError) -> UInt64 {
        let bytes = try readBytes(count)
        let value = bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return littleEndian ? value.byteSwapped >> UInt64(64 - 8 * count) : value
    }
}

/// Appends big-endian fields to a byte array, mirroring `ByteReader` for the writers.
package struct ByteWriter {
    package private(set) var bytes: [UInt8] = []

    package init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    // Each append writes the value's bytes in big-endian order.

    package mutating func append(_ value: UInt8) { bytes.append(value) }
    package mutating func append(_ value: UInt16) { appendBigEndian(UInt64(value), 2) }
    package mutating func append(_ value: UInt32) { appendBigEndian(UInt64(value), 4) }
    package mutating func append(_ value: UInt64) { appendBigEndian(value, 8) }
    package mutating func append(_ value: Int16) { append(UInt16(bitPattern: value)) }
    package mutating func append(_ value: Int32) { append(UInt32(bitPattern: value)) }
    package mutating func append(_ value: Int64) { append(UInt64(bitPattern: value)) }
    package mutating func append(_ value: Double) { append(value.bitPattern) }
    package mutating func append(_ code: FourCC) { append(code.rawValue) }
    package mutating func append<C: Collection>(contentsOf data: C) where C.Element == UInt8 { bytes.append(contentsOf: data) }

    /// Writes a positive, finite Double as an 80-bit IEEE 754 extended float (AIFF's sample rate field).
    package mutating func appendFloat80(_ value: Double) {
        guard value.isFinite, value > 0 else {
            append(UInt16(0)); append(UInt64(0)); return
        }
        // Double's significand has an implicit leading 1; the 80-bit format stores it explicitly in bit 63.
        let exponent = UInt16(truncatingIfNeeded: Int(value.exponent) + 16383)
        let mantissa = (UInt64(1) << 63) | (value.significandBitPattern << 11)
        append(exponent)
        append(mantissa)
    }

    private mutating func appendBigEndian(_ value: UInt64, _ count: Int) {
        for shift in stride(from: (count - 1) * 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}
