import Foundation
import Synchronization

/// Peak and sum of squares of a stereo signal over one span of a block, gathered on the render side.
struct MeterAccumulator {
    var peakL: Float = 0
    var peakR: Float = 0
    var sumL = 0.0
    var sumR = 0.0

    @_noLocks
    init() {}

    @inline(__always)
    @_noLocks
    mutating func add(_ l: Float, _ r: Float) {
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

    @_noLocks
    mutating func add(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, count: Int) {
        for j in 0..<count { add(left[j], right[j]) }
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
struct MeterReadout: @unchecked Sendable {
    /// Accumulated: peakL, peakR (Float bits), sumL, sumR (Double bits). Reading: peakL, peakR, rmsL, rmsR
    /// (Float bits), and the clock of the last reading.
    private let cells: UnsafeMutablePointer<Atomic<UInt64>>
    private static var count: Int { @_noLocks get { 9 } }

    init() {
        cells = .allocate(capacity: Self.count)
        for i in 0..<Self.count { (cells + i).initialize(to: Atomic(0)) }
    }

    func deallocate() {
        cells.deinitialize(count: Self.count)
        cells.deallocate()
    }

    /// Adds a span's accumulation.
    @inline(__always)
    @_noLocks
    func publish(_ m: MeterAccumulator) {
        cells[0].max(UInt64(m.peakL.bitPattern), ordering: .relaxed)
        cells[1].max(UInt64(m.peakR.bitPattern), ordering: .relaxed)
        add(m.sumL, to: 2)
        add(m.sumR, to: 3)
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
    func clear() { for i in 0..<4 { cells[i].store(0, ordering: .relaxed) } }

    /// Takes a reading: peak and RMS since the previous one; `clock` is the engine's output frame count now.
    func update(clock: Int64) {
        let last = Int64(bitPattern: cells[8].exchange(UInt64(bitPattern: clock), ordering: .relaxed))
        let frames = Double(max(clock - last, 1))
        for channel in 0..<2 {
            let peak = UInt32(truncatingIfNeeded: cells[channel].exchange(0, ordering: .relaxed))
            let sum = Double(bitPattern: cells[2 + channel].exchange(0, ordering: .relaxed))
            cells[4 + channel].store(UInt64(peak), ordering: .relaxed)
            cells[6 + channel].store(UInt64(Float((sum / frames).squareRoot()).bitPattern), ordering: .relaxed)
        }
    }

    /// Peak power of `channel` (0 left, 1 right) at the last reading, in dB full scale, −160 for silence.
    func peakPower(channel: Int) -> Float { reading(4 + (channel == 0 ? 0 : 1)) }
    /// Average (RMS) power of `channel` at the last reading, in dB full scale, −160 for silence.
    func averagePower(channel: Int) -> Float { reading(6 + (channel == 0 ? 0 : 1)) }

    private func reading(_ cell: Int) -> Float {
        Self.decibels(Float(bitPattern: UInt32(truncatingIfNeeded: cells[cell].load(ordering: .relaxed))))
    }

    /// 20·log10(x), floored at −160 dB as AVAudioPlayer's meters are. Values above 0 dB are kept: they mean
    /// the signal is over full scale and will clip in a fixed-point file.
    static func decibels(_ amplitude: Float) -> Float {
        amplitude > 0 ? max(-160, 20 * log10(amplitude)) : -160
    }
}
