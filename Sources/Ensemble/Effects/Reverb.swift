// Render thread (`process`); `init`/`deallocate` on the control thread.

import Foundation

/// The algorithmic reverb of `EffectSpec.reverb`: a feedback delay network with absorbent filters after
/// J.-M. Jot and A. Chaigne, "Digital delay networks for designing artificial reverberators" (AES 90th
/// Convention, 1991), and Jot's "An analysis/synthesis approach to real-time artificial reverberation" (ICASSP
/// 1992), with input diffusers after J. Dattorro, "Effect Design, Part 1: Reverberator and Other Filters" (JAES
/// 45(9), 1997), taking EFX's reverb parameters (`ReverbSettings`).
///
/// Signal flow, per frame (everything Float, one pass over the eight lines, no division, no libm):
/// - The input is summed to mono, shaped by a high shelf at 5 kHz with gain `gainHF` (EFX's HF gain, a static
///   tone control, so it is applied once here rather than to both outputs) and written into one input line.
/// - Early reflections: eight taps per side from the input line, starting `preDelay + reflectionsDelay` after
///   the input, spread over ~20 ms × the room size, with different times and signs on the left and right,
///   their energies summing to 1, times `reflectionsGain`.
/// - Late reverberation: a tap `lateReverbDelay` after the first reflection (less the network's own minimum
///   delay) goes through four Schroeder all-passes in series (coefficients ∝ `diffusion`: the echo density
///   builds at once), then into the eight lines of the network with alternating signs. Each line's output is
///   read through a first-order all-pass fractional delay whose length a slow triangle wave moves by a few
///   samples (different rates and phases per line: no fixed modes, no metallic ringing; an all-pass reader,
///   unlike linear interpolation, does not damp the highs, so the decay stays what the filters say), then
///   through the line's absorbent filter, then the eight are mixed by an 8×8 Hadamard matrix (a fast
///   Walsh–Hadamard transform, 24 additions; unitary, so the network itself is lossless) and fed back.
/// - Absorbent filters (Jot): line i of length Dᵢ samples must lose 60·Dᵢ/(T·fs) dB per pass for a decay
///   time T. Each filter is a gain (the 500 Hz–1 kHz decay = `decayTime`) times a fourth-order high shelf (two
///   RBJ shelving sections at 2 kHz with the Q's of a fourth-order Butterworth, 0.541 and 1.307) whose step is
///   what `decayHFRatio` asks for above it. A first- or second-order shelf is too gentle: with a ratio of 0.1
///   the 1 kHz decay would already be 15–25 % short and the 4 kHz one 25–30 % long; the fourth-order one keeps
///   both octaves within a few per cent of their plateaus.
/// - Outputs: one tap inside each line per side (left 0.41 of the way along, right 0.73), summed with the signs of
///   two different Hadamard rows (orthogonal), so each side hears every mode with its own phases and the two
///   tails are decorrelated even when a short decay leaves only a few modes (a tap at the lines' ends would give
///   both sides the same phases), times `lateReverbGain` and a normalisation √(1 − γ²) (γ the mean per-pass gain) that keeps the tail's energy
///   independent of the decay time, as EFX's reverbs do. `density` scales the line lengths (the room size):
///   0.25 × … 1 × (17–35 ms), and the early reflections' spread; for very short decays the lines shrink further
///   so that no band loses more than 10 dB per pass (otherwise its "decay" would be a few separate echoes). Wet = `gain` × (reflections + late); out = (1 − mix)·dry + mix·wet.
///
/// Sleep: once the mono input has been exactly 0 and everything the network wrote has stayed below 10⁻⁸ (−160 dB)
/// for longer than any delay in the unit, the state is set to exactly zero and the unit sleeps — output = dry
/// — until the input is non-zero again. So a finished tail costs what silence costs (a scan of the input), and no
/// subnormal value can ever be reached (the mixer's flush-to-zero guarantees the latter anyway). The decision is
/// taken per frame, so it is the same for every block size.
///
/// The network is linear in its state and the modulation depends only on the absolute frame count since the unit
/// was made (the bus effect sees every frame in order), so output bits do not depend on block sizes.
struct Reverb {
    /// Everything the per-frame loop reads and writes, in one allocation (see `Layout` for the offsets).
    var state: UnsafeMutablePointer<Float>
    /// Eight network lines, `lineStride` floats apart, each a ring buffer indexed with `lineMask`.
    var lines: UnsafeMutablePointer<Float>
    var lineStride: Int
    var lineMask: Int
    /// The input line (mono, after the HF shelf), a ring buffer indexed with `inputMask`.
    var input: UnsafeMutablePointer<Float>
    var inputMask: Int
    /// The four diffuser all-passes' buffers (one ring each, `diffuserMask`, `diffuserStride` apart) and lengths.
    var diffusers: UnsafeMutablePointer<Float>
    var diffuserStride: Int
    var diffuserMask: Int
    var diffuserLengths: (Int, Int, Int, Int)
    var diffuserGains: (Float, Float, Float, Float)
    /// Early-reflection tap offsets (frames back from the write position) and gains, left then right.
    var tapOffsets: UnsafeMutablePointer<Int>
    /// Late input tap offset (frames back in the input line).
    var lateOffset: Int
    /// Line lengths' centres and modulation: delay = centre + depth · (triangle − ½), period in 32-frame ticks.
    var lineCentres: UnsafeMutablePointer<Float>
    var modulationPeriods: UnsafeMutablePointer<Int>
    var modulationDepth: Float
    /// Output taps inside the lines (frames back from the write position), left (8) then right (8).
    var outputTaps: UnsafeMutablePointer<Int>
    /// Integer read offsets (frames back) of the lines for the current tick.
    var readOffsets: UnsafeMutablePointer<Int>
    /// Input gain into the lines (normalisation, late gain folded in at the outputs).
    var feedGain: Float
    var dryGain: Float
    var reflectionsWet: Float
    var lateWet: Float
    /// The input shelf (`gainHF`), transposed direct form II.
    var shelf: (b0: Float, b1: Float, b2: Float, a1: Float, a2: Float)
    /// Jot's tone corrector on the network's input: a 2 kHz shelf of 1/√`decayHFRatio`, so that the tail starts
    /// with a flat spectrum however fast its highs decay (a network's energy at f grows with its decay time there).
    var tone: (b0: Float, b1: Float, b2: Float, a1: Float, a2: Float)
    /// Frames since the unit was made (drives the modulation ticks); write positions.
    var frame = 0
    var writeIndex = 0
    var inputIndex = 0
    var diffuserIndex = 0
    /// Consecutive quiet frames, the count after which the unit sleeps, and whether it sleeps.
    var quietFrames = 0
    var sleepAfter: Int
    var asleep = true

