import CMixKernel
import Foundation
import Synchronization
import EnsembleFormats

/// Peak and sum of squares of a stereo signal over one span of a block, gathered on the render side.
package struct MeterAccumulator {
    package var peakL: Float = 0
    package var peakR: Float = 0
    package var sumL = 0.0
    package var sumR = 0.0

    @_noLocks
    package init() {}

    @inline(__always)
    @_noLocks
    package mutating func add(_ l: Float, _ r: Float) {
        peakL = max(peakL, abs(l))
        peakR = max(peakR, abs(r))
        sumL += Double(l * l)
        sumR += Double(r * r)
    }

    @_noLocks
    mutating func addMono(_ s: UnsafeMutablePointer<Float>, _ n: Int, _ a: Float, _ c: Float) {
        for j in 0..<n { add(a * s[j], c * s[j]) }
    }

    @_noLocks
    mutating func addStereo(_ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, _ n: Int,
                            _ a: Float, _ b: Float, _ c: Float, _ d: Float) {
        for j in 0..<n { add(a * l[j] + b * r[j], c * l[j] + d * r[j]) }
    }

    /// A whole buffer pair at once (the master's and buses' meters): `ensemble_meter_pair`, whose squares go
    /// into eight partial sums, so a block's energy is not one chain of 1024 dependent Double additions in the
    /// serial phase. (A reading is a measurement, not output: only its grouping of the additions differs from
    /// `add(_:_:)`'s, by rounding.)
    @_noLocks
    package mutating func add(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, count: Int) {
        var m = ensemble_meter_sums(peakL: peakL, peakR: peakR, sumL: sumL, sumR: sumR)
        _unsafePerformance { ensemble_meter_pair(left, right, count, &m) }
        (peakL, peakR, sumL, sumR) = (m.peakL, m.peakR, m.sumL, m.sumR)
    }

    /// Measures every pair of `planes` over `count` frames into `readout` (pair by pair, as `publish(_:pair:)`).
    @_noLocks
    package static func publish(_ planes: ChannelPlanes, count: Int, to readout: MeterReadout) {
        var p = 0
        while 2 * p + 1 < planes.count {
            var m = MeterAccumulator()
            m.add(left: planes[2 * p], right: planes[2 * p + 1], count: count)
            readout.publish(m, pair: p)
            p += 1
        }
    }
}

/// A meter in the model of `AVAudioPlayer`: the render side accumulates, `update(clock:)` takes a reading, and
/// `peakPower`/`averagePower` report that reading until the next one.
///
/// Render side (`publish`, `clear`): after every span it raises the held peaks (atomic max of the float bit
/// patterns, which order like the values for non-negative floats) and adds its sums of squares (a compare-exchange
/// loop on Double bit patterns; the only other writer is the reader's exchange, so it retries at most rarely).
/// Control side (`update`): exchanges the accumulations with 0, so every frame lands in exactly one reading, and
/// divides the energy by the output frames rendered since the previous reading. Peak: the largest |sample| since
/// the previous reading (a one-frame spike is never missed); average: RMS over those frames, silence included.
/// A span published while the reader exchanges may land in the next reading, never in none.
package struct MeterReadout: @unchecked Sendable {
    /// Per channel pair p, 8 cells from 8p: accumulated peakL, peakR (Float bits), sumL, sumR (Double bits);
    /// reading peakL, peakR, rmsL, rmsR (Float bits). Then the clock of the last reading.
    private let cells: UnsafeMutablePointer<Atomic<UInt64>>
    /// Channels measured: 2 (tracks, stereo output), 6 or 8 (the master and buses on surround output).
    package let channelCount: Int
    private var pairs: Int { @_noLocks get { channelCount / 2 } }
    private var count: Int { @_noLocks get { 8 * pairs + 1 } }

    package init(channelCount: Int = 2) {
        self.channelCount = max(2, channelCount & ~1)
        let count = 8 * (self.channelCount / 2) + 1
        cells = .allocate(capacity: count)
        for i in 0..<count { (cells + i).initialize(to: Atomic(0)) }
    }

    package func deallocate() {
        cells.deinitialize(count: count)
        cells.deallocate()
    }

    /// Adds a span's accumulation of the front pair (channels 0 and 1).
    @inline(__always)
    @_noLocks
    package func publish(_ m: MeterAccumulator) {
        publish(m, pair: 0)
    }

    /// Adds a span's accumulation of channels 2·pair and 2·pair + 1.
    @inline(__always)
    @_noLocks
    package func publish(_ m: MeterAccumulator, pair: Int) {
        let base = 8 * pair
        cells[base].max(UInt64(m.peakL.bitPattern), ordering: .relaxed)
        cells[base + 1].max(UInt64(m.peakR.bitPattern), ordering: .relaxed)
        add(m.sumL, to: base + 2)
        add(m.sumR, to: base + 3)
    }

    @inline(__always)
    @_noLocks
    private func add(_ x: Double, to cell: Int) {
        if x == 0 { return }
        var old = cells[cell].load(ordering: .relaxed)
        while true {
            let new = (Double(bitPattern: old) + x).bitPattern
            let (exchanged, current) = cells[cell].compareExchange(expected: old, desired: new, ordering: .relaxed)
            if exchanged { return }
            old = current
        }
    }

    /// Forgets what was accumulated (metering switched off).
    @_noLocks
    func clear() {
        for p in 0..<pairs {
            for i in 0..<4 { cells[8 * p + i].store(0, ordering: .relaxed) }
        }
    }

    /// Takes a reading: peak and RMS since the previous one; `clock` is the engine's output frame count now.
    package func update(clock: Int64) {
        let last = Int64(bitPattern: cells[8 * pairs].exchange(UInt64(bitPattern: clock), ordering: .relaxed))
        let frames = Double(max(clock - last, 1))
        for p in 0..<pairs {
            let base = 8 * p
            for channel in 0..<2 {
                let peak = UInt32(truncatingIfNeeded: cells[base + channel].exchange(0, ordering: .relaxed))
                let sum = Double(bitPattern: cells[base + 2 + channel].exchange(0, ordering: .relaxed))
                cells[base + 4 + channel].store(UInt64(peak), ordering: .relaxed)
                cells[base + 6 + channel].store(UInt64(Float((sum / frames).squareRoot()).bitPattern), ordering: .relaxed)
            }
        }
    }

    /// Peak power of `channel` (0 left, 1 right, then the other channels in `SpeakerLayout` order; channels past
    /// the last read as the last) at the last reading, in dB full scale, −160 for silence.
    package func peakPower(channel: Int) -> Float { reading(channel, 4) }
    /// Average (RMS) power of `channel` at the last reading, in dB full scale, −160 for silence.
    package func averagePower(channel: Int) -> Float { reading(channel, 6) }

    private func reading(_ channel: Int, _ offset: Int) -> Float {
        let c = min(max(channel, 0), channelCount - 1)
        let cell = 8 * (c / 2) + offset + c % 2
        return Self.decibels(Float(bitPattern: UInt32(truncatingIfNeeded: cells[cell].load(ordering: .relaxed))))
    }

    /// 20·log10(x), floored at −160 dB as AVAudioPlayer's meters are. Values above 0 dB are kept: they mean
    /// the signal is over full scale and will clip in a fixed-point file.
    package static func decibels(_ amplitude: Float) -> Float {
        amplitude > 0 ? max(-160, 20 * log10(amplitude)) : -160
    }
}
