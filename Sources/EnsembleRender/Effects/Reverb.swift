// Render thread (`process`); `init`/`deallocate` on the control thread.

import Foundation
import EnsembleFormats

/// The algorithmic reverb of `EffectSpec.reverb`: an eight-line feedback delay network with absorbent filters
/// (after Jot and Chaigne) and input diffusers (after Dattorro), taking EFX's reverb parameters (`ReverbSettings`).
/// Per frame everything is Float, with no division and no libm call. Once its tail has died it sleeps (output =
/// dry, state exactly zero), so a finished tail costs what silence costs. Invariant: the output bits do not depend
/// on block sizes (the modulation follows the absolute frame count; `process` chunks keep a per-frame loop's order).
/// Design: the article "The reverb's design" (Ensemble.docc/ReverbDesign.md).
package struct Reverb: AudioEffect {
    /// Eight network lines, `lineStride` floats apart, each a ring buffer indexed with `lineMask`. (Unlike
    /// `input` they are not written twice: that doubles their cache footprint and costs more than the masks.)
    package var lines: UnsafeMutablePointer<Float>
    package var lineStride: Int
    var lineMask: Int
    /// The input line (mono, after the HF shelf): a ring of `inputMask + 1` frames written twice, at p and at
    /// p + size, so that a tap d frames back is `input[p + size − d]` with no wrap to compute.
    package var input: UnsafeMutablePointer<Float>
    package var inputMask: Int
    /// The four diffuser all-passes' buffers (one ring each, `diffuserMask`, `diffuserStride` apart) and lengths.
    package var diffusers: UnsafeMutablePointer<Float>
    package var diffuserStride: Int
    var diffuserMask: Int
    var diffuserLengths: (Int, Int, Int, Int)
    var diffuserGains: (Float, Float, Float, Float)
    /// Early-reflection taps (size − frames back, see `input`) and gains, left (8) then right (8).
    var tapOffsets: UnsafeMutablePointer<Int>
    var tapGains: UnsafeMutablePointer<Float>
    /// Late input tap (size − frames back, see `input`).
    var lateOffset: Int
    /// Line lengths' centres and modulation: delay = centre + depth · (triangle − ½), period in 32-frame ticks.
    var lineCentres: UnsafeMutablePointer<Float>
    var modulationPeriods: UnsafeMutablePointer<Int>
    var modulationDepth: Float
    /// Output taps inside the lines (frames back from the write position): left (8), right (8), then a second tap per
    /// line on each side, left (8) and right (8).
    var outputTaps: UnsafeMutablePointer<Int>
    /// The lines' readers' integer delays (frames back) for the current tick.
    var readOffsets: UnsafeMutablePointer<Int>
    /// Per-line lanes: the all-pass readers' coefficients η and previous outputs, the absorbent filters' two
    /// sections (the per-pass gain and the transform's 1/√8 folded into the first one's b's) and the output taps'
    /// gains. The render loop keeps them in locals for a block and stores them back after it.
    var eta = SIMD8<Float>(repeating: 0)
    package var previous = SIMD8<Float>(repeating: 0)
    package var first = BiquadLanes()
    package var second = BiquadLanes()
    var leftGains = SIMD8<Float>(repeating: 0)
    var rightGains = SIMD8<Float>(repeating: 0)
    var leftGains2 = SIMD8<Float>(repeating: 0)
    var rightGains2 = SIMD8<Float>(repeating: 0)
    /// Input gain into the lines (the energy normalisation).
    var feedGain: Float
    var dryGain: Float
    var reflectionsWet: Float
    var lateWet: Float
    /// The input shelf (`gainHF`), transposed direct form II, and its state.
    package var shelf: (b0: Float, b1: Float, b2: Float, a1: Float, a2: Float)
    package var shelfState: (Float, Float) = (0, 0)
    /// Jot's tone corrector on the network's input (a 2 kHz shelf of 1/√`decayHFRatio`) and its state.
    package var tone: (b0: Float, b1: Float, b2: Float, a1: Float, a2: Float)
    package var toneState: (Float, Float) = (0, 0)
    /// Frames since the unit was made (drives the modulation ticks); write positions.
    package var frame = 0
    var writeIndex = 0
    var inputIndex = 0
    var diffuserIndex = 0
    /// The network's input after the diffusers and the tone corrector (times the feed gain), a ring of `feedMask + 1`
    /// frames written at `feedIndex`; line i is fed what was written `feedOffsets[i]` frames ago, so that the lines
    /// are not fed one coherent signal (which the transform would gather into a few lines, a periodic tail).
    package var feedRing: UnsafeMutablePointer<Float>
    var feedMask: Int
    var feedIndex = 0
    var feedOffsets: (Int, Int, Int, Int, Int, Int, Int, Int)
    /// Consecutive quiet frames (whole quiet ticks), the count after which the unit sleeps, and whether it sleeps.
    var quietFrames = 0
    var sleepAfter: Int
    package var asleep = true
    /// Whether the current modulation tick has had a non-zero input or a state value at or above `quietLevel`.
    var tickLoud = false
    /// The smallest of `readOffsets` (for the current tick): a chunk no longer than this reads nothing it writes.
    var minReadOffset = 1
    /// Per-chunk scratch (see `ChunkScratch`), allocated in `init`.
    package var scratch: UnsafeMutablePointer<Float>

    /// Eight transposed-direct-form-II biquads side by side, one lane per line.
    package struct BiquadLanes {
        package var b0 = SIMD8<Float>(repeating: 0), b1 = SIMD8<Float>(repeating: 0), b2 = SIMD8<Float>(repeating: 0)
        package var a1 = SIMD8<Float>(repeating: 0), a2 = SIMD8<Float>(repeating: 0)
        package var s1 = SIMD8<Float>(repeating: 0), s2 = SIMD8<Float>(repeating: 0)

        /// Pass-through coefficients are set by `Reverb.init`; all zero here.
        package init() {}
    }

    /// Modulation is recomputed every 32 frames (of absolute time).
    static var tickShift: Int { @_noLocks get { 5 } }
    /// Below this, a value counts as silent for the sleep decision (−160 dB re full scale).
    static var quietLevel: Float { @_noLocks get { 1e-8 } }

    // Design tables, read by `init` only (control side).

    /// Line lengths in ms, whatever the density (58–111 ms, 0.66 s in all: a mode every 1.5 Hz, so the low end is
    /// dense; within a factor of two, so none is as long as two others; no two pairs equally far apart); in this
    /// order, short and long meet in the transform's butterflies. Each is rounded to a distinct prime number of frames.
    static let lineMilliseconds: [Double] = [58.2, 90.2, 64.3, 94.3, 69.1, 110.5, 72.5, 103.3]
    /// The lines of a network for the shortest decays (17–35 ms, scaled down further), where the long ones would
    /// have to shrink below half their length.
    static let shortLineMilliseconds: [Double] = [17.1, 19.7, 22.3, 24.6, 27.3, 29.9, 32.1, 34.9]
    /// How long before its line each line's input was the network's input, ms (scaled with the network).
    static let feedMilliseconds: [Double] = [0, 2.3, 4.6, 1.2, 6.9, 3.5, 5.7, 8.1]
    /// Diffuser all-pass lengths at density 1, ms (scaled by the room size), and those of the short network.
    static let diffuserMilliseconds: [Double] = [2.3, 3.7, 5.9, 8.9]
    static let shortDiffuserMilliseconds: [Double] = [1.53, 2.27, 3.31, 4.79]
    /// Early-reflection tap times at density 1, ms after the first reflection, and relative amplitudes.
    static let leftTaps: [(Double, Double)] = [(0, 1), (2.9, -0.84), (4.3, 0.77), (6.1, -0.7), (8.7, 0.6),
                                               (11.3, -0.52), (14.9, 0.45), (19.1, -0.37)]
    static let rightTaps: [(Double, Double)] = [(0.43, 1), (2.3, 0.86), (5.0, -0.76), (7.3, -0.66), (9.6, 0.58),
                                                (12.7, 0.5), (16.2, -0.43), (20.3, 0.35)]

    package init(settings s: ReverbSettings, sampleRate: Double) {
        let fs = sampleRate
        let size = 0.25 + 0.75 * s.density
        // The network's lines keep their lengths (the room size is in the reflections), unless the 500 Hz–1 kHz band
        // would lose more than 10 dB per pass through the longest line, or the fastest-decaying band (T60 =
        // decayTime × min(1, decayHFRatio)) more than 35 dB: a 0.3 s decay in 111 ms lines would be a few separate
        // echoes, not a decay. Below half their length, the short table takes over (scaled by the room size too, as
        // small as the fastest band's 10 dB per pass needs).
        let shortestDecay = s.decayTime * min(1, s.decayHFRatio)
        let longestLine = Self.lineMilliseconds.max()! / 1000
        let longFit = min(s.decayTime / (6 * longestLine), 3.5 * shortestDecay / (6 * longestLine))
        let table = longFit >= 0.5 ? Self.lineMilliseconds : Self.shortLineMilliseconds
        let networkSize = longFit >= 0.5 ? min(1, longFit)
            : min(size, shortestDecay / (6 * Self.shortLineMilliseconds.max()! / 1000))
        let diffuserSize = longFit >= 0.5 ? 1 : networkSize
        func frames(_ ms: Double) -> Int { Int((ms / 1000 * fs).rounded()) }

        // Network lines: lengths (distinct primes), modulation depth (≈ 0.15 ms each way), ring size.
        let depth = max(2, 0.3e-3 * fs)
        var centres: [Double] = []
        for ms in table {
            var d = max((ms * networkSize / 1000 * fs).rounded(), (depth + 4).rounded(.up))
            while centres.contains(d) || (longFit >= 0.5 && !Self.isPrime(Int(d))) { d += 1 }
            centres.append(d)
        }
        let longest = Int((centres.max()! + depth).rounded(.up)) + 4
        // A tick's worth of slack: a chunk's writes never land on a slot its output taps still read.
        lineMask = Self.powerOfTwo(atLeast: longest + Self.tickLength) - 1
        lineStride = lineMask + 1
        lines = .allocate(capacity: 8 * lineStride)
        lines.initialize(repeating: 0, count: 8 * lineStride)
        lineCentres = .allocate(capacity: 8)
        modulationPeriods = .allocate(capacity: 8)
        readOffsets = .allocate(capacity: 8)
        for i in 0..<8 {
            lineCentres[i] = Float(centres[i])
            // Periods 1.1…2.5 s, rounded to ticks.
            modulationPeriods[i] = max(2, Int((1.1 + 0.2 * Double(i)) * fs / 32))
            readOffsets[i] = Int(centres[i])
        }
        modulationDepth = Float(depth)
        outputTaps = .allocate(capacity: 32)

        // Diffusers: lengths scale with the room; the coefficient with `diffusion`, capped so that an all-pass's
        // own ring-out (60·M/(−20·log10 g) frames to −60 dB) stays under a fifth of the shortest decay time.
        var lengths: [Int] = []
        var gains: [Float] = []
        for (k, ms) in (longFit >= 0.5 ? Self.diffuserMilliseconds : Self.shortDiffuserMilliseconds).enumerated() {
            let m = max(1, Int((ms * diffuserSize / 1000 * fs).rounded()))
            lengths.append(m)
            let wanted = (k < 2 ? 0.75 : 0.625) * s.diffusion
            let cap = pow(10, -3 * Double(m) / (0.2 * shortestDecay * fs))
            gains.append(Float(min(wanted, cap)))
        }
        diffuserLengths = (lengths[0], lengths[1], lengths[2], lengths[3])
        diffuserGains = (gains[0], gains[1], gains[2], gains[3])
        diffuserMask = Self.powerOfTwo(atLeast: lengths.max()! + 1) - 1
        diffuserStride = diffuserMask + 1
        diffusers = .allocate(capacity: 4 * diffuserStride)
        diffusers.initialize(repeating: 0, count: 4 * diffuserStride)
        let diffuserDelay = lengths.reduce(0, +)

        // Input line taps.
        let first = frames(1000 * (s.preDelay + s.reflectionsDelay))
        let offsets = UnsafeMutablePointer<Int>.allocate(capacity: 16)
        var tapValues: [Float] = []
        for (k, taps) in [Self.leftTaps, Self.rightTaps].enumerated() {
            let norm = (taps.map { $0.1 * $0.1 }.reduce(0, +)).squareRoot()
            for (j, tap) in taps.enumerated() {
                offsets[8 * k + j] = first + frames(tap.0 * size)
                tapValues.append(Float(tap.1 / norm))
            }
        }
        // The late part leaves the network after the diffusers and the earliest output tap: start it that much
        // earlier (never before the pre-delay) so that it sounds `lateReverbDelay` after the first reflection.
        let tapFractions = longFit >= 0.5 ? (left: 0.27, right: 0.61) : (left: 0.41, right: 0.73)
        let lateWanted = first + frames(1000 * s.lateReverbDelay) - diffuserDelay
            - (longFit >= 0.5 ? max(1, Int(tapFractions.left * centres.min()!)) : Int(centres.min()! - depth / 2))
        lateOffset = max(frames(1000 * s.preDelay), lateWanted)
        let inputSpan = max(lateOffset, (0..<16).map { offsets[$0] }.max()!) + 1
        tapOffsets = offsets
        // A tick's worth of slack: a chunk's input writes never land on a slot its early reflections still read.
        inputMask = Self.powerOfTwo(atLeast: inputSpan + 1 + Self.tickLength) - 1
        // Eight floats of padding: the reflections' eight-frame loads may run past the mirror's end (unused lanes).
        input = .allocate(capacity: 2 * (inputMask + 1) + 8)
        input.initialize(repeating: 0, count: 2 * (inputMask + 1) + 8)
        for k in 0..<16 { offsets[k] = inputMask + 1 - offsets[k] }
        lateOffset = inputMask + 1 - lateOffset

        // Absorbent filters: per-pass gain γᵢ at low/mid frequencies, the shelf's step for the highs.
        let hfDecay = s.decayTime * s.decayHFRatio
        let crossover = min(2000, 0.2 * fs)
        var meanGain = 0.0
        for i in 0..<8 {
            let d = centres[i]
            let lowDB = -60 * d / (s.decayTime * fs)
            let highDB = -60 * d / (hfDecay * fs)
            meanGain += pow(10, lowDB / 20) / 8
            // The transform's 1/√8 goes into the first section's gain.
            let g = pow(10, lowDB / 20) / 8.0.squareRoot()
            let c1 = BiquadCoefficients(shape: .highshelf, frequency: crossover, q: 0.541,
                                        gainDB: (highDB - lowDB) / 2, sampleRate: fs)
            let c2 = BiquadCoefficients(shape: .highshelf, frequency: crossover, q: 1.307,
                                        gainDB: (highDB - lowDB) / 2, sampleRate: fs)
            (self.first.b0[i], self.first.b1[i], self.first.b2[i]) = (Float(c1.b0 * g), Float(c1.b1 * g), Float(c1.b2 * g))
            (self.first.a1[i], self.first.a2[i]) = (Float(c1.a1), Float(c1.a2))
            (self.second.b0[i], self.second.b1[i], self.second.b2[i]) = (Float(c2.b0), Float(c2.b1), Float(c2.b2))
            (self.second.a1[i], self.second.a2[i]) = (Float(c2.a1), Float(c2.a2))
        }
        feedGain = Float((1 - meanGain * meanGain).squareRoot())
        // Outputs: the left taps `tapFractions.left` of the way along each line, the right `.right`, with the signs of
        // two different Hadamard rows (orthogonal): the two sides hear every mode with different phases. The long
        // network has a second tap per line and side (two more rows), twice the echoes at the same energy.
        let leftSigns: [Double] = [1, -1, 1, -1, 1, -1, 1, -1], rightSigns: [Double] = [1, 1, -1, -1, 1, 1, -1, -1]
        let leftSigns2: [Double] = [1, -1, -1, 1, 1, -1, -1, 1], rightSigns2: [Double] = [1, 1, -1, -1, -1, -1, 1, 1]
        let taps2 = longFit >= 0.5, tapGain = 1 / (taps2 ? 16.0 : 8.0).squareRoot()
        for i in 0..<8 {
            outputTaps[i] = max(1, Int(tapFractions.left * centres[i]))
            outputTaps[8 + i] = max(1, Int(tapFractions.right * centres[i]))
            outputTaps[16 + i] = max(1, Int(0.53 * centres[i]))
            outputTaps[24 + i] = max(1, Int(0.87 * centres[i]))
            leftGains[i] = Float(leftSigns[i] * tapGain)
            rightGains[i] = Float(rightSigns[i] * tapGain)
            leftGains2[i] = taps2 ? Float(leftSigns2[i] * tapGain) : 0
            rightGains2[i] = taps2 ? Float(rightSigns2[i] * tapGain) : 0
        }

        // Input shelf at 5 kHz (kept under Nyquist at low rates); gainHF 0 is taken as −80 dB.
        let hf = BiquadCoefficients(shape: .highshelf, frequency: min(5000, 0.4 * fs), q: 0.5.squareRoot(),
                                    gainDB: 20 * log10(max(s.gainHF, 1e-4)), sampleRate: fs)
        shelf = (Float(hf.b0), Float(hf.b1), Float(hf.b2), Float(hf.a1), Float(hf.a2))

        let t = BiquadCoefficients(shape: .highshelf, frequency: crossover, q: 0.5.squareRoot(),
                                   gainDB: -10 * log10(s.decayHFRatio), sampleRate: fs)
        tone = (Float(t.b0), Float(t.b1), Float(t.b2), Float(t.a1), Float(t.a2))

        dryGain = Float(1 - s.mix)
        let level = Self.efxLevel(s, ourInputShelf: hf, sampleRate: fs)
        reflectionsWet = Float(s.mix * s.gain * s.reflectionsGain * level.reflections)
        lateWet = Float(s.mix * s.gain * s.lateReverbGain * level.late)
        tapGains = .allocate(capacity: 16)
        for (k, g) in tapValues.enumerated() { tapGains[k] = g }
        let feedScale = longFit >= 0.5 ? networkSize : 0.3 * networkSize
        let feeds = Self.feedMilliseconds.map { Int(($0 * feedScale / 1000 * fs).rounded()) }
        feedOffsets = (feeds[0], feeds[1], feeds[2], feeds[3], feeds[4], feeds[5], feeds[6], feeds[7])
        feedMask = Self.powerOfTwo(atLeast: feeds.max()! + 1) - 1
        feedRing = .allocate(capacity: feedMask + 1)
        feedRing.initialize(repeating: 0, count: feedMask + 1)
        sleepAfter = inputSpan + diffuserDelay + feeds.max()! + longest + 64
        scratch = .allocate(capacity: ChunkScratch.size)
        scratch.initialize(repeating: 0, count: ChunkScratch.size)
    }

    /// The amplitude factors that bring the reflections' and the late reverberation's energies to EFX's for the
    /// same settings and send (as OpenAL Soft 1.19's EAX reverb renders them; see "The reverb's design"), over this
    /// unit's own, for white input. This network's energies are flat-normalised: per unit input, the energy after
    /// `ourInputShelf` in both parts. EFX's late energy follows its modal-density gain √(1 − a²) (a: the per-pass
    /// gain of its mean path at a band-weighted decay time), one pass's decay before the first output, and the
    /// decay per band; its reflections lose their taps' decay. Control side (`init`).
    static func efxLevel(_ s: ReverbSettings, ourInputShelf: BiquadCoefficients, sampleRate fs: Double)
        -> (reflections: Double, late: Double) {
        func power(_ c: BiquadCoefficients, _ w: Double) -> Double {
            let nr = c.b0 + c.b1 * cos(w) + c.b2 * cos(2 * w), ni = -(c.b1 * sin(w) + c.b2 * sin(2 * w))
            let dr = 1 + c.a1 * cos(w) + c.a2 * cos(2 * w), di = -(c.a1 * sin(w) + c.a2 * sin(2 * w))
            return (nr * nr + ni * ni) / (dr * dr + di * di)
        }
        func shelf(_ gainDB: Double) -> BiquadCoefficients {
            BiquadCoefficients(shape: .highshelf, frequency: min(5000, 0.49 * fs), q: 0.5.squareRoot(), gainDB: gainDB,
                               sampleRate: fs)
        }
        // EFX's room: its path lengths scale with the cube root of the density (5…50 × a 1 m room's).
        let scale = max(5, cbrt(s.density * 125_000))
        let meanPath = 3.1556e-3 * scale
        let t = s.decayTime
        // The HF decay, limited by the default air absorption (0.994 per metre at 343.3 m/s).
        let hfLimit = 1 / (log10(0.994) * t / -3 * 343.3)
        let hfDecay = min(max(t * min(s.decayHFRatio, hfLimit), 0.1), 20)
        let weighted = 0.25 * t + 0.75 * hfDecay
        let a = pow(10, -3 * meanPath / weighted), mid = pow(10, -3 * meanPath / t), high = pow(10, -3 * meanPath / hfDecay)
        let lines = [1.9419362e-3, 2.4466860e-3, 3.3791220e-3, 3.8838720e-3]
        let allpasses = [1.6182800e-4, 2.0389060e-4, 2.8159360e-4, 3.2365600e-4]
        let meanAllpass = allpasses.reduce(0, +) / 4
        var firstPass = 0.0
        for i in 0..<4 {
            let length = (lines[i] + allpasses[i] * (1 - s.diffusion) + meanAllpass * s.diffusion) * scale
            firstPass += pow(10, -6 * length / t) / 4
        }
        let efxInput = shelf(40 * log10(max(s.gainHF, 0.001))), step = shelf(40 * log10(high / mid))
        var efxLate = 0.0, efxInputEnergy = 0.0, ours = 0.0
        let points = 256
        for k in 1..<points {
            let w = Double.pi * Double(k) / Double(points)
            let input = power(efxInput, w)
            efxInputEnergy += input
            // (The step's square is deliberate: fitted. The per-pass energy stays under the larger band's.)
            efxLate += input * (1 - a * a) * firstPass / (1 - min(mid * mid * power(step, w), max(mid, high) * max(mid, high)))
            ours += power(ourInputShelf, w)
        }
        var taps = 0.0, echoes = 0.0
        for (tap, line) in zip([0, 2.0213520e-4, 4.2531060e-4, 6.7171600e-4], [5.9850400e-4, 1.0913150e-3, 1.5376658e-3, 1.9419362e-3]) {
            taps += pow(10, -6 * tap * scale / t) / 4
            echoes += pow(10, -6 * line * scale / t) / 4
        }
        let efxReflections = efxInputEnergy * taps * (1 + echoes)
        // Fitted offsets (dB) of the measured energies from these expressions, over every preset.
        // What that leaves, fitted over the presets of at least 1 s (dB, within ±4): it grows with a short decay, a
        // low HF ratio and a dark input.
        let fit = 3.108 - 4.577 * log10(t) - 5.133 * min(s.decayHFRatio, hfLimit) + 3.559 * s.gainHF
        let residual = pow(10, -min(max(fit, -4), 4) / 20)
        let reflections = (efxReflections / ours).squareRoot() * pow(10, -2.50 / 20) * residual
        let late = (efxLate / ours).squareRoot() * pow(10, -0.93 / 20) * residual
        return (min(max(reflections, 1e-3), 10), min(max(late, 1e-3), 10))
    }

    /// At least the bytes `init` allocates for `settings` at `sampleRate`: every ring at its largest (density 1), the
    /// input ring long enough for the pre-delay, the reflections and the late delay.
    static func stateBytesBound(settings s: ReverbSettings, sampleRate fs: Double) -> Int {
        let line = powerOfTwo(atLeast: Int(lineMilliseconds.max()! / 1000 * fs + max(2, 0.3e-3 * fs)) + 8 + tickLength)
        let diffuser = powerOfTwo(atLeast: Int(diffuserMilliseconds.max()! / 1000 * fs) + 2)
        let span = Int(((max(s.preDelay, 0) + max(s.reflectionsDelay, 0) + max(s.lateReverbDelay, 0) + 0.05) * fs).rounded(.up))
        let input = powerOfTwo(atLeast: span + 2 + tickLength)
        let feed = powerOfTwo(atLeast: Int(feedMilliseconds.max()! / 1000 * fs) + 2)
        let floats = 8 * line + 4 * diffuser + 2 * input + 8 + ChunkScratch.size + 8 + 16 + feed
        return floats * MemoryLayout<Float>.stride + 64 * MemoryLayout<Int>.stride
    }

    /// Frees every buffer (control side, once the render side has let go of the unit).
    package func deallocate() {
        for p in [lines, input, diffusers, lineCentres, tapGains, scratch, feedRing] { p.deallocate() }
        tapOffsets.deallocate()
        outputTaps.deallocate()
        modulationPeriods.deallocate()
        readOffsets.deallocate()
    }

    /// Whether n is prime (trial division; n is at most a few thousand).
    static func isPrime(_ n: Int) -> Bool {
        if n < 2 { return false }
        var k = 2
        while k * k <= n {
            if n % k == 0 { return false }
            k += 1
        }
        return true
    }

    /// The smallest power of two ≥ n (ring buffer sizes, so positions wrap with a mask).
    static func powerOfTwo(atLeast n: Int) -> Int {
        var p = 1
        while p < n { p <<= 1 }
        return p
    }

    /// Sets the lines' read offsets and all-pass coefficients for the tick containing absolute frame `frame`.
    @_noLocks
    mutating func updateModulation(_ frame: Int) {
        let tick = frame >> Self.tickShift
        var i = 0
        while i < 8 {
            let period = modulationPeriods[i]
            // Triangle 0…1…0 over the period, each line a different phase.
            let phase = (tick + i * (period >> 3)) % period
            let tri = Float(abs(2 * phase - period)) / Float(period)
            let delay = lineCentres[i] + modulationDepth * (tri - 0.5)
            // Integer part I and fraction d in [0.5, 1.5): the all-pass reader's best-behaved range.
            let whole = Int(delay - 0.5)
            let d = delay - Float(whole)
            readOffsets[i] = whole
            eta[i] = (1 - d) / (1 + d)
            i += 1
        }
        var least = readOffsets[0]
        i = 1
        while i < 8 {
            least = min(least, readOffsets[i])
            i += 1
        }
        minReadOffset = least
    }

    /// Zeroes every state (input line, diffusers, network, filters) and starts sleeping.
    @_noLocks
    mutating func fallAsleep() {
        input.update(repeating: 0, count: 2 * (inputMask + 1))
        diffusers.update(repeating: 0, count: 4 * diffuserStride)
        lines.update(repeating: 0, count: 8 * lineStride)
        previous = SIMD8(repeating: 0)
        (first.s1, first.s2) = (SIMD8(repeating: 0), SIMD8(repeating: 0))
        (second.s1, second.s2) = (SIMD8(repeating: 0), SIMD8(repeating: 0))
        shelfState = (0, 0)
        toneState = (0, 0)
        feedRing.update(repeating: 0, count: feedMask + 1)
        asleep = true
        quietFrames = 0
    }

    /// Back to the state `init` leaves: silent, asleep, at frame 0 (its modulation is set again when it wakes).
    @_noLocks
    package mutating func reset() {
        fallAsleep()
        (frame, writeIndex, inputIndex, diffuserIndex, feedIndex) = (0, 0, 0, 0, 0)
        tickLoud = false
    }

    /// Frames per modulation tick (the longest chunk).
    static var tickLength: Int { @_noLocks get { 1 << tickShift } }

    /// Layout of `scratch`, in floats: the chunk's network reads frame-major (`tickLength + 1` frames × 8 lines),
    /// its new line values frame-major, the output taps' weighted samples line-major (a column of `tickLength` per
    /// line, left then right), and the reflections' and late sums per side.
    enum ChunkScratch {
        static var reads: Int { @_noLocks get { 0 } }
        static var writes: Int { @_noLocks get { 8 * (Reverb.tickLength + 1) } }
        static var leftColumns: Int { @_noLocks get { writes + 8 * Reverb.tickLength } }
        static var rightColumns: Int { @_noLocks get { leftColumns + 8 * Reverb.tickLength } }
        static var reflectionsLeft: Int { @_noLocks get { rightColumns + 8 * Reverb.tickLength } }
        static var reflectionsRight: Int { @_noLocks get { reflectionsLeft + Reverb.tickLength } }
        static var lateLeft: Int { @_noLocks get { reflectionsRight + Reverb.tickLength } }
        static var lateRight: Int { @_noLocks get { lateLeft + Reverb.tickLength } }
        static var size: Int { @_noLocks get { lateRight + Reverb.tickLength } }
    }

    /// Eight consecutive floats as one vector (element loads, which the optimiser merges into one vector load).
    @_noLocks @inline(__always)
    static func load8(_ p: UnsafePointer<Float>) -> SIMD8<Float> {
        SIMD8<Float>(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7])
    }

    /// Stores `v` to eight consecutive floats.
    @_noLocks @inline(__always)
    static func store8(_ v: SIMD8<Float>, _ p: UnsafeMutablePointer<Float>) {
        p[0] = v[0]; p[1] = v[1]; p[2] = v[2]; p[3] = v[3]
        p[4] = v[4]; p[5] = v[5]; p[6] = v[6]; p[7] = v[7]
    }

    /// `column[j] = gain × line[(start + j) mod stride]` for j < count (a ring segment, split where it wraps).
    @_noLocks @inline(__always)
    static func weigh(_ line: UnsafeMutablePointer<Float>, _ start: Int, _ stride: Int, _ gain: Float,
                      _ column: UnsafeMutablePointer<Float>, _ count: Int) {
        let first = min(count, stride &- start)
        let source = line + start
        var j = 0
        while j < first {
            column[j] = gain * source[j]
            j &+= 1
        }
        while j < count {
            column[j] = gain * line[j &- first]
            j &+= 1
        }
    }

    /// `column[j] = gain × line[start + j] + gain2 × line[start2 + j]` for j < count: both taps in one pass, or
    /// `weigh` then `accumulate` (the same operations) where a segment wraps.
    @_noLocks @inline(__always)
    static func weighTwo(_ line: UnsafeMutablePointer<Float>, _ start: Int, _ start2: Int, _ stride: Int, _ gain: Float,
                         _ gain2: Float, _ column: UnsafeMutablePointer<Float>, _ count: Int) {
        if start &+ count <= stride && start2 &+ count <= stride {
            let a = line + start, b = line + start2
            var j = 0
            while j < count {
                column[j] = gain * a[j] + gain2 * b[j]
                j &+= 1
            }
        } else {
            weigh(line, start, stride, gain, column, count)
            accumulate(line, start2, stride, gain2, column, count)
        }
    }

    /// `column[j] += gain × line[(start + j) mod stride]` for j < count (a ring segment, split where it wraps).
    @_noLocks @inline(__always)
    static func accumulate(_ line: UnsafeMutablePointer<Float>, _ start: Int, _ stride: Int, _ gain: Float,
                           _ column: UnsafeMutablePointer<Float>, _ count: Int) {
        let first = min(count, stride &- start)
        let source = line + start
        var j = 0
        while j < first {
            column[j] = column[j] + gain * source[j]
            j &+= 1
        }
        while j < count {
            column[j] = column[j] + gain * line[j &- first]
            j &+= 1
        }
    }

    /// Nothing to do: `EffectChain.make` (on the control side) allocates and designs it.
    package mutating func prepare(_ format: EffectFormat) throws(EngineError) {}

    /// `AudioEffect`: the block's pair in place (one instance per pair).
    @_noLocks
    package mutating func process(_ block: EffectBlock) { process(block.left, block.right, block.frames) }

    /// Processes `n` frames of `l`/`r` in place (see the type's documentation), in chunks that never cross a
    /// modulation tick, a ring's end or the shortest read delay (so nothing a chunk writes is read by its own
    /// network reads); every float operation of a frame is the per-frame recursion's, in the same order. The sleep
    /// decision is taken at the end of each tick of absolute frames.
    @_noLocks
    package mutating func process(_ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, _ n: Int) {
        let tickLength = Self.tickLength, tickMask = tickLength - 1
        var j = 0
        while j < n {
            if asleep {
                // Asleep: output = dry until a frame's mono input is non-zero.
                let dry = dryGain
                while j < n {
                    let xl = l[j], xr = r[j]
                    if 0.5 * (xl + xr) != 0 { break }
                    l[j] = dry * xl
                    r[j] = dry * xr
                    frame &+= 1
                    j &+= 1
                }
                if j == n { break }
                asleep = false
                tickLoud = true
                updateModulation(frame & ~tickMask)
            } else if frame & tickMask == 0 {
                updateModulation(frame)
            }
            let count = min(min(tickLength - (frame & tickMask), n - j),
                            min(minReadOffset, min(lineStride - writeIndex, inputMask + 1 - inputIndex)))
            processChunk(l + j, r + j, count)
            j &+= count
            frame &+= count
            if frame & tickMask == 0 {
                // End of a tick: the sleep decision, once per tick of absolute time.
                if tickLoud {
                    quietFrames = 0
                } else {
                    quietFrames &+= tickLength
                    if quietFrames >= sleepAfter { fallAsleep() }
                }
                tickLoud = false
            }
        }
    }

    /// One chunk of `count` frames (1…`tickLength`, inside one tick, ≤ `minReadOffset`, no ring wrap in it).
    @_noLocks
    mutating func processChunk(_ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, _ count: Int) {
        let stride = lineStride, mask = lineMask
        let input = self.input, inputSize = inputMask + 1
        let scratch = self.scratch
        let reads = scratch + ChunkScratch.reads, writes = scratch + ChunkScratch.writes
        let columnsL = scratch + ChunkScratch.leftColumns, columnsR = scratch + ChunkScratch.rightColumns
        let erLeft = scratch + ChunkScratch.reflectionsLeft, erRight = scratch + ChunkScratch.reflectionsRight
        let lateLeft = scratch + ChunkScratch.lateLeft, lateRight = scratch + ChunkScratch.lateRight
        let w0 = writeIndex, wi0 = inputIndex
        let magnitude: UInt32 = 0x7fff_ffff
        var monoBits: UInt32 = 0, loudBits: UInt32 = 0

        // 1. Each line's read segment (count + 1 samples, all written before this chunk), frame-major.
        var k = 0
        while k < 8 {
            let line = lines + k &* stride
            let start = (w0 &- readOffsets[k] &- 1) & mask
            let length = count &+ 1
            let first = min(length, stride &- start)
            var j = 0
            while j < first {
                reads[j &* 8 &+ k] = line[start &+ j]
                j &+= 1
            }
            while j < length {
                reads[j &* 8 &+ k] = line[j &- first]
                j &+= 1
            }
            k &+= 1
        }

        // 2. Frame by frame: the input shelf into the input line, the late tap through the diffusers and the tone
        //    corrector (scalar recursions), and the network on contiguous vectors. One loop, so that the two
        //    independent dependency chains overlap.
        do {
            let p0 = diffusers, p1 = p0 + diffuserStride, p2 = p1 + diffuserStride, p3 = p2 + diffuserStride
            let dMask = diffuserMask
            let (m0, m1, m2, m3) = diffuserLengths
            let (g0, g1, g2, g3) = diffuserGains
            let (sb0, sb1, sb2, sa1, sa2) = shelf
            let (tb0, tb1, tb2, ta1, ta2) = tone
            let late = lateOffset
            var (shelf1, shelf2) = shelfState
            var (tone1, tone2) = toneState
            var wd = diffuserIndex
            let e = eta, feed = feedGain
            let ring = feedRing, ringMask = feedMask
            let (o0, o1, o2, o3, o4, o5, o6, o7) = feedOffsets
            var wf = feedIndex
            var prev = previous
            let c1b0 = first.b0, c1b1 = first.b1, c1b2 = first.b2, c1a1 = first.a1, c1a2 = first.a2
            let c2b0 = second.b0, c2b1 = second.b1, c2b2 = second.b2, c2a1 = second.a1, c2a2 = second.a2
            var s1a = first.s1, s1b = first.s2, s2a = second.s1, s2b = second.s2
            let sign1 = SIMD8<Float>(1, -1, 1, -1, 1, -1, 1, -1), sign2 = SIMD8<Float>(1, 1, -1, -1, 1, 1, -1, -1)
            let sign3 = SIMD8<Float>(1, 1, 1, 1, -1, -1, -1, -1), signFeed = SIMD8<Float>(1, -1, 1, -1, -1, 1, -1, 1)
            var j = 0
            while j < count {
                let mono = 0.5 * (l[j] + r[j])
                monoBits |= mono.bitPattern & magnitude
                let shaped = sb0 * mono + shelf1
                shelf1 = sb1 * mono - sa1 * shaped + shelf2
                shelf2 = sb2 * mono - sa2 * shaped
                let here = input + (wi0 &+ j)
                here[0] = shaped
                here[inputSize] = shaped
                var u = here[late]
                let d0 = p0[(wd &- m0) & dMask], v0 = u + g0 * d0
                p0[wd] = v0
                u = d0 - g0 * v0
                let d1 = p1[(wd &- m1) & dMask], v1 = u + g1 * d1
                p1[wd] = v1
                u = d1 - g1 * v1
                let d2 = p2[(wd &- m2) & dMask], v2 = u + g2 * d2
                p2[wd] = v2
                u = d2 - g2 * v2
                let d3 = p3[(wd &- m3) & dMask], v3 = u + g3 * d3
                p3[wd] = v3
                u = d3 - g3 * v3
                let corrected = tb0 * u + tone1
                tone1 = tb1 * u - ta1 * corrected + tone2
                tone2 = tb2 * u - ta2 * corrected
                let sb = shaped.bitPattern & magnitude, ub = corrected.bitPattern & magnitude
                loudBits = max(loudBits, max(sb, ub))
                wd = (wd &+ 1) & dMask

                let b = Self.load8(reads + j &* 8), a = Self.load8(reads + (j &* 8 &+ 8))
                let y = e * (a - prev) + b
                prev = y
                let z1 = c1b0 * y + s1a
                s1a = c1b1 * y - c1a1 * z1 + s1b
                s1b = c1b2 * y - c1a2 * z1
                let z = c2b0 * z1 + s2a
                s2a = c2b1 * z1 - c2a1 * z + s2b
                s2b = c2b2 * z1 - c2a2 * z
                // The transform's three butterfly stages on whole vectors: p + (±1)·q is exactly p ± q (IEEE
                // subtraction is the addition of the negation), so the bits are the per-frame scalar ones.
                let pairs = SIMD8<Float>(z[0], z[0], z[2], z[2], z[4], z[4], z[6], z[6])
                    + SIMD8<Float>(z[1], z[1], z[3], z[3], z[5], z[5], z[7], z[7]) * sign1
                let quads = SIMD8<Float>(pairs[0], pairs[1], pairs[0], pairs[1], pairs[4], pairs[5], pairs[4], pairs[5])
                    + SIMD8<Float>(pairs[2], pairs[3], pairs[2], pairs[3], pairs[6], pairs[7], pairs[6], pairs[7]) * sign2
                let h = SIMD8<Float>(quads[0], quads[1], quads[2], quads[3], quads[0], quads[1], quads[2], quads[3])
                    + SIMD8<Float>(quads[4], quads[5], quads[6], quads[7], quads[4], quads[5], quads[6], quads[7]) * sign3
                ring[wf] = feed * corrected
                let fed = SIMD8<Float>(ring[(wf &- o0) & ringMask], ring[(wf &- o1) & ringMask],
                                       ring[(wf &- o2) & ringMask], ring[(wf &- o3) & ringMask],
                                       ring[(wf &- o4) & ringMask], ring[(wf &- o5) & ringMask],
                                       ring[(wf &- o6) & ringMask], ring[(wf &- o7) & ringMask])
                wf = (wf &+ 1) & ringMask
                Self.store8(h + fed * signFeed, writes + j &* 8)
                j &+= 1
            }
            shelfState = (shelf1, shelf2)
            toneState = (tone1, tone2)
            diffuserIndex = wd
            feedIndex = wf
            inputIndex = (wi0 &+ count) & inputMask
            previous = prev
            (first.s1, first.s2, second.s1, second.s2) = (s1a, s1b, s2a, s2b)
        }

        // 3. The new values into the lines (no wrap inside a chunk), noting the loudest for the sleep decision.
        k = 0
        while k < 8 {
            let line = lines + k &* stride + w0
            var j = 0
            while j < count {
                let v = writes[j &* 8 &+ k]
                line[j] = v
                let bits = v.bitPattern & magnitude
                loudBits = bits > loudBits ? bits : loudBits
                j &+= 1
            }
            k &+= 1
        }
        writeIndex = (w0 &+ count) & mask
        if monoBits != 0 || loudBits >= Self.quietLevel.bitPattern { tickLoud = true }

        // 4. Output taps, line by line over the chunk (contiguous reads; a tap ≥ 1 frame back reads what step 3
        //    or an earlier chunk wrote): gain × sample, the products the per-frame sum adds.
        k = 0
        while k < 8 {
            let line = lines + k &* stride
            Self.weighTwo(line, (w0 &- outputTaps[k]) & mask, (w0 &- outputTaps[16 &+ k]) & mask, stride, leftGains[k],
                          leftGains2[k], columnsL + k &* Self.tickLength, count)
            Self.weighTwo(line, (w0 &- outputTaps[8 &+ k]) & mask, (w0 &- outputTaps[24 &+ k]) & mask, stride,
                          rightGains[k], rightGains2[k], columnsR + k &* Self.tickLength, count)
            k &+= 1
        }

        // 5. Eight frames at a time: reflections (taps summed in order from 0) and the late sums (the per-frame
        //    pairwise order), then the outputs frame by frame.
        do {
            let taps = tapOffsets, tapGains = self.tapGains, t = Self.tickLength
            var j = 0
            while j < count {
                let here = input + (wi0 &+ j)
                var erL = SIMD8<Float>(repeating: 0), erR = SIMD8<Float>(repeating: 0)
                var k = 0
                while k < 8 {
                    erL = erL + SIMD8<Float>(repeating: tapGains[k]) * Self.load8(here + taps[k])
                    erR = erR + SIMD8<Float>(repeating: tapGains[k &+ 8]) * Self.load8(here + taps[k &+ 8])
                    k &+= 1
                }
                Self.store8(erL, erLeft + j)
                Self.store8(erR, erRight + j)
                let cl = columnsL + j, cr = columnsR + j
                let lateL = ((Self.load8(cl) + Self.load8(cl + t)) + (Self.load8(cl + 2 &* t) + Self.load8(cl + 3 &* t)))
                    + ((Self.load8(cl + 4 &* t) + Self.load8(cl + 5 &* t)) + (Self.load8(cl + 6 &* t) + Self.load8(cl + 7 &* t)))
                let lateR = ((Self.load8(cr) + Self.load8(cr + t)) + (Self.load8(cr + 2 &* t) + Self.load8(cr + 3 &* t)))
                    + ((Self.load8(cr + 4 &* t) + Self.load8(cr + 5 &* t)) + (Self.load8(cr + 6 &* t) + Self.load8(cr + 7 &* t)))
                Self.store8(lateL, lateLeft + j)
                Self.store8(lateR, lateRight + j)
                j &+= 8
            }
            let dry = dryGain, erWet = reflectionsWet, lateWet = self.lateWet
            j = 0
            while j < count {
                l[j] = dry * l[j] + erWet * erLeft[j] + lateWet * lateLeft[j]
                r[j] = dry * r[j] + erWet * erRight[j] + lateWet * lateRight[j]
                j &+= 1
            }
        }
    }
}
