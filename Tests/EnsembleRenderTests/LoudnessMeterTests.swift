import XCTest
import EnsembleTestSupport
import EnsembleRender
import CAllocationCounter

/// The EBU R128 meter on the EBU Tech 3341 and 3342 conformance signals, generated here from their published
/// descriptions: against the published expected values, libebur128 and ffmpeg's ebur128 filter.
final class LoudnessMeterTests: XCTestCase {
    private var dir: TemporaryDirectory!
    override func setUpWithError() throws { dir = try TemporaryDirectory() }
    override func tearDown() { dir = nil }

    private static let rate = 48000

    /// One segment: `seconds` of a `frequency` sine at `dBFS` peak on every channel in `levels` (dBFS per channel,
    /// nil for silence).
    private struct Segment {
        var seconds: Double
        var levels: [Double?]
        var frequency = 1000.0
        var phase = 0.0
    }

    private static func stereo(_ dBFS: Double, _ seconds: Double) -> Segment { Segment(seconds: seconds, levels: [dBFS, dBFS]) }

    /// Interleaved samples of the segments, the sine's phase continuous across them.
    private static func signal(_ segments: [Segment]) -> (samples: [Float], channels: Int) {
        let channels = segments[0].levels.count
        var out = [Float]()
        var n = 0
        for segment in segments {
            let frames = Int((segment.seconds * Double(rate)).rounded())
            let amplitudes = segment.levels.map { $0.map { pow(10, $0 / 20) } ?? 0 }
            out.reserveCapacity(out.count + frames * channels)
            for i in 0..<frames {
                let s = sin(2 * Double.pi * segment.frequency * Double(n + i) / Double(rate) + segment.phase)
                for c in 0..<channels { out.append(Float(amplitudes[c] * s)) }
            }
            n += frames
        }
        return (out, channels)
    }

    private static func measure(_ samples: [Float], channels: Int, rate: Int = rate, chunk: Int? = nil) -> LoudnessMeasurement {
        let meter = LoudnessMeter(sampleRate: Double(rate), channelCount: channels)
        samples.withUnsafeBufferPointer { all in
            let step = (chunk ?? all.count / channels) * channels
            var start = 0
            while start < all.count {
                let n = min(step, all.count - start)
                meter.add(interleaved: all.baseAddress! + start, frames: n / channels)
                start += n
            }
        }
        return meter.measurement
    }

    /// Ours, libebur128's and ffmpeg's figures of one signal.
    private func figures(_ samples: [Float], channels: Int, rate: Int = rate, name: String)
        throws -> (ours: LoudnessMeasurement, lib: ReferenceLoudness, ffmpeg: ReferenceLoudness) {
        let ours = Self.measure(samples, channels: channels, rate: rate)
        let lib = try LibEbur128.measure(samples, channels: channels, sampleRate: rate)
        let path = try dir.write(Self.floatWAV(samples, channels: channels, rate: rate), to: name + ".wav")
        let ff = try ffmpegLoudness(of: path)
        return (ours, lib, ff)
    }

