// Any one thread at a time: the render thread for a bus or the master, the caller's thread for a file. `add`
// never allocates or locks; `measurement` (histogram walks, logarithms) is for the control side.
import CRenderMath
import Foundation
import Synchronization

/// The figures of EBU R128 (ITU-R BS.1770-4, EBU Tech 3341 and 3342) for one signal. A loudness is nil when no
/// block passed its gates (silence, or a signal shorter than the window).
public struct LoudnessMeasurement: Sendable, Equatable, Codable {
    /// Integrated (programme) loudness in LUFS: 400 ms blocks every 100 ms, gated at −70 LUFS and at 10 LU
    /// below the loudness of the blocks above that.
    public var integrated: Double?
    /// Loudness range in LU (Tech 3342): the spread between the 10th and 95th percentiles of the 3 s short-term
    /// loudness, gated at −70 LUFS and 20 LU below their mean.
    public var loudnessRange: Double?
    /// The highest momentary loudness (400 ms window) in LUFS.
    public var momentaryMax: Double?
    /// The highest short-term loudness (3 s window) in LUFS.
    public var shortTermMax: Double?
    /// The last momentary loudness in LUFS (nil before 400 ms or when it is −∞).
    public var momentary: Double?
    /// The last short-term loudness in LUFS (nil before 3 s or when it is −∞).
    public var shortTerm: Double?
    /// True peak in dBTP: the largest magnitude of the signal upsampled 4× (2× from 192 kHz) per BS.1770-4
    /// Annex 2; nil for silence.
    public var truePeak: Double?
    /// Sample peak in dBFS; nil for silence.
    public var samplePeak: Double?

    /// A measurement from its figures (all nil by default).
    public init(integrated: Double? = nil, loudnessRange: Double? = nil, momentaryMax: Double? = nil,
                shortTermMax: Double? = nil, momentary: Double? = nil, shortTerm: Double? = nil,
                truePeak: Double? = nil, samplePeak: Double? = nil) {
        self.integrated = integrated
        self.loudnessRange = loudnessRange
        self.momentaryMax = momentaryMax
        self.shortTermMax = shortTermMax
        self.momentary = momentary
        self.shortTerm = shortTerm
        self.truePeak = truePeak
        self.samplePeak = samplePeak
    }
}

