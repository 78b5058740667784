/// A file container as recognised from its leading bytes.
public enum AudioContainer: String, Sendable, Equatable, CaseIterable {
    /// RIFF/WAVE, little-endian.
    case wav
    /// RIFX/WAVE: big-endian WAV, which libsndfile reads like WAV.
    case rifx
    /// RF64/WAVE (EBU Tech 3306), the 64-bit-size WAV variant.
    case rf64
    /// AIFF ("FORM"…"AIFF"), big-endian PCM.
    case aiff
    /// AIFF-C ("FORM"…"AIFC"): PCM, float, IMA4 and other codecs.
    case aifc
    /// Apple Core Audio Format ("caff").
    case caf
    /// Native FLAC ("fLaC").
    case flac
    /// An Ogg stream ("OggS"), Vorbis inside.
    case ogg
    /// MPEG audio (Layer III, or Layer I/II), with or without an ID3v2 tag.
    case mp3

    /// The name `AudioFileInfo.container` uses; RIFX is reported as "wav" because it is the same format
    /// in the other byte order.
    public var infoName: String {
        switch self {
        case .rifx: return "wav"
        default: return rawValue
        }
    }
}

/// Decides what a file is from its bytes, never from its name, so a WAV called `song.mp3` is still read as WAV.
public enum ContainerSniffer {
    /// The container `bytes` start with, or nil if they are not a recognised audio file.
    public static func sniff(_ bytes: [UInt8]) -> AudioContainer? {
        bytes.withUnsafeBufferPointer { sniff($0) }
    }

    /// The container `bytes` start with, or nil if they are not a recognised audio file.
    public static func sniff(_ bytes: UnsafeBufferPointer<UInt8>) -> AudioContainer? {
        let b = ByteView(bytes)
        if b.matches("RIFF", at: 0), b.matches("WAVE", at: 8) { return .wav }
        if b.matches("RIFX", at: 0), b.matches("WAVE", at: 8) { return .rifx }
        if b.matches("RF64", at: 0), b.matches("WAVE", at: 8) { return .rf64 }
        if b.matches("FORM", at: 0) {
            if b.matches("AIFF", at: 8) { return .aiff }
            if b.matches("AIFC", at: 8) { return .aifc }
        }
        if b.matches("caff", at: 0) { return .caf }
        if b.matches("fLaC", at: 0) { return .flac }
        if b.matches("OggS", at: 0) { return .ogg }
        if looksLikeMPEGAudio(b) { return .mp3 }
        return nil
    }

    /// The error for bytes `sniff` does not recognise: a free-format MP3 is named as such (it is MPEG audio, but
    /// with no bit rate in its headers its frames cannot be found, so Ensemble does not read it); anything else is
    /// "not a recognised audio file" with its first bytes.
    package static func unrecognised(_ bytes: [UInt8], path: String) -> AudioFileError {
        if isFreeFormatMPEG(bytes) {
            return AudioFileError(.unsupported, path: path, "free-format MP3 (bit rate index 0: no bit rate in its frame "
                                  + "headers) is not supported; re-encode it at a standard bit rate")
        }
        return AudioFileError(.unsupported, path: path, "not a recognised audio file (\(describeMagic(bytes)))")
    }

    /// True when `bytes` start, after an ID3v2 tag if there is one, with an MPEG audio frame header whose bit rate
    /// index is 0 ("free format": the encoder's own rate, found only by searching for the next frame).
    static func isFreeFormatMPEG(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        if bytes.starts(with: Array("ID3".utf8)), bytes.count >= 10, bytes[6..<10].allSatisfy({ $0 < 0x80 }) {
            offset = 10 + bytes[6..<10].reduce(0) { ($0 << 7) | Int($1) } + (bytes[5] & 0x10 != 0 ? 10 : 0)
        }
        guard offset + 4 <= bytes.count, bytes[offset] == 0xFF else { return false }
        let b1 = bytes[offset + 1], b2 = bytes[offset + 2]
        // Sync, a known version (not the reserved 01) and layer (not 00), bit rate index 0, a known sample rate.
        return b1 & 0xE0 == 0xE0 && (b1 >> 3) & 3 != 1 && (b1 >> 1) & 3 != 0 && b2 >> 4 == 0 && (b2 >> 2) & 3 != 3
    }

    /// A short, printable description of the first bytes, for "not a recognised audio file (…)".
    package static func describeMagic(_ bytes: [UInt8]) -> String {
        let head = bytes.prefix(4)
        if !head.isEmpty, head.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
            return "starts with \"\(String(decoding: head, as: UTF8.self))\""
        }
        let hex = head.map { byte -> String in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }
        return "starts with bytes \(hex.joined(separator: " "))"
    }

    // MARK: MPEG audio

    private static func looksLikeMPEGAudio(_ b: ByteView) -> Bool {
        var offset = 0
        var hadTag = false
        // ID3v2: "ID3", major version, revision, flags, then a 28-bit "synchsafe" size (high bits clear).
        if b.matches("ID3", at: 0), b.count >= 10 {
            let sizeBytes = (6..<10).map { b[$0] }
            guard b[3] != 0xFF, b[4] != 0xFF, sizeBytes.allSatisfy({ $0 < 0x80 }) else { return false }
            let size = sizeBytes.reduce(0) { ($0 << 7) | Int($1) }
            let hasFooter = (b[5] & 0x10) != 0
            offset = 10 + size + (hasFooter ? 10 : 0)
            hadTag = true
            // Some taggers pad beyond the declared size with zeros; tolerate a little of that.
            var skipped = 0
            while offset < b.count, b[offset] == 0, skipped < 4096 {
                offset += 1
                skipped += 1
            }
        }
        guard let first = MPEGFrameHeader(b, at: offset) else { return false }
        // After a tag, one valid header is convincing; a bare sync word occurs by chance in random data
        // about once per 2 KB, so there the next frame must line up too (or the file must end exactly there).
        if hadTag { return true }
        let next = offset + first.frameLength
        if next == b.count { return true }
        guard let second = MPEGFrameHeader(b, at: next) else { return false }
        return second.version == first.version && second.layer == first.layer && second.sampleRate == first.sampleRate
    }
}