    /// Offsets into `state` (eight floats per field, one per line).
    enum Layout {
        /// All-pass interpolation coefficient η (per line) and its previous output.
        static var eta: Int { @_noLocks get { 0 } }
        static var apPrevious: Int { @_noLocks get { 8 } }
        /// Absorbent filter: two transposed-direct-form-II sections: coefficients b0 b1 b2 a1 a2 and states s1 s2.
        static var first: Int { @_noLocks get { 16 } }
        static var second: Int { @_noLocks get { 72 } }
        /// Per section: 7 fields × 8 lines.
        static var sectionSize: Int { @_noLocks get { 56 } }
        /// Input shelf state (2 floats), after the sections.
        static var shelfState: Int { @_noLocks get { 128 } }
        /// Tone corrector state (2 floats).
        static var toneState: Int { @_noLocks get { 130 } }
        /// Scratch: the eight filtered line outputs.
        static var scratch: Int { @_noLocks get { 136 } }
        /// Output tap gains: left (8), right (8).
        static var outputGains: Int { @_noLocks get { 144 } }
        static var count: Int { @_noLocks get { 160 } }
    }

    /// Modulation is recomputed every 32 frames (of absolute time).
    static var tickShift: Int { @_noLocks get { 5 } }
    /// Below this, a value counts as silent for the sleep decision (−160 dB re full scale).
    static var quietLevel: Float { @_noLocks get { 1e-8 } }