/// The render-side state of a loudness meter (`LoudnessMeter` owns one; the mixer holds one for the master): a
/// value with pointers, allocated in `init` and freed by `deallocate()`, so a `@_noLocks` caller feeds it without
/// retaining an object. One thread feeds it.
package struct LoudnessMeterCore {
    package let sampleRate: Double
    package let channelCount: Int
    /// One frame gathered from planes (`add(planes:count:)`).
    private let frameScratch: UnsafeMutablePointer<Float>
    /// Figures published for other threads after every 100 ms sub-block: integrated, range, momentary max,
    /// short-term max, momentary, short-term, true peak, sample peak (Double bits, NaN for none), then a reset
    /// request (non-zero: start over before the next frame).
    package let published: UnsafeMutablePointer<Atomic<UInt64>>

    /// Channel weights G_i (BS.1770-4 Table 3) for the WAVE order of 1, 2, 6 (5.1) and 8 (7.1) channels.
    private let weights: UnsafeMutablePointer<Double>
    /// Per channel: the two biquads' two state variables each (transposed direct form II).
    private let state: UnsafeMutablePointer<Double>
    // Shelf (stage 1) and high-pass (stage 2) coefficients, normalised so a0 = 1.
    private let s0: Double, s1: Double, s2: Double, sa1: Double, sa2: Double
    private let h0: Double, h1: Double, h2: Double, ha1: Double, ha2: Double

    /// Frames in a 100 ms sub-block (the sample rate / 10, rounded).
    private let subBlockFrames: Int
    private var subBlockFill = 0
    private var subBlockSum = 0.0
    /// The last 30 sub-blocks' mean squares (a ring) and how many have completed.
    private let ring: UnsafeMutablePointer<Double>
    private var subBlocks = 0

    /// The last 300 ticks of 10 ms (tick k ends on frame round(k · rate / 100)): summed weighted squares and
    /// frames. Momentary and short-term loudness are taken on every tick (100 Hz), so their maxima do not depend on
    /// where a burst falls against the 100 ms gating grid (a 400 ms burst reads at most 0.06 dB low, not 0.6).
    private let tickSums: UnsafeMutablePointer<Double>
    private let tickFrames: UnsafeMutablePointer<Int>
    private var ticks = 0
    private var tickSum = 0.0
    private var tickFill = 0
    private var tickLength: Int

    /// Histograms of momentary blocks (integrated loudness) and short-term blocks (loudness range): count and
    /// summed mean square per 0.01 LU bin.
    private let momentaryCounts: UnsafeMutablePointer<Int>
    private let momentaryEnergy: UnsafeMutablePointer<Double>
    private let shortCounts: UnsafeMutablePointer<Int>
    private let shortEnergy: UnsafeMutablePointer<Double>

    private var momentaryMaxEnergy = -1.0
    private var shortTermMaxEnergy = -1.0
    private var lastMomentary = -1.0
    private var lastShortTerm = -1.0
    private var truePeakValue = 0.0
    private var samplePeakValue = 0.0
    private var peaks: TruePeakInterpolator

    package init(sampleRate: Double, channelCount: Int) {
        precondition(sampleRate.isFinite && (1000...768_000).contains(sampleRate), "sample rate out of range")
        precondition((1...64).contains(channelCount), "channel count out of range")
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        weights = .allocate(capacity: channelCount)
        for c in 0..<channelCount { weights[c] = Self.weight(channel: c, of: channelCount) }
        state = .allocate(capacity: 4 * channelCount)
        state.initialize(repeating: 0, count: 4 * channelCount)

        // High shelf: f0 1681.97 Hz, gain 4.0 dB, Q 0.7072; high-pass: f0 38.14 Hz, Q 0.5003 (the analog
        // prototypes whose bilinear transforms at 48 kHz are BS.1770-4's tabled coefficients).
        let k = tan(Double.pi * 1681.974450955533 / sampleRate), q = 0.7071752369554196
        let vh = pow(10, 3.999843853973347 / 20), vb = pow(vh, 0.4996667741545416)
        let a0 = 1 + k / q + k * k
        s0 = (vh + vb * k / q + k * k) / a0
        s1 = 2 * (k * k - vh) / a0
        s2 = (vh - vb * k / q + k * k) / a0
        sa1 = 2 * (k * k - 1) / a0
        sa2 = (1 - k / q + k * k) / a0
        let kh = tan(Double.pi * 38.13547087602444 / sampleRate), qh = 0.5003270373238773
        let ah0 = 1 + kh / qh + kh * kh
        // BS.1770-4 tables the high-pass numerator as 1, −2, 1 (not divided by a0); its −0.691 offset assumes it.
        h0 = 1
        h1 = -2
        h2 = 1
        ha1 = 2 * (kh * kh - 1) / ah0
        ha2 = (1 - kh / qh + kh * kh) / ah0

        subBlockFrames = max(1, Int((sampleRate / 10).rounded()))
        ring = .allocate(capacity: 30)
        ring.initialize(repeating: 0, count: 30)
        tickSums = .allocate(capacity: 300)
        tickSums.initialize(repeating: 0, count: 300)
        tickFrames = .allocate(capacity: 300)
        tickFrames.initialize(repeating: 0, count: 300)
        tickLength = max(1, Int(sampleRate / 100 + 0.5))
        momentaryCounts = .allocate(capacity: loudnessBinCount)
        momentaryCounts.initialize(repeating: 0, count: loudnessBinCount)
        momentaryEnergy = .allocate(capacity: loudnessBinCount)
        momentaryEnergy.initialize(repeating: 0, count: loudnessBinCount)
        shortCounts = .allocate(capacity: loudnessBinCount)
        shortCounts.initialize(repeating: 0, count: loudnessBinCount)
        shortEnergy = .allocate(capacity: loudnessBinCount)
        shortEnergy.initialize(repeating: 0, count: loudnessBinCount)
        peaks = TruePeakInterpolator(sampleRate: sampleRate, channelCount: channelCount)
        frameScratch = .allocate(capacity: channelCount)
        frameScratch.initialize(repeating: 0, count: channelCount)
        published = .allocate(capacity: 9)
        for k in 0..<8 { (published + k).initialize(to: Atomic(Double.nan.bitPattern)) }
        (published + 8).initialize(to: Atomic(0))
    }

    package func deallocate() {
        frameScratch.deallocate()
        published.deinitialize(count: 9)
        published.deallocate()
        weights.deallocate()
        state.deallocate()
        ring.deallocate()
        tickSums.deallocate()
        tickFrames.deallocate()
        momentaryCounts.deallocate()
        momentaryEnergy.deallocate()
        shortCounts.deallocate()
        shortEnergy.deallocate()
        peaks.deallocate()
    }

    /// BS.1770-4's channel weight: 1 for front channels, 1.41 (+1.5 dB) for surrounds, 0 for the LFE of 5.1 and 7.1.
    static func weight(channel: Int, of count: Int) -> Double {
        switch count {
        case 6: return channel == 3 ? 0 : channel >= 4 ? 1.41 : 1
        case 8: return channel == 3 ? 0 : channel >= 4 ? 1.41 : 1
        default: return 1
        }
    }

    /// The filter coefficients (shelf b0 b1 b2 a1 a2, then high-pass b0 b1 b2 a1 a2), for tests.
    package var coefficients: [Double] { [s0, s1, s2, sa1, sa2, h0, h1, h2, ha1, ha2] }

    /// Starts over: an empty history, as a new meter.
    @_noLocks
    package mutating func reset() {
        for k in 0..<(4 * channelCount) { state[k] = 0 }
        for k in 0..<(30) { ring[k] = 0 }
        for k in 0..<(loudnessBinCount) { momentaryCounts[k] = 0 }
        for k in 0..<(loudnessBinCount) { momentaryEnergy[k] = 0 }
        for k in 0..<(loudnessBinCount) { shortCounts[k] = 0 }
        for k in 0..<(loudnessBinCount) { shortEnergy[k] = 0 }
        subBlockFill = 0
        subBlockSum = 0
        subBlocks = 0
        for k in 0..<300 { tickSums[k] = 0 }
        for k in 0..<300 { tickFrames[k] = 0 }
        ticks = 0
        tickSum = 0
        tickFill = 0
        tickLength = Self.tickEnd(1, sampleRate)
        momentaryMaxEnergy = -1
        shortTermMaxEnergy = -1
        lastMomentary = -1
        lastShortTerm = -1
        truePeakValue = 0
        samplePeakValue = 0
        peaks.reset()
        for k in 0..<8 { published[k].store(Double.nan.bitPattern, ordering: .relaxed) }
    }

    /// Measures `frames` interleaved frames (`channelCount` samples each) at `samples`.
    @_noLocks
    package mutating func add(interleaved samples: UnsafePointer<Float>, frames: Int) {
        if published[8].load(ordering: .relaxed) != 0 {
            published[8].store(0, ordering: .relaxed)
            reset()
        }
        for i in 0..<frames { addFrame(samples + i * channelCount) }
    }

    /// Measures `count` frames of `planes` (the mixer's planar blocks: the master after its chain).
    @_noLocks
    package mutating func add(planes: ChannelPlanes, count: Int) {
        if published[8].load(ordering: .relaxed) != 0 {
            published[8].store(0, ordering: .relaxed)
            reset()
        }
        let channels = channelCount < planes.count ? channelCount : planes.count
        for i in 0..<count {
            for c in 0..<channels { frameScratch[c] = planes[c][i] }
            addFrame(frameScratch)
        }
    }

    @inline(__always)
    @_noLocks
    private mutating func addFrame(_ frame: UnsafePointer<Float>) {
        let channels = channelCount
        var sum = 0.0
        for c in 0..<channels {
            let x = Double(frame[c])
            let magnitude = x < 0 ? -x : x
            if magnitude > samplePeakValue { samplePeakValue = magnitude }
            let z = state + 4 * c
            // Stage 1 (shelf) then stage 2 (high-pass), transposed direct form II.
            let y1 = s0 * x + z[0]
            z[0] = s1 * x - sa1 * y1 + z[1]
            z[1] = s2 * x - sa2 * y1
            let y2 = h0 * y1 + z[2]
            z[2] = h1 * y1 - ha1 * y2 + z[3]
            z[3] = h2 * y1 - ha2 * y2
            sum += weights[c] * y2 * y2
        }
        let tp = peaks.add(frame: frame, stride: 1)
        if tp > truePeakValue { truePeakValue = tp }
        tickSum += sum
        tickFill += 1
        if tickFill == tickLength { closeTick() }
        subBlockSum += sum
        subBlockFill += 1
        if subBlockFill == subBlockFrames {
            closeSubBlock()
            publish()
        }
    }

    /// The frame tick k ends on: round(k · rate / 100) (k ≥ 0: truncating x + ½ rounds).
    @_noLocks
    private static func tickEnd(_ k: Int, _ sampleRate: Double) -> Int {
        Int(Double(k) * sampleRate / 100 + 0.5)
    }

    /// Ends a 10 ms tick: the momentary (last 40 ticks) and short-term (last 300) loudness ending here, and their
    /// maxima, once the window is full.
    @_noLocks
    private mutating func closeTick() {
        tickSums[ticks % 300] = tickSum
        tickFrames[ticks % 300] = tickFill
        ticks += 1
        tickSum = 0
        tickFill = 0
        tickLength = max(1, Self.tickEnd(ticks + 1, sampleRate) - Self.tickEnd(ticks, sampleRate))
        if ticks >= 40 {
            var e = 0.0, n = 0
            for j in 1...40 {
                e += tickSums[(ticks - j) % 300]
                n += tickFrames[(ticks - j) % 300]
            }
            lastMomentary = e / Double(n)
            if lastMomentary > momentaryMaxEnergy { momentaryMaxEnergy = lastMomentary }
        }
        if ticks >= 300 {
            var e = 0.0, n = 0
            for j in 0..<300 {
                e += tickSums[j]
                n += tickFrames[j]
            }
            lastShortTerm = e / Double(n)
            if lastShortTerm > shortTermMaxEnergy { shortTermMaxEnergy = lastShortTerm }
        }
    }

    /// Ends a 100 ms sub-block: the momentary block (the last 4) and short-term block (the last 30) ending here
    /// go into the histograms of the integrated loudness and the loudness range once the window is full.
    @_noLocks
    private mutating func closeSubBlock() {
        ring[subBlocks % 30] = subBlockSum / Double(subBlockFrames)
        subBlocks += 1
        subBlockSum = 0
        subBlockFill = 0
        if subBlocks >= 4 {
            var e = 0.0
            for j in 1...4 { e += ring[(subBlocks - j) % 30] }
            recordLoudnessBlock(e / 4, counts: momentaryCounts, energy: momentaryEnergy)
        }
        if subBlocks >= 30 {
            var e = 0.0
            for j in 0..<30 { e += ring[j] }
            recordLoudnessBlock(e / 30, counts: shortCounts, energy: shortEnergy)
        }
    }

    /// Stores the figures so far in `published` for other threads (after each sub-block).
    @_noLocks
    private func publish() {
        let integrated = gatedLoudness(counts: momentaryCounts, energy: momentaryEnergy, relativeGate: -10)
        let range = loudnessRangeOf(counts: shortCounts, energy: shortEnergy)
        let values = [integrated, range, lufsOrNaN(momentaryMaxEnergy), lufsOrNaN(shortTermMaxEnergy),
                      lufsOrNaN(lastMomentary), lufsOrNaN(lastShortTerm), decibelsOrNaN(truePeakValue),
                      decibelsOrNaN(samplePeakValue)] as InlineArray<8, Double>
        for k in 0..<8 { published[k].store(values[k].bitPattern, ordering: .relaxed) }
    }

    /// The figures so far. Reads the histograms: call it on the feeding thread, or once feeding has stopped.
    package var measurement: LoudnessMeasurement {
        func some(_ v: Double) -> Double? { v.isNaN ? nil : v }
        return LoudnessMeasurement(
            integrated: some(gatedLoudness(counts: momentaryCounts, energy: momentaryEnergy, relativeGate: -10)),
            loudnessRange: some(loudnessRangeOf(counts: shortCounts, energy: shortEnergy)),
            momentaryMax: some(lufsOrNaN(momentaryMaxEnergy)), shortTermMax: some(lufsOrNaN(shortTermMaxEnergy)),
            momentary: some(lufsOrNaN(lastMomentary)), shortTerm: some(lufsOrNaN(lastShortTerm)),
            truePeak: some(decibelsOrNaN(truePeakValue)), samplePeak: some(decibelsOrNaN(samplePeakValue)))
    }

    /// The momentary and short-term loudness (LUFS) of the windows ending on the last complete 10 ms tick, nil
    /// before the window is full or for silence: cheap, unlike `measurement`.
    package var current: (momentary: Double?, shortTerm: Double?) {
        let m = lufsOrNaN(lastMomentary), s = lufsOrNaN(lastShortTerm)
        return (m.isNaN ? nil : m, s.isNaN ? nil : s)
    }

    /// The other threads' view of the published figures.
    package var readout: LoudnessReadout { LoudnessReadout(cells: published) }
}

