import Foundation
import Synchronization

/// Peak and mean square of a stereo signal over one block, gathered on the render side.
struct MeterAccumulator {
    var peakL: Float = 0
    var peakR: Float = 0
    var sumL: Float = 0
    var sumR: Float = 0
    var frames = 0

    @_noLocks
    init() {}

    @inline(__always)
    @_noLocks
    mutating func add(_ l: Float, _ r: Float) {
        peakL = max(peakL, abs(l))
        peakR = max(peakR, abs(r))
        sumL += l * l
        sumR += r * r
        frames += 1
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

/// Where the render side leaves a block's meter reading for the control side: four float bit patterns,
/// written with relaxed atomics (a reader may see channels from neighbouring blocks, which is harmless).
/// The render side stores the mean square; the square root and logarithm are left to the reader.
struct MeterReadout: @unchecked Sendable {
    /// peakL, peakR, meanSquareL, meanSquareR
    let cells: UnsafeMutablePointer<Atomic<UInt32>>

    init() {
        cells = .allocate(capacity: 4)
        for i in 0..<4 { (cells + i).initialize(to: Atomic(0)) }
    }

    func deallocate() {
        cells.deinitialize(count: 4)
        cells.deallocate()
    }

    /// Publishes a block; `blockFrames` counts the whole block, so a voice that sounded for part of it
    /// averages its energy over the block like the master does.
    @inline(__always)
    @_noLocks
    func publish(_ m: MeterAccumulator, blockFrames: Int) {
        let n = Float(max(blockFrames, 1))
        cells[0].store(m.peakL.bitPattern, ordering: .relaxed)
        cells[1].store(m.peakR.bitPattern, ordering: .relaxed)
        cells[2].store((m.sumL / n).bitPattern, ordering: .relaxed)
        cells[3].store((m.sumR / n).bitPattern, ordering: .relaxed)
    }

    @_noLocks
    func clear() { for i in 0..<4 { cells[i].store(0, ordering: .relaxed) } }

    /// Peak power of `channel` (0 left, 1 right) in dB full scale, −160 for silence.
    func peakPower(channel: Int) -> Float { Self.decibels(Float(bitPattern: cells[channel == 0 ? 0 : 1].load(ordering: .relaxed))) }
    /// Average (RMS) power of `channel` in dB full scale, −160 for silence.
    func averagePower(channel: Int) -> Float {
        Self.decibels(Float(bitPattern: cells[channel == 0 ? 2 : 3].load(ordering: .relaxed)).squareRoot())
    }

    /// 20·log10(x), floored at −160 dB as AVAudioPlayer's meters are. Values above 0 dB are kept: they mean
    /// the signal is over full scale and will clip in a fixed-point file.
    static func decibels(_ amplitude: Float) -> Float {
        amplitude > 0 ? max(-160, 20 * log10(amplitude)) : -160
    }
}
