// Any one thread at a time: the render thread for a bus or the master, the caller's thread for a file. `add`
// never allocates or locks; `measurement` (histogram walks, logarithms) is for the control side.
import CRenderMath
import Foundation

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
    /// Frames per second of the signal.
    public let sampleRate: Double
    /// Channels per frame.
    public let channelCount: Int

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

    private static var binCount: Int { loudnessBinCount }
    private static var binsPerLU: Double { loudnessBinsPerLU }
    private static var floorLUFS: Double { loudnessFloor }
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

    /// A meter for `channelCount` channels (1…64) at `sampleRate` (1000…768000 Hz); a programming error otherwise.
    public init(sampleRate: Double, channelCount: Int) {
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
        momentaryCounts = .allocate(capacity: Self.binCount)
        momentaryCounts.initialize(repeating: 0, count: Self.binCount)
        momentaryEnergy = .allocate(capacity: Self.binCount)
        momentaryEnergy.initialize(repeating: 0, count: Self.binCount)
        shortCounts = .allocate(capacity: Self.binCount)
        shortCounts.initialize(repeating: 0, count: Self.binCount)
        shortEnergy = .allocate(capacity: Self.binCount)
        shortEnergy.initialize(repeating: 0, count: Self.binCount)
        peaks = TruePeakInterpolator(sampleRate: sampleRate, channelCount: channelCount)
    }

    deinit {
        weights.deallocate()
        state.deallocate()
        ring.deallocate()
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
    public func reset() {
        state.update(repeating: 0, count: 4 * channelCount)
        ring.update(repeating: 0, count: 30)
        momentaryCounts.update(repeating: 0, count: Self.binCount)
        momentaryEnergy.update(repeating: 0, count: Self.binCount)
        shortCounts.update(repeating: 0, count: Self.binCount)
        shortEnergy.update(repeating: 0, count: Self.binCount)
        subBlockFill = 0
        subBlockSum = 0
        subBlocks = 0
        momentaryMaxEnergy = -1
        shortTermMaxEnergy = -1
        lastMomentary = -1
        lastShortTerm = -1
        truePeakValue = 0
        samplePeakValue = 0
        peaks.reset()
    }

    /// Measures `frames` interleaved frames (`channelCount` samples each) at `samples`. Render-thread safe.
    @_noLocks
    public func add(interleaved samples: UnsafePointer<Float>, frames: Int) {
        let channels = channelCount
        for i in 0..<frames {
            let frame = samples + i * channels
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
            subBlockSum += sum
            subBlockFill += 1
            if subBlockFill == subBlockFrames { closeSubBlock() }
        }
    }

    /// Measures `frames` interleaved frames of `buffer` (`channelCount` samples each). Render-thread safe.
    @_noLocks
    public func add(_ buffer: UnsafeBufferPointer<Float>) {
        guard let base = buffer.baseAddress else { return }
        add(interleaved: base, frames: buffer.count / channelCount)
    }

    /// Ends a 100 ms sub-block: the momentary block (the last 4) and short-term block (the last 30) ending here
    /// go into their histograms once the window is full.
    @_noLocks
    private func closeSubBlock() {
        ring[subBlocks % 30] = subBlockSum / Double(subBlockFrames)
        subBlocks += 1
        subBlockSum = 0
        subBlockFill = 0
        if subBlocks >= 4 {
            var e = 0.0
            for j in 1...4 { e += ring[(subBlocks - j) % 30] }
            e /= 4
            lastMomentary = e
            if e > momentaryMaxEnergy { momentaryMaxEnergy = e }
            recordLoudnessBlock(e, counts: momentaryCounts, energy: momentaryEnergy)
        }
        if subBlocks >= 30 {
            var e = 0.0
            for j in 0..<30 { e += ring[j] }
            e /= 30
            lastShortTerm = e
            if e > shortTermMaxEnergy { shortTermMaxEnergy = e }
            recordLoudnessBlock(e, counts: shortCounts, energy: shortEnergy)
        }
    }

    /// The figures so far. Reads the histograms: call it on the feeding thread, or once feeding has stopped.
    public var measurement: LoudnessMeasurement {
        func lufs(_ e: Double) -> Double? { e > 0 ? blockLoudness(e) : nil }
        func decibels(_ peak: Double) -> Double? { peak > 0 ? 20 * log10(peak) : nil }
        return LoudnessMeasurement(
            integrated: Self.gatedMean(counts: momentaryCounts, energy: momentaryEnergy, relativeGate: -10).map { blockLoudness($0) },
            loudnessRange: loudnessRange(),
            momentaryMax: lufs(momentaryMaxEnergy), shortTermMax: lufs(shortTermMaxEnergy),
            momentary: lufs(lastMomentary), shortTerm: lufs(lastShortTerm),
            truePeak: decibels(truePeakValue), samplePeak: decibels(samplePeakValue))
    }

    /// The first bin at or above the relative gate `relativeGate` LU below the mean of the blocks above the
    /// absolute gate; nil when no block passed it.
    private static func relativeGateBin(counts: UnsafeMutablePointer<Int>, energy: UnsafeMutablePointer<Double>,
                                        relativeGate: Double) -> Int? {
        var n = 0, sum = 0.0
        for b in 0..<binCount {
            n += counts[b]
            sum += energy[b]
        }
        guard n > 0 else { return nil }
        let gate = blockLoudness(sum / Double(n)) + relativeGate
        return max(0, min(binCount - 1, Int(((gate - floorLUFS) * binsPerLU).rounded(.up))))
    }

    /// The mean square of the blocks above both gates, nil when none passed.
    private static func gatedMean(counts: UnsafeMutablePointer<Int>, energy: UnsafeMutablePointer<Double>,
                                  relativeGate: Double) -> Double? {
        guard let first = relativeGateBin(counts: counts, energy: energy, relativeGate: relativeGate) else { return nil }
        var n = 0, sum = 0.0
        for b in first..<binCount {
            n += counts[b]
            sum += energy[b]
        }
        return n > 0 ? sum / Double(n) : nil
    }

    /// Tech 3342's loudness range: the 95th minus the 10th percentile of the gated short-term loudness.
    private func loudnessRange() -> Double? {
        guard let first = Self.relativeGateBin(counts: shortCounts, energy: shortEnergy, relativeGate: -20) else {
            return nil
        }
        var n = 0
        for b in first..<Self.binCount { n += shortCounts[b] }
        guard n > 0 else { return nil }
        // The value of rank r (0-based) among the sorted gated blocks: the mean loudness of the bin holding it.
        func value(rank: Int) -> Double {
            var seen = 0
            for b in first..<Self.binCount where shortCounts[b] > 0 {
                seen += shortCounts[b]
                if seen > rank { return blockLoudness(shortEnergy[b] / Double(shortCounts[b])) }
            }
            return 0
        }
        let low = value(rank: Int((Double(n - 1) * 0.10).rounded()))
        let high = value(rank: Int((Double(n - 1) * 0.95).rounded()))
        return high - low
    }
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