// Render-side helpers of `LoudnessMeter` (free functions: a class's static would need its metadata under @_noLocks).
private let loudnessBinCount = 10_000
private let loudnessBinsPerLU = 100.0
private let loudnessFloor = -70.0

/// Adds a block's mean square to its 0.01 LU bin, if it is above the absolute gate (−70 LUFS).
@_noLocks
private func recordLoudnessBlock(_ energy: Double, counts: UnsafeMutablePointer<Int>, energy sums: UnsafeMutablePointer<Double>) {
    guard energy > 0 else { return }
    let position = (blockLoudness(energy) - loudnessFloor) * loudnessBinsPerLU
    guard position >= 0 else { return }
    let bin = position >= Double(loudnessBinCount - 1) ? loudnessBinCount - 1 : Int(position)
    counts[bin] += 1
    sums[bin] += energy
}

/// BS.1770-4's loudness of a (weighted) mean square: −0.691 + 10 log10(z).
@_noLocks
private func blockLoudness(_ energy: Double) -> Double { -0.691 + 10 * _unsafePerformance { ensemble_log10(energy) } }

/// The loudness of a mean square, NaN for none (0 or the −1 "not yet").
@_noLocks
private func lufsOrNaN(_ energy: Double) -> Double { energy > 0 ? blockLoudness(energy) : .nan }

