import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// `rateMode: .preservePitch` (WSOLA): a stretched sine keeps its pitch, and lasts input / rate.
final class TimeStretchTests: XCTestCase {
    private func sine(_ frames: Int, _ hz: Double = 440, rate: Double = 48000) throws -> Sound {
        try monoSound(frames, rate: rate) { 0.5 * sin(2 * Double.pi * hz * Double($0) / rate) }
    }

    private func renderStretched(_ sound: Sound, rate: Float, mode: RateMode, frames: Int, block: Int) throws -> Mix {
        let engine = try makeEngine()
        let track = try engine.makeTrack(sound)
        try track.setRate(rate)
        track.rateMode = mode
        try track.play(at: track.engine.time(frame: 3))
        return render(engine, frames: frames, block: block)
    }

    /// Frequency from rising zero crossings (linearly interpolated) in `range`.
    private func frequency(_ x: [Float], _ range: Range<Int>, sampleRate: Double = 48000) -> Double {
        var crossings: [Double] = []
        for i in range.dropFirst() where x[i - 1] < 0 && x[i] >= 0 {
            crossings.append(Double(i - 1) + Double(-x[i - 1] / (x[i] - x[i - 1])))
        }
        guard crossings.count > 2, let first = crossings.first, let last = crossings.last else { return 0 }
        return Double(crossings.count - 1) / (last - first) * sampleRate
    }

    func testStretchedSineKeepsItsPitchAndLastsInputOverRate() throws {
        let n = 48000
        let sound = try sine(n)
        for rate: Float in [0.5, 2.0, 0.8, 1.25] {
            let expected = Int((Double(n) / Double(rate)).rounded(.up))
            let frames = 3 + expected + 4096
            let m = try renderStretched(sound, rate: rate, mode: .preservePitch, frames: frames, block: 512)
            // Duration: input / rate (the cursor moves as in varispeed), within one block.
            XCTAssertLessThanOrEqual(abs(m.endOfSound - (3 + expected)), 512, "rate \(rate): ends at \(m.endOfSound)")
            let f = frequency(m.left, (3 + 2000)..<(3 + expected - 2000))
            XCTAssertEqual(f, 440, accuracy: 440 * 0.005, "rate \(rate): pitch \(f) Hz")
            // Varispeed moves the pitch instead.
            let v = try renderStretched(sound, rate: rate, mode: .varispeed, frames: frames, block: 512)
            XCTAssertEqual(frequency(v.left, (3 + 2000)..<(3 + expected - 2000)), 440 * Double(rate), accuracy: 440 * Double(rate) * 0.005)
            // Level kept: the peak stays near the sine's (Hann windows at 50 % overlap sum to 1).
            let peak = m.left[(3 + 2000)..<(3 + expected - 2000)].map { abs($0) }.max() ?? 0
            XCTAssertEqual(Double(peak), 0.5 * cos(Double.pi / 4), accuracy: 0.03, "rate \(rate)")
        }
    }

    func testStretchIsBlockSizeIndependentAndRateOneIsUntouched() throws {
        let sound = try sine(24000, 330)
        let a = try renderStretched(sound, rate: 0.7, mode: .preservePitch, frames: 40000, block: 4096)
        for block in [64, 1000] {
            let b = try renderStretched(sound, rate: 0.7, mode: .preservePitch, frames: 40000, block: block)
            assertSameBits(a.left, b.left, "block \(block)")
        }
        let one = try renderStretched(sound, rate: 1, mode: .preservePitch, frames: 30000, block: 512)
        let plain = try renderStretched(sound, rate: 1, mode: .varispeed, frames: 30000, block: 512)
        assertSameBits(one.left, plain.left)
    }

    func testGrainPhasesOfVoicesStartedTogetherAreSpreadOverTheHop() {
        // n consecutive sequences (any start) split the 480-frame hop into gaps of at most 2·480/n (+1 for the
        // rounding to frames): the grain boundaries, and the searches, of voices started together are staggered.
        let hop = 480
        for n in [2, 3, 4, 16, 64, 100] {
            for start in stride(from: UInt64(0), to: 3000, by: 37) {
                let phases = (start..<start + UInt64(n)).map { Int(TimeStretch.grainPhase(sequence: $0, hop: hop)) }.sorted()
                XCTAssertTrue(phases.allSatisfy { (0..<hop).contains($0) })
                let gaps = zip(phases, phases.dropFirst()).map { $1 - $0 } + [phases[0] + hop - phases[n - 1]]
                XCTAssertLessThanOrEqual(Double(gaps.max()!), 2 * Double(hop) / Double(n) + 1, "n \(n) from \(start)")
            }
        }
    }

    func testStretchingAllocatesNothingOnTheRenderThread() throws {
        let engine = try makeEngine(maxBlockFrames: 512)
        let track = try engine.makeTrack(try sine(48000))
        try track.setRate(0.6)
        track.rateMode = .preservePitch
        try track.play(at: track.engine.time(frame: 0))
        let l = UnsafeMutablePointer<Float>.allocate(capacity: 1024), r = UnsafeMutablePointer<Float>.allocate(capacity: 1024)
        defer { l.deallocate(); r.deallocate() }
        var allocations: UInt64 = 0
        for k in 0..<60 { allocations += renderCountingAllocations(engine, k, left: l, right: r, frames: 512) }
        XCTAssertEqual(allocations, 0)
        XCTAssertTrue(track.isPlaying)
    }

    func testSceneRateModeKey() throws {
        let scene = try Scene.parse(Data(#"{"tracks":[{"file":"a.wav","rate":0.5,"rateMode":"preservePitch"}]}"#.utf8),
                                    folder: "/", path: "s.json")
        XCTAssertEqual(scene.tracks[0].rateMode, .preservePitch)
        for (json, key) in [(#"{"tracks":[{"file":"a.wav","rateMode":"pitch"}]}"#, "tracks[0].rateMode"),
                            (#"{"tracks":[{"file":"a.wav","rateMode":"preservePitch","stream":true}]}"#, "tracks[0].rateMode"),
                            (#"{"tracks":[{"file":"a.wav","ratemode":"varispeed"}]}"#, "tracks[0].ratemode")] {
            do {
                _ = try Scene.parse(Data(json.utf8), folder: "/", path: "s.json")
                XCTFail("accepted \(json)")
            } catch {
                XCTAssertTrue(error.message.contains(key), error.message)
            }
        }
    }

    /// Grains read at the sample-rate ratio: a 44.1 kHz stereo sound (440 Hz left, 660 Hz right) on a 48 kHz
    /// engine keeps both pitches, and lasts input / rate.
    func testStereoAtAnotherSampleRateKeepsBothPitches() throws {
        let sr = 44100.0, n = 44100
        let sound = try stereoSound(n, rate: sr, left: { 0.5 * sin(2 * Double.pi * 440 * Double($0) / sr) },
                                    right: { 0.5 * sin(2 * Double.pi * 660 * Double($0) / sr) })
        let engine = try makeEngine()
        let track = try engine.makeTrack(sound)
        try track.setRate(0.75)
        track.rateMode = .preservePitch
        try track.play(at: track.engine.time(frame: 0))
        let expected = Int((48000 / 0.75).rounded(.up))
        let m = render(engine, frames: expected + 2048, block: 1000)
        XCTAssertLessThanOrEqual(abs(m.endOfSound - expected), 1000)
        XCTAssertEqual(frequency(m.left, 2000..<(expected - 2000)), 440, accuracy: 440 * 0.005)
        XCTAssertEqual(frequency(m.right, 2000..<(expected - 2000)), 660, accuracy: 660 * 0.005)
    }
}
