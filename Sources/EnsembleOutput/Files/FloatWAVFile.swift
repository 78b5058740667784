// Control side (the thread writing an output file).
#if canImport(Glibc)
import Glibc
import EnsembleFormats
#endif

/// A mono or stereo 32-bit float WAV written directly: `WAVE_FORMAT_IEEE_FLOAT` with the 18-byte `fmt ` chunk
/// (`cbSize` 0) and the `fact` chunk a non-PCM WAV must have, as Microsoft's WAVEFORMATEX defines them. libsndfile
/// writes a 16-byte `fmt ` without `cbSize`, which sox and some players warn about. Surround float WAVs stay
/// libsndfile's `WAVE_FORMAT_EXTENSIBLE`, which carries the channel mask.
struct FloatWAVFile {
    /// Bytes before the first sample: RIFF (12), `fmt ` (8 + 18), `fact` (8 + 4), `data` (8).
    static let headerSize = 58
    /// The most sample bytes a RIFF file's 32-bit sizes can describe.
    static let maxDataBytes = Int64(UInt32.max) - Int64(headerSize)

    let descriptor: Int32
    let channelCount: Int
    private(set) var frames: Int64 = 0

    /// Writes the header (sizes patched by `finish`) to `descriptor`, which this file now owns.
    init?(descriptor: Int32, sampleRate: Int32, channelCount: Int) {
        self.descriptor = descriptor
        self.channelCount = channelCount
        guard write(Self.header(sampleRate: UInt32(sampleRate), channels: UInt16(channelCount), frames: 0)) else {
            return nil
        }
    }

    /// Appends whole frames; false when the file would outgrow a WAV or the write failed (errno says why).
    mutating func write(_ samples: UnsafeBufferPointer<Float>) -> Bool {
        let bytes = Int64(samples.count) * 4
        guard (frames * Int64(channelCount) * 4) + bytes <= Self.maxDataBytes else {
            errno = EFBIG
            return false
        }
        // The host is little-endian (x86-64, arm64), as WAV is.
        guard write(UnsafeRawBufferPointer(samples)) else { return false }
        frames += Int64(samples.count / channelCount)
        return true
    }

    /// Patches the sizes into the header and closes the descriptor.
    func finish(sampleRate: Int32) -> Bool {
        let header = Self.header(sampleRate: UInt32(sampleRate), channels: UInt16(channelCount), frames: frames)
        let written = header.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        return close(descriptor) == 0 && written == header.count
    }

    private func write(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { write($0) }
    }

    /// False when the write failed, with errno saying why.
    private func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let code = writeAll(descriptor, bytes) else { return true }
        errno = code
        return false
    }

    private static func header(sampleRate: UInt32, channels: UInt16, frames: Int64) -> [UInt8] {
        let blockAlign = UInt32(channels) * 4
        let data = UInt32(clamping: frames * Int64(blockAlign))
        var bytes: [UInt8] = []
        func tag(_ text: String) { bytes += Array(text.utf8) }
        func u16(_ v: UInt16) { bytes += [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func u32(_ v: UInt32) { bytes += (0..<4).map { UInt8((v >> (8 * $0)) & 0xFF) } }
        tag("RIFF"); u32(UInt32(headerSize - 8) + data); tag("WAVE")
        tag("fmt "); u32(18)
        u16(3) // WAVE_FORMAT_IEEE_FLOAT
        u16(channels); u32(sampleRate); u32(sampleRate * blockAlign); u16(UInt16(blockAlign)); u16(32)
        u16(0) // cbSize: no extra format bytes
        tag("fact"); u32(4); u32(UInt32(clamping: frames))
        tag("data"); u32(data)
        return bytes
    }
}