/// The fields of a 4-byte MPEG audio frame header that matter for finding the next frame.
package struct MPEGFrameHeader: Equatable {
    enum Version: Equatable { case mpeg1, mpeg2, mpeg25 }
    let version: Version
    /// 1, 2 or 3.
    package let layer: Int
    package let bitRate: Int
    package let sampleRate: Int
    package let frameLength: Int
    /// 1 for single-channel mode, else 2.
    package let channelCount: Int
    /// PCM frames the frame decodes to (ISO/IEC 11172-3, 13818-3: 384 for Layer I, 1152 for II, 1152 or 576 for III).
    package var samples: Int { layer == 1 ? 384 : layer == 2 || version == .mpeg1 ? 1152 : 576 }

    private static let bitRatesKbps: [[Int]] = [
        [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],  // MPEG-1 Layer I
        [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],     // MPEG-1 Layer II
        [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],      // MPEG-1 Layer III
        [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],     // MPEG-2/2.5 Layer I
        [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],          // MPEG-2/2.5 Layer II/III
    ]

    fileprivate init?(_ b: ByteView, at offset: Int) {
        guard offset >= 0, offset + 4 <= b.count else { return nil }
        let b1 = b[offset + 1], b2 = b[offset + 2], b3 = b[offset + 3]
        guard b[offset] == 0xFF, b1 & 0xE0 == 0xE0 else { return nil }
        let version: Version
        switch (b1 >> 3) & 3 {
        case 0: version = .mpeg25
        case 2: version = .mpeg2
        case 3: version = .mpeg1
        default: return nil
        }
        let layer: Int
        switch (b1 >> 1) & 3 {
        case 1: layer = 3
        case 2: layer = 2
        case 3: layer = 1
        default: return nil
        }
        let bitRateIndex = Int(b2 >> 4)
        let rateIndex = Int((b2 >> 2) & 3)
        // Free-format (index 0) frames have no computable length, so they cannot be checked; reject them.
        guard bitRateIndex != 0, bitRateIndex != 15, rateIndex != 3, b3 & 3 != 2 else { return nil }
        let table: Int
        switch (version, layer) {
        case (.mpeg1, _): table = layer - 1
        case (_, 1): table = 3
        default: table = 4
        }
        let bitRate = Self.bitRatesKbps[table][bitRateIndex] * 1000
        let baseRate = [44100, 48000, 32000][rateIndex]
        let sampleRate: Int
        switch version {
        case .mpeg1: sampleRate = baseRate
        case .mpeg2: sampleRate = baseRate / 2
        case .mpeg25: sampleRate = baseRate / 4
        }
        let padding = Int((b2 >> 1) & 1)
        let length: Int
        switch layer {
        case 1: length = (12 * bitRate / sampleRate + padding) * 4
        case 3 where version != .mpeg1: length = 72 * bitRate / sampleRate + padding
        default: length = 144 * bitRate / sampleRate + padding
        }
        self.version = version
        self.layer = layer
        self.bitRate = bitRate
        self.sampleRate = sampleRate
        self.frameLength = length
        channelCount = b3 >> 6 == 3 ? 1 : 2
    }
}

/// Bounds-checked byte access so sniffing never reads past a short file.
private struct ByteView {
    let bytes: UnsafeBufferPointer<UInt8>
    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }
    init(_ raw: UnsafeRawBufferPointer) { bytes = raw.assumingMemoryBound(to: UInt8.self) }
    var count: Int { bytes.count }
    subscript(i: Int) -> UInt8 { i >= 0 && i < bytes.count ? bytes[i] : 0 }

    func matches(_ ascii: StaticString, at offset: Int) -> Bool {
        let n = ascii.utf8CodeUnitCount
        guard offset >= 0, offset + n <= bytes.count else { return false }
        return ascii.withUTF8Buffer { tag in
            (0..<n).allSatisfy { bytes[offset + $0] == tag[$0] }
        }
    }
}

extension MPEGFrameHeader {
    /// Parses the frame header at `offset` in `bytes`, or nil if there is none.
    package init?(bytes: [UInt8], at offset: Int) {
        let parsed = bytes.withUnsafeBufferPointer { MPEGFrameHeader(ByteView($0), at: offset) }
        guard let parsed else { return nil }
        self = parsed
    }

    /// Parses the frame header at `offset` in raw bytes, or nil if there is none.
    package init?(_ raw: UnsafeRawBufferPointer, at offset: Int) {
        guard let parsed = MPEGFrameHeader(ByteView(raw), at: offset) else { return nil }
        self = parsed
    }

    /// Whether `other` can be the next frame of the same stream (same version, layer and rate; channel mode and
    /// bit rate may change from frame to frame).
    func continues(_ other: MPEGFrameHeader) -> Bool {
        version == other.version && layer == other.layer && sampleRate == other.sampleRate
    }

    /// Bytes of Layer III side information after the header (where a Xing/Info tag starts).
    var sideInfoLength: Int {
        if version == .mpeg1 { return channelCount == 1 ? 17 : 32 }
        return channelCount == 1 ? 9 : 17
    }
}