    /// Line lengths at density 1 and 48 kHz, in ms (17–35 ms; no two with a small common ratio).
    static let lineMilliseconds: [Double] = [17.1, 19.7, 22.3, 24.6, 27.3, 29.9, 32.1, 34.9]
    /// Diffuser all-pass lengths at density 1, ms.
    static let diffuserMilliseconds: [Double] = [1.53, 2.27, 3.31, 4.79]
    /// Early-reflection tap times at density 1, ms after the first reflection, and relative amplitudes.
    static let leftTaps: [(Double, Double)] = [(0, 1), (2.9, -0.84), (4.3, 0.77), (6.1, -0.7), (8.7, 0.6),
                                               (11.3, -0.52), (14.9, 0.45), (19.1, -0.37)]
    static let rightTaps: [(Double, Double)] = [(0.43, 1), (2.3, 0.86), (5.0, -0.76), (7.3, -0.66), (9.6, 0.58),
                                                (12.7, 0.5), (16.2, -0.43), (20.3, 0.35)]

    init(settings s: ReverbSettings, sampleRate: Double) {
        let fs = sampleRate
        let size = 0.25 + 0.75 * s.density
        // The network's size: `density`'s, but small enough that the fastest-decaying band (T60 = decayTime ×
        // min(1, decayHFRatio)) loses at most 10 dB per pass through the longest line: a 50 ms decay in 35 ms lines
        // would be a few separate echoes, not a decay.
        let shortestDecay = s.decayTime * min(1, s.decayHFRatio)
        let networkSize = min(size, shortestDecay / (6 * Self.lineMilliseconds.max()! / 1000))
        func frames(_ ms: Double) -> Int { Int((ms / 1000 * fs).rounded()) }

        // Network lines: lengths, modulation depth (≈ 0.15 ms each way), ring size.
        let depth = max(2, 0.3e-3 * fs)
        var centres: [Double] = []
        for ms in Self.lineMilliseconds {
            var d = (ms * networkSize / 1000 * fs).rounded()
            while centres.contains(d) { d += 1 }
            centres.append(max(d, depth + 4))
        }
        let longest = Int((centres.max()! + depth).rounded(.up)) + 4
        lineMask = Self.powerOfTwo(atLeast: longest) - 1
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
        outputTaps = .allocate(capacity: 16)

        // Diffusers: lengths scale with the room; the coefficient with `diffusion`, capped so that an all-pass's
        // own ring-out (60·M/(−20·log10 g) frames to −60 dB) stays under a fifth of the shortest decay time.
        var lengths: [Int] = []
        var gains: [Float] = []
        for (k, ms) in Self.diffuserMilliseconds.enumerated() {
            let m = max(1, Int((ms * networkSize / 1000 * fs).rounded()))
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
        var tapGains: [Float] = []
        for (k, taps) in [Self.leftTaps, Self.rightTaps].enumerated() {
            let norm = (taps.map { $0.1 * $0.1 }.reduce(0, +)).squareRoot()
            for (j, tap) in taps.enumerated() {
                offsets[8 * k + j] = first + frames(tap.0 * size)
                tapGains.append(Float(tap.1 / norm))
            }
        }
        // The late part leaves the network after the diffusers and at least the shortest line: start it that
        // much earlier (never before the pre-delay) so that it sounds `lateReverbDelay` after the first reflection.
        let lateWanted = first + frames(1000 * s.lateReverbDelay) - diffuserDelay - Int(centres.min()! - depth / 2)
        lateOffset = max(frames(1000 * s.preDelay), lateWanted)
        let inputSpan = max(lateOffset, (0..<16).map { offsets[$0] }.max()!) + 1
        tapOffsets = offsets
        inputMask = Self.powerOfTwo(atLeast: inputSpan + 1) - 1
        input = .allocate(capacity: inputMask + 1)
        input.initialize(repeating: 0, count: inputMask + 1)

        // Absorbent filters: per-pass gain γᵢ at low/mid frequencies, the shelf's step for the highs.
        state = .allocate(capacity: Layout.count)
        state.initialize(repeating: 0, count: Layout.count)
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
            for (section, q) in [(Layout.first, 0.541), (Layout.second, 1.307)] {
                let c = BiquadCoefficients(shape: .highshelf, frequency: crossover, q: q,
                                           gainDB: (highDB - lowDB) / 2, sampleRate: fs)
                let scale = section == Layout.first ? g : 1
                let fields = [c.b0 * scale, c.b1 * scale, c.b2 * scale, c.a1, c.a2]
                for (f, v) in fields.enumerated() { state[section + 8 * f + i] = Float(v) }
            }
        }
        feedGain = Float((1 - meanGain * meanGain).squareRoot())
        // Outputs: the left taps 0.41 of the way along each line, the right 0.73, with the signs of two different
        // Hadamard rows (orthogonal), each at 1/√8: the two sides hear every mode with different phases.
        let leftSigns: [Double] = [1, -1, 1, -1, 1, -1, 1, -1], rightSigns: [Double] = [1, 1, -1, -1, 1, 1, -1, -1]
        for i in 0..<8 {
            outputTaps[i] = max(1, Int(0.41 * centres[i]))
            outputTaps[8 + i] = max(1, Int(0.73 * centres[i]))
            state[Layout.outputGains + i] = Float(leftSigns[i] / 8.0.squareRoot())
            state[Layout.outputGains + 8 + i] = Float(rightSigns[i] / 8.0.squareRoot())
        }

        // Input shelf at 5 kHz (kept under Nyquist at low rates); gainHF 0 is taken as −80 dB.
        let hf = BiquadCoefficients(shape: .highshelf, frequency: min(5000, 0.4 * fs), q: 0.5.squareRoot(),
                                    gainDB: 20 * log10(max(s.gainHF, 1e-4)), sampleRate: fs)
        shelf = (Float(hf.b0), Float(hf.b1), Float(hf.b2), Float(hf.a1), Float(hf.a2))

        let t = BiquadCoefficients(shape: .highshelf, frequency: crossover, q: 0.5.squareRoot(),
                                   gainDB: -10 * log10(s.decayHFRatio), sampleRate: fs)
        tone = (Float(t.b0), Float(t.b1), Float(t.b2), Float(t.a1), Float(t.a2))

        dryGain = Float(1 - s.mix)
        reflectionsWet = Float(s.mix * s.gain * s.reflectionsGain)
        lateWet = Float(s.mix * s.gain * s.lateReverbGain)
        tapGainsStorage = .allocate(capacity: 16)
        for (k, g) in tapGains.enumerated() { tapGainsStorage[k] = g }
        sleepAfter = inputSpan + diffuserDelay + longest + 64
    }