/// A peak in dB, NaN for silence.
@_noLocks
private func decibelsOrNaN(_ peak: Double) -> Double { peak > 0 ? 20 * _unsafePerformance { ensemble_log10(peak) } : .nan }

/// The first bin at or above the relative gate `relativeGate` LU below the mean of the blocks above the absolute
/// gate; −1 when no block passed it.
@_noLocks
private func relativeGateBin(counts: UnsafeMutablePointer<Int>, energy: UnsafeMutablePointer<Double>,
                             relativeGate: Double) -> Int {
    var n = 0, sum = 0.0
    for b in 0..<loudnessBinCount {
        n += counts[b]
        sum += energy[b]
    }
    if n == 0 { return -1 }
    let position = (blockLoudness(sum / Double(n)) + relativeGate - loudnessFloor) * loudnessBinsPerLU
    if position <= 0 { return 0 }
    if position >= Double(loudnessBinCount - 1) { return loudnessBinCount - 1 }
    let whole = Int(position)
    return Double(whole) == position ? whole : whole + 1
}

/// The loudness of the blocks above both gates, NaN when none passed.
@_noLocks
private func gatedLoudness(counts: UnsafeMutablePointer<Int>, energy: UnsafeMutablePointer<Double>,
                           relativeGate: Double) -> Double {
    let first = relativeGateBin(counts: counts, energy: energy, relativeGate: relativeGate)
    if first < 0 { return .nan }
    var n = 0, sum = 0.0
    for b in first..<loudnessBinCount {
        n += counts[b]
        sum += energy[b]
    }
    return n > 0 ? blockLoudness(sum / Double(n)) : .nan
}

