// Render thread: handed by the bus rack to every chain it runs in a span.
import EnsembleFormats

/// The key levels of the span: for each bus that keys a compressor (`CompressorSettings.sidechain`), one level
/// per frame of the span, |x| of the bus's signal after its chain and its gain (volume × mute/solo, with their
/// ramps), the maximum over all its channels. Written by `BusRack` right after the key bus's chain has run, so
/// a compressor reads only what was written before it in the same span (`BusOrder` runs key buses first).
///
/// A level that was not written in the span (no rack, as in a unit test, a bus that is no key, or a chain fading
/// out after its key had to run after it) reads as silence: zeros or nil, never a previous span's values, so
/// nothing depends on where the spans fall.
package struct SidechainKeys: BitwiseCopyable {
    /// Bus b's levels at `base + b · stride` (b = 0…16); nil: no keys at all.
    package var base: UnsafeMutablePointer<Float>?
    package var stride: Int
    /// The buses whose levels the rack writes (`BusOrder.keys`): bit b for bus b.
    package var written: UInt32

    @_noLocks
    package init(base: UnsafeMutablePointer<Float>?, stride: Int, written: UInt32) {
        self.base = base
        self.stride = stride
        self.written = written
    }

    /// No key levels (every sidechain reads silence).
    package static var none: SidechainKeys { @_noLocks get { SidechainKeys(base: nil, stride: 0, written: 0) } }

    /// Bus `bus`'s levels for the span, or nil when there are none (`bus` < 0: no sidechain; or a bus whose
    /// levels the rack does not write).
    @inline(__always)
    @_noLocks
    package func levels(of bus: Int) -> UnsafeMutablePointer<Float>? {
        guard let base, bus >= 0, bus < 32, (written >> UInt32(truncatingIfNeeded: bus)) & 1 != 0 else { return nil }
        return base + bus * stride
    }
}
