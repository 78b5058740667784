// Render thread (written by one lane per span); set up on the control thread (`Engine.makeMixer`).
import EnsembleFormats

/// Test hook standing in for positioned voices until they render: a signal on every output channel, written by
/// lane `lane` into `bus` through `MixLane.planes`, exactly as a positioned voice adds its channels (lane 0 into
/// the rack's inputs, lanes k ≥ 1 into their own accumulators, summed after the lanes).
///
/// Channel c carries a sawtooth of period `period + 7c` frames and peak `amplitude · (c + 1) / 8`, a function of
/// the absolute output frame only (so any block size gives the same bytes), different on every channel (so a
/// swapped or dropped channel shows).
@_spi(Testing) public struct PlaneTestSignal: Sendable, BitwiseCopyable {
    /// The lane that writes it (0 mixes straight into the bus rack's inputs; others through their accumulators).
    public var lane: Int
    /// The bus it is routed to (0: the master).
    public var bus: Int32
    /// Peak of the last channel (channel c peaks at `amplitude · (c + 1) / 8`).
    public var amplitude: Float
    /// Period of channel 0 in frames (≥ 1).
    public var period: Int64

    /// A signal written by `lane` into `bus`.
    public init(lane: Int = 0, bus: Int = 0, amplitude: Float = 0.5, period: Int64 = 101) {
        self.lane = lane
        self.bus = Int32(bus)
        self.amplitude = amplitude
        self.period = max(period, 1)
    }

    /// Channel `channel`'s sample at output frame `frame`.
    @_noLocks
    public func sample(channel: Int, frame: Int64) -> Float {
        let p = period + 7 * Int64(channel)
        let phase = Float(frame % p) / Float(p)
        return amplitude * Float(channel + 1) / 8 * (2 * phase - 1)
    }

    /// Adds the span's frames into `planes`.
    @_noLocks
    package func add(into planes: ChannelPlanes, _ span: MixSpan) {
        for c in 0..<planes.count {
            let x = planes[c]
            for j in 0..<span.frames { x[j] += sample(channel: c, frame: span.start + Int64(j)) }
        }
    }
}