    /// Early-reflection tap gains (normalised), left then right.
    var tapGainsStorage: UnsafeMutablePointer<Float>

    func deallocate() {
        for p in [state, lines, input, diffusers, lineCentres, tapGainsStorage] { p.deallocate() }
        tapOffsets.deallocate()
        outputTaps.deallocate()
        modulationPeriods.deallocate()
        readOffsets.deallocate()
    }

    static func powerOfTwo(atLeast n: Int) -> Int {
        var p = 1
        while p < n { p <<= 1 }
        return p
    }

    /// Sets the lines' read offsets and all-pass coefficients for the tick containing absolute frame `frame`.
    @_noLocks
    mutating func updateModulation(_ frame: Int) {
        let tick = frame >> Self.tickShift
        let eta = state + Layout.eta
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
    }

    /// Zeroes every state (input line, diffusers, network, filters) and starts sleeping.
    @_noLocks
    mutating func fallAsleep() {
        input.update(repeating: 0, count: inputMask + 1)
        diffusers.update(repeating: 0, count: 4 * diffuserStride)
        lines.update(repeating: 0, count: 8 * lineStride)
        (state + Layout.apPrevious).update(repeating: 0, count: 8)
        (state + Layout.first + 40).update(repeating: 0, count: 16)
        (state + Layout.second + 40).update(repeating: 0, count: 16)
        (state + Layout.shelfState).update(repeating: 0, count: 4)
        asleep = true
        quietFrames = 0
    }

