import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// A pan change glides the pan *position* linearly, p(t) = p0 + (p1 − p0)·(t − S)/N, and the equal-power law is
/// evaluated at every frame: a mono sweep keeps L² + R² = s² (no 3 dB dip in the middle), and a stereo sweep
/// follows the stereo law at every frame (no collapse to mono at the midpoint).
final class PanRampTests: XCTestCase {
    private let rampStart = 1000, rampFrames = 4000

    private func position(_ t: Int, from p0: Double, to p1: Double) -> Double {
        if t <= rampStart { return p0 }
        if t >= rampStart + rampFrames { return p1 }
        return p0 + (p1 - p0) * Double(t - rampStart) / Double(rampFrames)
    }

    private func sweep(_ sound: Sound, from p0: Float, to p1: Float, block: Int) throws -> Mix {
        let engine = try makeEngine()
        let track = try engine.makeTrack(sound)
        try track.setPan(p0)
        try track.play(at: track.engine.time(frame: 0))
        XCTAssertNotNil(track.schedule(.pan(p1, ramp: frameSeconds(rampFrames)), atFrame: Int64(rampStart)))
        return render(engine, frames: 6000, block: block)
    }

    func testMonoSweepKeepsItsPower() throws {
        let mix = try sweep(try monoSound(6000) { _ in 1 }, from: -1, to: 1, block: 256)
        var worst = 0.0
        for t in 0..<6000 {
            let power = Double(mix.left[t]) * Double(mix.left[t]) + Double(mix.right[t]) * Double(mix.right[t])
            worst = max(worst, abs(10 * log10(power)))
        }
        XCTAssertLessThan(worst, 0.01, "L² + R² in dB, worst frame")
        let p: (Int) -> Double = { self.position($0, from: -1, to: 1) }
        assertChannel(mix.left, { Pan.mono(p($0)).l }, 0..<6000, "mono sweep L")
        assertChannel(mix.right, { Pan.mono(p($0)).r }, 0..<6000, "mono sweep R")
        // Midpoint: pan 0, both sides √½.
        XCTAssertEqual(Double(mix.left[rampStart + rampFrames / 2]), 0.5.squareRoot(), accuracy: 1e-6)
    }

    func testStereoSweepFollowsTheLawAtEveryFrame() throws {
        let sound = try stereoSound(6000, left: { _ in 0.5 }, right: { _ in -0.25 })
        for (p0, p1) in [(Float(-1), Float(1)), (0.8, -0.6)] {
            let mix = try sweep(sound, from: p0, to: p1, block: 300)
            let p: (Int) -> Double = { self.position($0, from: Double(p0), to: Double(p1)) }
            assertChannel(mix.left, { Pan.stereo(p($0), 0.5, -0.25).l }, 0..<6000, "stereo sweep \(p0)→\(p1) L")
            assertChannel(mix.right, { Pan.stereo(p($0), 0.5, -0.25).r }, 0..<6000, "stereo sweep \(p0)→\(p1) R")
        }
    }

    func testBusPanSweepFollowsTheStereoLaw() throws {
        // Bus 1 at pan −0.8, set to 0.6 before frame 256: over the 240-frame smoothing time its pan position
        // glides linearly, and the bus's stereo law holds at every frame.
        let engine = try makeEngine()
        try engine.setBus(busNumber(1), settings: BusSettings(volume: 1, pan: -0.8))
        let track = try engine.makeTrack(try stereoSound(2000, left: { _ in 0.5 }, right: { _ in -0.25 }))
        try track.setBus(busNumber(1))
        try track.play(at: track.engine.time(frame: 0))
        var failure: Error?
        let mix = render(engine, frames: 1000, block: 128) { now in
            if now == 256 { do { try engine.setBus(busNumber(1), settings: BusSettings(volume: 1, pan: 0.6)) } catch { failure = error } }
        }
        XCTAssertNil(failure)
        let p: (Int) -> Double = { t in -0.8 + 1.4 * min(max(Double(t - 256) / 240, 0), 1) }
        assertChannel(mix.left, { Pan.stereo(p($0), 0.5, -0.25).l }, 0..<1000, "bus sweep L")
        assertChannel(mix.right, { Pan.stereo(p($0), 0.5, -0.25).r }, 0..<1000, "bus sweep R")
    }

    func testSweepBitsDoNotDependOnTheBlockSize() throws {
        let mono = try monoSound(6000) { Double($0 % 17) / 20 - 0.4 }
        let stereo = try stereoSound(6000, left: { Double($0 % 13) / 20 }, right: { -Double($0 % 7) / 10 })
        for sound in [mono, stereo] {
            let reference = try sweep(sound, from: -0.7, to: 0.9, block: 4096)
            for block in [1, 33, 1000] {
                let mix = try sweep(sound, from: -0.7, to: 0.9, block: block)
                assertSameBits(mix.left, reference.left, "block \(block)")
                assertSameBits(mix.right, reference.right, "block \(block)")
            }
        }
    }

    func testQuarterWavePolynomialsMatchTheLaw() {
        for i in 0...1000 {
            let x = Double(i) / 1000
            XCTAssertEqual(Double(QuarterWave.cos(x)), cos(x * .pi / 2), accuracy: 1e-7, "cos at \(x)")
            XCTAssertEqual(Double(QuarterWave.sin(x)), sin(x * .pi / 2), accuracy: 1e-7, "sin at \(x)")
        }
        XCTAssertEqual(QuarterWave.cos(0), 1)
        XCTAssertEqual(QuarterWave.sin(0), 0)
    }
}