/// Tech 3342's loudness range: the 95th minus the 10th percentile of the gated short-term loudness; NaN for none.
@_noLocks
private func loudnessRangeOf(counts: UnsafeMutablePointer<Int>, energy: UnsafeMutablePointer<Double>) -> Double {
    let first = relativeGateBin(counts: counts, energy: energy, relativeGate: -20)
    if first < 0 { return .nan }
    var n = 0
    for b in first..<loudnessBinCount { n += counts[b] }
    if n == 0 { return .nan }
    let low = rankedLoudness(counts: counts, energy: energy, from: first, rank: Int(Double(n - 1) * 0.10 + 0.5))
    let high = rankedLoudness(counts: counts, energy: energy, from: first, rank: Int(Double(n - 1) * 0.95 + 0.5))
    return high - low
}

/// The loudness of rank `rank` (0-based) among the sorted blocks from bin `first`: the mean loudness of its bin.
@_noLocks
private func rankedLoudness(counts: UnsafeMutablePointer<Int>, energy: UnsafeMutablePointer<Double>, from first: Int,
                            rank: Int) -> Double {
    var seen = 0
    for b in first..<loudnessBinCount where counts[b] > 0 {
        seen += counts[b]
        if seen > rank { return blockLoudness(energy[b] / Double(counts[b])) }
    }
    return 0
}