    @_noLocks
    mutating func process(_ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, _ n: Int) {
        let st = state, lines = self.lines, stride = lineStride, mask = lineMask
        let input = self.input, inputMask = self.inputMask
        let diffusers = self.diffusers, dStride = diffuserStride, dMask = diffuserMask
        let (m0, m1, m2, m3) = diffuserLengths
        let (g0, g1, g2, g3) = diffuserGains
        let taps = tapOffsets, tapGains = tapGainsStorage, readOffsets = self.readOffsets
        let (sb0, sb1, sb2, sa1, sa2) = shelf
        let (tb0, tb1, tb2, ta1, ta2) = tone
        let dry = dryGain, erWet = reflectionsWet, lateWet = self.lateWet, feed = feedGain
        let eta = st + Layout.eta, previous = st + Layout.apPrevious, out = st + Layout.scratch
        let f1 = st + Layout.first, f2 = st + Layout.second
        let outTaps = outputTaps, outGains = st + Layout.outputGains
        let tickMask = (1 << Self.tickShift) - 1, quiet = Self.quietLevel
        var w = writeIndex, wi = inputIndex, wd = diffuserIndex
        var shelf1 = st[Layout.shelfState], shelf2 = st[Layout.shelfState + 1]
        var tone1 = st[Layout.toneState], tone2 = st[Layout.toneState + 1]
        var j = 0
        while j < n {
            let xl = l[j], xr = r[j]
            let mono = 0.5 * (xl + xr)
            if asleep {
                if mono == 0 {
                    l[j] = dry * xl
                    r[j] = dry * xr
                    frame += 1
                    j += 1
                    continue
                }
                asleep = false
                updateModulation(frame & ~tickMask)
            } else if frame & tickMask == 0 {
                updateModulation(frame)
            }

            // Input shelf (gainHF) into the input line.
            let shaped = sb0 * mono + shelf1
            shelf1 = sb1 * mono - sa1 * shaped + shelf2
            shelf2 = sb2 * mono - sa2 * shaped
            input[wi] = shaped

            // Early reflections.
            var erL: Float = 0, erR: Float = 0
            var k = 0
            while k < 8 {
                erL += tapGains[k] * input[(wi - taps[k]) & inputMask]
                erR += tapGains[k + 8] * input[(wi - taps[k + 8]) & inputMask]
                k += 1
            }

            // Diffusers: y = −g·x + v[n−M], v[n] = x + g·y… written as v = x + g·v[n−M], y = v[n−M] − g·v.
            var u = input[(wi - lateOffset) & inputMask]
            let p0 = diffusers, p1 = diffusers + dStride, p2 = diffusers + 2 * dStride, p3 = diffusers + 3 * dStride
            let d0 = p0[(wd - m0) & dMask], v0 = u + g0 * d0
            p0[wd] = v0
            u = d0 - g0 * v0
            let d1 = p1[(wd - m1) & dMask], v1 = u + g1 * d1
            p1[wd] = v1
            u = d1 - g1 * v1
            let d2 = p2[(wd - m2) & dMask], v2 = u + g2 * d2
            p2[wd] = v2
            u = d2 - g2 * v2
            let d3 = p3[(wd - m3) & dMask], v3 = u + g3 * d3
            p3[wd] = v3
            u = d3 - g3 * v3

            // Tone corrector.
            let corrected = tb0 * u + tone1
            tone1 = tb1 * u - ta1 * corrected + tone2
            tone2 = tb2 * u - ta2 * corrected
            u = corrected

            // Network: read each line through its all-pass fractional delay, then its absorbent filter.
            var loudest = abs(shaped)
            var lateL: Float = 0, lateR: Float = 0
            var i = 0
            while i < 8 {
                let base = lines + i * stride
                lateL += outGains[i] * base[(w - outTaps[i]) & mask]
                lateR += outGains[8 + i] * base[(w - outTaps[8 + i]) & mask]
                let o = readOffsets[i]
                let a = base[(w - o) & mask], b = base[(w - o - 1) & mask]
                let e = eta[i]
                let y = e * (a - previous[i]) + b
                previous[i] = y
                // Section 1 (gain and 1/√8 folded in) and section 2, transposed direct form II.
                let z1 = f1[i] * y + f1[40 + i]
                f1[40 + i] = f1[8 + i] * y - f1[24 + i] * z1 + f1[48 + i]
                f1[48 + i] = f1[16 + i] * y - f1[32 + i] * z1
                let z2 = f2[i] * z1 + f2[40 + i]
                f2[40 + i] = f2[8 + i] * z1 - f2[24 + i] * z2 + f2[48 + i]
                f2[48 + i] = f2[16 + i] * z1 - f2[32 + i] * z2
                out[i] = z2
                i += 1
            }
            // Fast Walsh–Hadamard transform of the eight outputs (the 1/√8 is already in).
            let a0 = out[0] + out[1], a1 = out[0] - out[1], a2 = out[2] + out[3], a3 = out[2] - out[3]
            let a4 = out[4] + out[5], a5 = out[4] - out[5], a6 = out[6] + out[7], a7 = out[6] - out[7]
            let b0 = a0 + a2, b1 = a1 + a3, b2 = a0 - a2, b3 = a1 - a3
            let b4 = a4 + a6, b5 = a5 + a7, b6 = a4 - a6, b7 = a5 - a7
            let h0 = b0 + b4, h1 = b1 + b5, h2 = b2 + b6, h3 = b3 + b7
            let h4 = b0 - b4, h5 = b1 - b5, h6 = b2 - b6, h7 = b3 - b7
            // Feed back with the input, alternating signs.
            let x = feed * u
            let w0 = h0 + x, w1 = h1 - x, w2 = h2 + x, w3 = h3 - x
            let w4 = h4 - x, w5 = h5 + x, w6 = h6 - x, w7 = h7 + x
            lines[w] = w0
            lines[stride + w] = w1
            lines[2 * stride + w] = w2
            lines[3 * stride + w] = w3
            lines[4 * stride + w] = w4
            lines[5 * stride + w] = w5
            lines[6 * stride + w] = w6
            lines[7 * stride + w] = w7
            loudest = max(loudest, max(max(max(abs(w0), abs(w1)), max(abs(w2), abs(w3))),
                                       max(max(abs(w4), abs(w5)), max(abs(w6), abs(w7)))))

            l[j] = dry * xl + erWet * erL + lateWet * lateL
            r[j] = dry * xr + erWet * erR + lateWet * lateR

            w = (w + 1) & mask
            wi = (wi + 1) & inputMask
            wd = (wd + 1) & dMask
            frame += 1
            j += 1
            if mono == 0 && loudest < quiet && abs(u) < quiet {
                quietFrames += 1
                if quietFrames >= sleepAfter {
                    shelf1 = 0
                    shelf2 = 0
                    tone1 = 0
                    tone2 = 0
                    fallAsleep()
                }
            } else {
                quietFrames = 0
            }
        }
        st[Layout.shelfState] = shelf1
        st[Layout.shelfState + 1] = shelf2
        st[Layout.toneState] = tone1
        st[Layout.toneState + 1] = tone2
        writeIndex = w
        inputIndex = wi
        diffuserIndex = wd
    }
}
