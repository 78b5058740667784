// Render thread (the lanes): reading a compact sound's frames as Float; the memory is made by `CompactStorage`.
import EnsembleFormats

#if _endian(big)
#error("PackedSamples reads 24-bit samples as little-endian words")
#endif

/// The render side's view of a sound held in its file's own sample format (`Sound.Storage` other than `float32`):
/// raw pointers, no reference. Every format converts to exactly the Float the decoder gives for it
/// (an integer k of b bits as k·2^-(b-1)), so a compact sound mixes to the bits of the same sound held as Float.
package struct PackedSamples: BitwiseCopyable, @unchecked Sendable {
    package enum Format: UInt8, BitwiseCopyable {
        /// Signed 8-bit, one byte per sample.
        case int8
        /// Signed 16-bit.
        case int16
        /// Signed 24-bit little-endian, three bytes per sample; the byte before each plane is readable, so a sample
        /// loads as the 32-bit word ending on it, shifted down.
        case int24
        /// Apple IMA4 packets (34 bytes: a header and 64 codes) with each packet's running decoder state.
        case ima4
    }

    package let format: Format
    /// Channel 0's plane; channel 1's starts `planeBytes` later (a mono sound has one).
    package let base: UnsafeRawPointer
    package let planeBytes: Int
    /// IMA4: per channel, `packetCount` signed bytes: what a decoder running from the first packet holds as its
    /// predictor at each packet, minus the packet header's own 9-bit predictor (IMA4 keeps the running value when
    /// the header agrees with it, so the header alone does not give the exact state). Channel c's at
    /// `deltas + c × packetCount`.
    package let deltas: UnsafePointer<Int8>?
    package let packetCount: Int
    /// IMA4: decoded frames before the sound's frame 0 (a CAF packet table's priming frames).
    package let firstFrame: Int

    @_noLocks
    package init(format: Format, base: UnsafeRawPointer, planeBytes: Int, deltas: UnsafePointer<Int8>? = nil,
         packetCount: Int = 0, firstFrame: Int = 0) {
        self.format = format
        self.base = base
        self.planeBytes = planeBytes
        self.deltas = deltas
        self.packetCount = packetCount
        self.firstFrame = firstFrame
    }

    /// What a stored integer is multiplied by to give the decoder's Float (a power of two: exact).
    package var scale: Float {
        @_noLocks get {
            switch format {
            case .int8: return 0x1p-7
            case .int16, .ima4: return 0x1p-15
            case .int24: return 0x1p-23
            }
        }
    }

    /// Samples [first, first + count) of channel `channel`, unscaled (the integers as Float), into `out`. Linear
    /// formats only; the range lies inside the sound.
    @inline(__always)
    @_noLocks
    package func integers(channel: Int, from first: Int, count: Int, into out: UnsafeMutablePointer<Float>) {
        let plane = base + channel * planeBytes
        switch format {
        case .int8:
            let s = plane.assumingMemoryBound(to: Int8.self) + first
            for k in 0..<count { out[k] = Float(s[k]) }
        case .int16:
            let s = plane.assumingMemoryBound(to: Int16.self) + first
            for k in 0..<count { out[k] = Float(s[k]) }
        case .int24:
            let s = plane + 3 * first - 1
            for k in 0..<count { out[k] = Float(s.loadUnaligned(fromByteOffset: 3 * k, as: Int32.self) >> 8) }
        case .ima4:
            for k in 0..<count { out[k] = 0 }
        }
    }

    /// One sample of a linear format, scaled.
    @inline(__always)
    @_noLocks
    package func sample(channel: Int, _ i: Int) -> Float {
        let plane = base + channel * planeBytes
        switch format {
        case .int8: return Float(plane.load(fromByteOffset: i, as: Int8.self)) * scale
        case .int16: return Float(plane.assumingMemoryBound(to: Int16.self)[i]) * scale
        case .int24: return Float(plane.loadUnaligned(fromByteOffset: 3 * i - 1, as: Int32.self) >> 8) * scale
        case .ima4: return 0
        }
    }

    /// IMA4: channel `channel`'s blocks from packet `packet` on (34 bytes each, one after the other), and their
    /// state offsets (one each).
    @inline(__always)
    @_noLocks
    package func blocks(channel: Int, from packet: Int) -> (bytes: UnsafePointer<UInt8>, deltas: UnsafePointer<Int8>) {
        let bytes = (base + channel * planeBytes + packet * IMA4Packets.blockBytes).assumingMemoryBound(to: UInt8.self)
        return (bytes, deltas.unsafelyUnwrapped + channel * packetCount + packet)
    }
}