/// An EBU R128 loudness meter (ITU-R BS.1770-4): K-weighting, momentary, short-term, integrated loudness,
/// loudness range and true peak of a signal fed in blocks of interleaved frames.
///
/// The method: each channel is K-weighted (a high shelf of +4 dB near 1.7 kHz and a 38 Hz high-pass, two
/// biquads whose coefficients are derived for the meter's rate by the bilinear transform), squared and summed
/// into 100 ms sub-blocks, weighted 1 for left, right and centre, 1.41 for surrounds and 0 for LFE. Momentary
/// loudness is the mean of the last 4 sub-blocks (400 ms, 75 % overlap), short-term of the last 30 (3 s).
/// Every momentary block goes into a histogram of 0.01 LU bins from −70 to +30 LUFS that keeps each bin's
/// count and energy, so the integrated loudness (absolute gate −70 LUFS, relative gate −10 LU) and the loudness
/// range (short-term values, relative gate −20 LU, 10th to 95th percentile) are exact sums over a bounded store,
/// whatever the length. True peak comes from 4× oversampling (2× from 192 kHz) through a Kaiser-windowed sinc interpolator.
///
/// All storage is allocated in `init`: ``add(interleaved:frames:)`` neither allocates nor locks, so a render
/// thread can feed it. It is not thread-safe: one thread feeds it, and ``measurement`` is read on that thread
/// (or once feeding has stopped).
public final class LoudnessMeter {
    private var core: LoudnessMeterCore

    /// Frames per second of the signal.
    public var sampleRate: Double { core.sampleRate }
    /// Channels per frame.
    public var channelCount: Int { core.channelCount }

    /// A meter for `channelCount` channels (1…64) at `sampleRate` (1000…768000 Hz); a programming error otherwise.
    public init(sampleRate: Double, channelCount: Int) {
        core = LoudnessMeterCore(sampleRate: sampleRate, channelCount: channelCount)
    }

    deinit { core.deallocate() }

    /// The filter coefficients (shelf b0 b1 b2 a1 a2, then high-pass b0 b1 b2 a1 a2), for tests.
    package var coefficients: [Double] { core.coefficients }

    /// Measures `frames` interleaved frames (`channelCount` samples each) at `samples`. Render-thread safe.
    @_noLocks
    public func add(interleaved samples: UnsafePointer<Float>, frames: Int) {
        core.add(interleaved: samples, frames: frames)
    }

    /// Measures the interleaved frames of `buffer` (`channelCount` samples each). Render-thread safe.
    @_noLocks
    public func add(_ buffer: UnsafeBufferPointer<Float>) {
        guard let base = buffer.baseAddress else { return }
        core.add(interleaved: base, frames: buffer.count / core.channelCount)
    }

    /// Starts over: an empty history, as a new meter.
    public func reset() { core.reset() }

    /// The figures so far: call it on the feeding thread, or once feeding has stopped.
    public var measurement: LoudnessMeasurement { core.measurement }

    /// The momentary loudness (400 ms) in LUFS as of the last complete 10 ms of signal: nil before 400 ms or for
    /// silence. Cheap (no histogram walk, unlike `measurement`): a display can read it after every `add`.
    public var momentary: Double? { core.current.momentary }

    /// The short-term loudness (3 s) in LUFS as of the last complete 10 ms of signal: nil before 3 s or for silence.
    public var shortTerm: Double? { core.current.shortTerm }
}

/// What a `LoudnessMeterCore` publishes, read from any thread: the figures as of the feeder's last complete 100 ms
/// (each figure read atomically; two may come from consecutive sub-blocks), and a reset request.
package struct LoudnessReadout: @unchecked Sendable {
    let cells: UnsafeMutablePointer<Atomic<UInt64>>

    /// The figures last published.
    package var measurement: LoudnessMeasurement {
        func value(_ k: Int) -> Double? {
            let v = Double(bitPattern: cells[k].load(ordering: .relaxed))
            return v.isNaN ? nil : v
        }
        return LoudnessMeasurement(integrated: value(0), loudnessRange: value(1), momentaryMax: value(2),
                                   shortTermMax: value(3), momentary: value(4), shortTerm: value(5),
                                   truePeak: value(6), samplePeak: value(7))
    }

    /// Asks the feeder to start over before its next frame.
    package func requestReset() { cells[8].store(1, ordering: .relaxed) }
}
