import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The W3C StereoPannerNode equal-power law for mono and stereo sources, with volume, and no hidden master gain.
final class PanLawTests: XCTestCase {
    static let pans: [Float] = [-1, -0.5, 0, 0.3, 1]

    func testMonoPanLawAtEveryPan() throws {
        let frames = 300
        for pan in Self.pans {
            for volume: Float in [1, 0.5] {
                let engine = try makeEngine()
                let track = try engine.makeTrack(try monoSound(frames, rampValue))
                try track.setPan(pan)
                try track.setVolume(volume)
                try track.play(at: track.engine.time(frame: 0))
                let mix = render(engine, frames: 400, block: 128)
                let g = Pan.mono(Double(pan))
                let v = Double(volume)
                let label = "mono pan \(pan) volume \(volume)"
                assertChannel(mix.left, { $0 < frames ? v * rampValue($0) * g.l : 0 }, 0..<400, label + " L")
                assertChannel(mix.right, { $0 < frames ? v * rampValue($0) * g.r : 0 }, 0..<400, label + " R")
            }
        }
    }

    func testMonoPanEndpointsAreExact() throws {
        // pan −1: L = s·cos 0 = s exactly, R = s·sin 0 = 0; pan 0: both s·√½.
        let engine = try makeEngine()
        let sound = try monoSound(100, rampValue)
        let a = try engine.makeTrack(sound)
        try a.setPan(-1)
        try a.play(at: a.engine.time(frame: 0))
        let mix = render(engine, frames: 100, block: 100)
        for i in 0..<100 {
            XCTAssertEqual(mix.left[i], Float(rampValue(i)), "L[\(i)] must be the plain sample")
            XCTAssertEqual(mix.right[i], 0, "R[\(i)] must be silent")
        }
    }

    func testStereoPanLawAtEveryPan() throws {
        let frames = 300
        let l: (Int) -> Double = rampValue
        let r: (Int) -> Double = { Double(Float(-0.25 + Double($0 % 7) / 50)) }
        for pan in Self.pans {
            for volume: Float in [1, 0.7] {
                let engine = try makeEngine()
                let track = try engine.makeTrack(try stereoSound(frames, left: l, right: r))
                try track.setPan(pan)
                try track.setVolume(volume)
                try track.play(at: track.engine.time(frame: 0))
                let mix = render(engine, frames: 400, block: 96)
                let v = Double(volume)
                let label = "stereo pan \(pan) volume \(volume)"
                assertChannel(mix.left, { $0 < frames ? Pan.stereo(Double(pan), v * l($0), v * r($0)).l : 0 },
                              0..<400, label + " L")
                assertChannel(mix.right, { $0 < frames ? Pan.stereo(Double(pan), v * l($0), v * r($0)).r : 0 },
                              0..<400, label + " R")
            }
        }
    }

    func testStereoCentreIsIdentity() throws {
        // pan 0 on a stereo source: x = 1, L = inL + inR·cos(π/2) = inL, R = inR·sin(π/2) = inR.
        let engine = try makeEngine()
        let track = try engine.makeTrack(try stereoSound(64, left: rampValue, right: { -rampValue($0) }))
        try track.play(at: track.engine.time(frame: 0))
        let mix = render(engine, frames: 64, block: 64)
        for i in 0..<64 {
            XCTAssertEqual(Double(mix.left[i]), rampValue(i), accuracy: 1e-7)
            XCTAssertEqual(Double(mix.right[i]), -rampValue(i), accuracy: 1e-7)
        }
    }

    func testHardPansAndStereoCentreAreExact() throws {
        // cos(π/2) must be exactly 0: no −330 dB leak into the far channel, and a centred stereo source
        // passes through bit-exactly.
        var rng = SplitMix64(seed: 3)
        let l = (0..<64).map { _ in Double(Float.random(in: -1...1, using: &rng)) }
        let r = (0..<64).map { _ in Double(Float.random(in: -1...1, using: &rng)) }
        func run(_ stereo: Bool, _ pan: Float) throws -> Mix {
            let engine = try makeEngine()
            let sound = stereo ? try stereoSound(64, left: { l[$0] }, right: { r[$0] }) : try monoSound(64) { l[$0] }
            let t = try engine.makeTrack(sound)
            try t.setPan(pan)
            try t.play(at: t.engine.time(frame: 0))
            return render(engine, frames: 64, block: 64)
        }
        let monoRight = try run(false, 1), monoLeft = try run(false, -1)
        let centre = try run(true, 0), stereoLeft = try run(true, -1), stereoRight = try run(true, 1)
        for i in 0..<64 {
            XCTAssertEqual(monoRight.left[i].bitPattern, Float(0).bitPattern, "mono pan 1: L silent")
            XCTAssertEqual(monoRight.right[i], Float(l[i]))
            XCTAssertEqual(monoLeft.right[i].bitPattern, Float(0).bitPattern, "mono pan −1: R silent")
            XCTAssertEqual(monoLeft.left[i], Float(l[i]))
            XCTAssertEqual(centre.left[i], Float(l[i]), "stereo pan 0: L = inL")
            XCTAssertEqual(centre.right[i], Float(r[i]), "stereo pan 0: R = inR")
            XCTAssertEqual(stereoLeft.left[i], Float(l[i]) + Float(r[i]), "stereo pan −1: L = inL + inR")
            XCTAssertEqual(stereoLeft.right[i].bitPattern, Float(0).bitPattern, "stereo pan −1: R silent")
            XCTAssertEqual(stereoRight.left[i].bitPattern, Float(0).bitPattern, "stereo pan 1: L silent")
            XCTAssertEqual(stereoRight.right[i], Float(r[i]) + Float(l[i]), "stereo pan 1: R = inR + inL")
        }
    }

    func testOutputIsThePlainSumOfVoices() throws {
        // Three tracks summing past full scale: no master gain, no limiter, no clipping in float.
        let engine = try makeEngine()
        let pans: [Float] = [-0.5, 0.3, 1]
        var tracks: [Track] = []
        for (k, pan) in pans.enumerated() {
            let t = try engine.makeTrack(try monoSound(200) { _ in 0.9 - 0.1 * Double(k) })
            try t.setPan(pan)
            tracks.append(t)
        }
        try engine.play(tracks, at: engine.time(frame: 0))
        let mix = render(engine, frames: 200, block: 200)
        var el = 0.0, er = 0.0
        for (k, pan) in pans.enumerated() {
            let s = Double(Float(0.9 - 0.1 * Double(k)))
            el += s * Pan.mono(Double(pan)).l
            er += s * Pan.mono(Double(pan)).r
        }
        XCTAssertGreaterThan(er, 1, "the scene must exceed full scale to prove nothing limits it")
        assertChannel(mix.left, { _ in el }, 0..<200, "sum L")
        assertChannel(mix.right, { _ in er }, 0..<200, "sum R")
    }
}