    /// A 32-bit float WAV of interleaved samples (byte for byte, quicker than `WAVBuilder` for minutes of audio).
    private static func floatWAV(_ samples: [Float], channels: Int, rate: Int) -> [UInt8] {
        func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        func le16(_ v: Int) -> [UInt8] { (0..<2).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        let dataBytes = samples.count * 4
        var out = Array("RIFF".utf8) + le32(36 + dataBytes) + Array("WAVEfmt ".utf8) + le32(16) + le16(3) + le16(channels)
        out += le32(rate) + le32(rate * channels * 4) + le16(channels * 4) + le16(32) + Array("data".utf8) + le32(dataBytes)
        samples.withUnsafeBytes { out.append(contentsOf: $0) }   // little-endian hosts (x86-64, arm64)
        return out
    }

    /// BS.1770-4 tables the K-weighting at 48 kHz; the meter derives it for any rate.
    func testKWeightingAt48kHzMatchesBS1770Table() {
        let c = LoudnessMeter(sampleRate: 48000, channelCount: 2).coefficients
        let published = [1.53512485958697, -2.69169618940638, 1.19839281085285, -1.69065929318241, 0.73248077421585,
                         1.0, -2.0, 1.0, -1.99004745483398, 0.99007225036621]
        for (ours, table) in zip(c, published) { XCTAssertEqual(ours, table, accuracy: 1e-9) }
    }

    /// Tech 3341 cases 1–6: stereo 1 kHz tones at −23 and −33 dBFS, the gated sequences 3–5 and the 5.0-channel
    /// case 6 (L, R −28, C −24, Ls, Rs −30 dBFS; LFE silent): integrated loudness −23 (−33) LUFS ± 0.1, and for the
    /// steady cases the momentary and short-term loudness too.
    func testTech3341Cases1To6() throws {
        let cases: [(String, [Segment], Double)] = [
            ("3341-1", [Self.stereo(-23, 20)], -23),
            ("3341-2", [Self.stereo(-33, 20)], -33),
            ("3341-3", [Self.stereo(-36, 10), Self.stereo(-23, 60), Self.stereo(-36, 10)], -23),
            ("3341-4", [Self.stereo(-72, 10), Self.stereo(-36, 10), Self.stereo(-23, 60), Self.stereo(-36, 10), Self.stereo(-72, 10)], -23),
            ("3341-5", [Self.stereo(-26, 20), Self.stereo(-20, 20.1), Self.stereo(-26, 20)], -23),
            ("3341-6", [Segment(seconds: 20, levels: [-28, -28, -24, nil, -30, -30])], -23),
        ]
        for (name, segments, expected) in cases {
            let (samples, channels) = Self.signal(segments)
            let (ours, lib, ff) = try figures(samples, channels: channels, name: name)
            let integrated = try XCTUnwrap(ours.integrated, name)
            print("\(name): ours I \(f(integrated)), expected \(expected), libebur128 \(f(lib.integrated)), ffmpeg \(ff.integrated)")
            XCTAssertEqual(integrated, expected, accuracy: 0.1, name)
            XCTAssertEqual(integrated, lib.integrated, accuracy: 0.1, name)
            XCTAssertEqual(integrated, ff.integrated, accuracy: 0.1 + 0.05, name)   // ffmpeg prints one decimal
            if segments.count == 1 {
                XCTAssertEqual(try XCTUnwrap(ours.momentaryMax), expected, accuracy: 0.1, name)
                XCTAssertEqual(try XCTUnwrap(ours.shortTermMax), expected, accuracy: 0.1, name)
            }
        }
    }

    /// Tech 3341 case 9: 20 periods of 1.34 s at −20 dBFS then 1.66 s at −30 dBFS: a constant short-term loudness of
    /// −23 LUFS ± 0.1 once the first 3 s have passed (so its maximum is −23 too).
    func testTech3341Case9ShortTerm() throws {
        var segments = [Segment]()
        for _ in 0..<20 { segments += [Self.stereo(-20, 1.34), Self.stereo(-30, 1.66)] }
        let (samples, channels) = Self.signal(segments)
        let ours = Self.measure(samples, channels: channels)
        print("3341-9: ours S max \(f(ours.shortTermMax!)), last \(f(ours.shortTerm!)), expected -23.0")
        XCTAssertEqual(try XCTUnwrap(ours.shortTermMax), -23, accuracy: 0.1)
        XCTAssertEqual(try XCTUnwrap(ours.shortTerm), -23, accuracy: 0.1)
    }

    /// Tech 3341 cases 10 and 13 in kind (their signals are EBU files; these are generated to the same plan): one
    /// 1 kHz stereo burst at −23 dBFS (−23 LUFS), 3 s long for the short-term maximum and 400 ms long for the
    /// momentary maximum, starting at 20 offsets spread over the 10 ms grid (0.1 s + k · 12.3 ms). The maximum is
    /// −23 ± 0.1 LUFS at every offset (Tech 3341's tolerance), never above it, within 0.02 LU of the window
    /// arithmetic (a window ending on a 10 ms tick covers the burst but for the distance from its end to the
    /// nearest tick), and libebur128 asked every 10 ms agrees within 0.02 LU.
    func testTech3341Cases10And13MaximaOfBurstsAtEveryOffset() throws {
        for (name, length) in [("3341-10 (S)", 3.0), ("3341-13 (M)", 0.4)] {
            for k in 0..<20 {
                let offset = 0.1 + Double(k) * 0.0123
                let segments = [Segment(seconds: offset, levels: [nil, nil]), Self.stereo(-23, length),
                                Segment(seconds: 1, levels: [nil, nil])]
                let (samples, channels) = Self.signal(segments)
                let ours = Self.measure(samples, channels: channels)
                let reference = try LibEbur128.series(samples, channels: channels, sampleRate: Self.rate, hop: Self.rate / 100)
                let shortTerm = length > 1
                let got = try XCTUnwrap(shortTerm ? ours.shortTermMax : ours.momentaryMax, name)
                let lib = (shortTerm ? reference.shortTerm : reference.momentary).max()!
                // The burst's end, in frames, against the 10 ms ticks.
                let end = (offset * Double(Self.rate)).rounded() + (length * Double(Self.rate)).rounded()
                let tick = Double(Self.rate / 100)
                let miss = abs(end - (end / tick).rounded() * tick) / Double(Self.rate)
                let expected = -23 + 10 * log10((length - miss) / length)
                XCTAssertEqual(got, -23, accuracy: 0.1, "\(name), offset \(offset)")
                XCTAssertLessThanOrEqual(got, -23 + 0.01, "\(name), offset \(offset)")
                XCTAssertEqual(got, expected, accuracy: 0.02, "\(name), offset \(offset)")
                XCTAssertEqual(got, lib, accuracy: 0.02, "\(name), offset \(offset): libebur128")
            }
        }
    }

    /// Tech 3341 cases 11 and 14 in kind: 20 segments (6 s, or 800 ms), each with one burst (3 s, or 400 ms) at
    /// −38, −37, … −19 dBFS starting at an offset that moves against the 10 ms grid. The meter read after every 10 ms
    /// gives, as the maximum of the windows ending in each segment, −38 … −19 LUFS ± 0.1 in turn.
    func testTech3341Cases11And14SuccessiveMaxima() throws {
        for (name, segmentLength, burst) in [("3341-11 (S)", 6.0, 3.0), ("3341-14 (M)", 0.8, 0.4)] {
            var segments = [Segment]()
            for k in 0..<20 {
                let offset = (segmentLength - burst) * 0.1 + Double(k) * 0.0037
                segments += [Segment(seconds: offset, levels: [nil, nil]), Self.stereo(-38 + Double(k), burst),
                             Segment(seconds: segmentLength - burst - offset, levels: [nil, nil])]
            }
            let (samples, channels) = Self.signal(segments)
            let meter = LoudnessMeter(sampleRate: Double(Self.rate), channelCount: channels)
            let hop = Self.rate / 100, perSegment = Int(segmentLength * 100)
            var maxima = [Double](repeating: -.infinity, count: 20)
            samples.withUnsafeBufferPointer { all in
                for j in 0..<(all.count / channels / hop) {
                    meter.add(interleaved: all.baseAddress! + j * hop * channels, frames: hop)
                    let value = burst > 1 ? meter.shortTerm : meter.momentary
                    if let value, j / perSegment < 20 { maxima[j / perSegment] = max(maxima[j / perSegment], value) }
                }
            }
            for k in 0..<20 { XCTAssertEqual(maxima[k], -38 + Double(k), accuracy: 0.1, "\(name), segment \(k)") }
        }
    }

    /// Tech 3341 case 12 in kind (case 9's plan at the momentary window): 1 kHz stereo, 180 ms at −20 dBFS then
    /// 220 ms at −30 dBFS, for 20 s. Every 400 ms window holds one period, so the momentary loudness read every
    /// 10 ms after the first second is constant: 10·log10((0.18·10⁻² + 0.22·10⁻³) / 0.4) = −22.97 LUFS ± 0.1.
    func testTech3341Case12MomentaryIsConstant() throws {
        var segments = [Segment]()
        for _ in 0..<50 { segments += [Self.stereo(-20, 0.18), Self.stereo(-30, 0.22)] }
        let (samples, channels) = Self.signal(segments)
        let expected = 10 * log10((0.18 * 1e-2 + 0.22 * 1e-3) / 0.4)
        let meter = LoudnessMeter(sampleRate: Double(Self.rate), channelCount: channels)
        let hop = Self.rate / 100
        var readings = 0
        samples.withUnsafeBufferPointer { all in
            for j in 0..<(all.count / channels / hop) {
                meter.add(interleaved: all.baseAddress! + j * hop * channels, frames: hop)
                guard j >= 100 else { continue }
                readings += 1
                XCTAssertEqual(meter.momentary ?? 0, expected, accuracy: 0.1, "after \(j * 10) ms")
            }
        }
        XCTAssertEqual(readings, 1900)
    }

    /// Tech 3342 cases 1–4: 1 kHz stereo steps (−20/−30, −20/−15, −40/−20, −50/−35/−20/−35/−50 dBFS, 20 s each):
    /// LRA 10, 5, 20 and 15 LU.
    func testTech3342LoudnessRangeCases1To4() throws {
        let cases: [(String, [Segment], Double)] = [
            ("3342-1", [Self.stereo(-20, 20), Self.stereo(-30, 20)], 10),
            ("3342-2", [Self.stereo(-20, 20), Self.stereo(-15, 20)], 5),
            ("3342-3", [Self.stereo(-40, 20), Self.stereo(-20, 20)], 20),
            ("3342-4", [Self.stereo(-50, 20), Self.stereo(-35, 20), Self.stereo(-20, 20), Self.stereo(-35, 20), Self.stereo(-50, 20)], 15),
        ]
        for (name, segments, expected) in cases {
            let (samples, channels) = Self.signal(segments)
            let (ours, lib, ff) = try figures(samples, channels: channels, name: name)
            let range = try XCTUnwrap(ours.loudnessRange, name)
            print("\(name): ours LRA \(f(range)), expected \(expected), libebur128 \(f(lib.loudnessRange)), ffmpeg \(ff.loudnessRange)")
            XCTAssertEqual(range, expected, accuracy: 0.1, name)
            XCTAssertEqual(range, lib.loudnessRange, accuracy: 0.1, name)
            XCTAssertEqual(range, ff.loudnessRange, accuracy: 0.1 + 0.05, name)
        }
    }

    /// True peak, in the manner of Tech 3341's cases 15–23 (sines whose peaks fall between samples): a quarter-rate
    /// sine at 45° (samples at 0.707 of its peak), a 1 kHz sine, and quarter-rate sines at 44.1 and 96 kHz. The
    /// expected value is the sine's amplitude; the tolerance BS.1770-4 allows a 4× meter is +0.2/−0.4 dB.
    func testTruePeakOfInterSamplePeaks() throws {
        let cases: [(String, Int, Segment, Double)] = [
            ("tp-fs4-45deg-0dB", 48000, Segment(seconds: 2, levels: [0, 0], frequency: 12000, phase: .pi / 4), 0),
            ("tp-fs4-45deg-6dB", 48000, Segment(seconds: 2, levels: [-6, -6], frequency: 12000, phase: .pi / 4), -6),
            ("tp-1k-0dB", 48000, Segment(seconds: 2, levels: [0, 0]), 0),
            ("tp-11025-44k1", 44100, Segment(seconds: 2, levels: [-3, -3], frequency: 11025, phase: .pi / 4), -3),
            ("tp-24k-96k", 96000, Segment(seconds: 2, levels: [-1, -1], frequency: 24000, phase: .pi / 4), -1),
            ("tp-8k-30deg", 48000, Segment(seconds: 2, levels: [-2, -2], frequency: 8000, phase: .pi / 6 + 0.1), -2),
        ]
        for (name, rate, segment, expected) in cases {
            let channels = segment.levels.count
            var samples = [Float]()
            let frames = Int(segment.seconds * Double(rate))
            let amplitude = pow(10, segment.levels[0]! / 20)
            for i in 0..<frames {
                let s = Float(amplitude * sin(2 * Double.pi * segment.frequency * Double(i) / Double(rate) + segment.phase))
                for _ in 0..<channels { samples.append(s) }
            }
            let (ours, lib, ff) = try figures(samples, channels: channels, rate: rate, name: name)
            let peak = try XCTUnwrap(ours.truePeak, name)
            print("\(name): ours TP \(f(peak)), sample peak \(f(ours.samplePeak!)), expected \(expected), libebur128 \(f(lib.truePeak)), ffmpeg \(ff.truePeak)")
            XCTAssertLessThanOrEqual(peak, expected + 0.2, name)
            XCTAssertGreaterThanOrEqual(peak, expected - 0.4, name)
            XCTAssertEqual(peak, expected, accuracy: 0.1, name)
            XCTAssertEqual(peak, lib.truePeak, accuracy: 0.2, name)
        }
    }

    /// The figures do not depend on how the signal is cut into blocks.
    func testBlockSizeIndependence() {
        let (samples, channels) = Self.signal([Self.stereo(-20, 3.5), Self.stereo(-30, 2.5)])
        let whole = Self.measure(samples, channels: channels)
        for chunk in [1, 333, 4096] {
            XCTAssertEqual(Self.measure(samples, channels: channels, chunk: chunk), whole, "chunk \(chunk)")
        }
    }

    /// Silence and signals shorter than a window have no loudness; the meter starts over on reset.
    func testSilenceAndReset() {
        let meter = LoudnessMeter(sampleRate: 48000, channelCount: 2)
        let silence = [Float](repeating: 0, count: 2 * 48000)
        silence.withUnsafeBufferPointer { meter.add($0) }
        XCTAssertNil(meter.measurement.integrated)
        XCTAssertNil(meter.measurement.truePeak)
        meter.reset()
        XCTAssertEqual(meter.measurement, LoudnessMeasurement())
        let (tone, _) = Self.signal([Self.stereo(-23, 1)])
        tone.withUnsafeBufferPointer { meter.add($0) }
        XCTAssertEqual(meter.measurement.integrated ?? 0, -23, accuracy: 0.1)
    }

    /// Feeding the meter allocates nothing (it runs on the render thread).
    func testAddDoesNotAllocate() {
        let meter = LoudnessMeter(sampleRate: 48000, channelCount: 2)
        let (tone, _) = Self.signal([Self.stereo(-23, 4)])
        tone.withUnsafeBufferPointer { all in
            allocation_counter_start()
            var start = 0
            while start < all.count {
                let n = min(512, all.count - start)
                meter.add(interleaved: all.baseAddress! + start, frames: n / 2)
                start += n
            }
            XCTAssertEqual(allocation_counter_stop(), 0)
        }
    }

    private func f(_ v: Double) -> String { String(format: "%.2f", v) }
}
