import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The same scene renders to the same bytes whatever the block size.
final class BlockSizeTests: XCTestCase {
    /// A busy scene, entirely scheduled before rendering (so no command depends on when a block boundary
    /// falls): tracks with loops, rates, offsets, fades and pans; effects at odd frames with a steal;
    /// a scheduled stop. Returns the interleaved rendering.
    static func renderScene(block: Int, frames: Int = 12000, interleaved: Bool = false) throws -> [Float] {
        let engine = try makeEngine(effectPolyphony: 2)
        let ramp = try monoSound(700, rampValue)
        let stereo = try stereoSound(1234, left: { sin(Double($0) * 0.05) * 0.5 }, right: { rampValue($0 % 300) - 0.15 })
        let sr44 = try monoSound(2000, rate: 44100) { sin(Double($0) * 0.02) }

        let a = try engine.makeTrack(ramp)
        try a.setNumberOfLoops(5)
        try a.setPan(-0.5)
        try a.setRate(1.25)
        try a.setFadeIn(0.002)
        let b = try engine.makeTrack(stereo)
        try b.setNumberOfLoops(-1)
        try b.setPan(0.3)
        try b.setVolume(0.6)
        try b.setRate(0.75)
        try b.setFadeIn(0.004)
        try b.setFadeOut(0.003)
        let c = try engine.makeTrack(sr44)
        try c.setNumberOfLoops(2)
        try c.setCurrentTime(0.01)
        try c.setFadeOut(0.01)
        let d = try engine.makeTrack(ramp)
        try d.setPan(1)
        try d.setNumberOfLoops(3)
        try a.play(at: a.engine.time(frame: 1))
        try engine.play([b, c], at: engine.time(frame: 1001))
        try d.play(at: d.engine.time(frame: 4097))
        try b.stop(at: b.engine.time(frame: 9999))
        try d.stop(at: d.engine.time(frame: 5555))

        let fx = try engine.registerEffect(try monoSound(900) { Double(($0 * 37) % 101) / 200 - 0.25 })
        let fx2 = try engine.registerEffect(stereo)
        for (k, f) in [63, 333, 777, 2048, 2049, 4095, 6001].enumerated() {
            try engine.fire(fx, volume: 0.2 + 0.1 * Float(k % 4), pan: [-1, -0.5, 0, 0.3, 1][k % 5], at: engine.time(frame: Int64(f)))
        }
        try engine.fire(fx2, volume: 0.5, pan: -0.25, at: engine.time(frame: 3001))
        let stopped = try engine.fire(fx2, volume: 0.5, pan: 0.75, at: engine.time(frame: 7000))
        engine.stop(stopped) // stopped before it starts: never sounds

        if interleaved {
            var out = [Float](repeating: .nan, count: 2 * frames)
            out.withUnsafeMutableBufferPointer { p in
                var done = 0
                while done < frames {
                    let n = min(block, frames - done)
                    engine.render(interleaved: p.baseAddress! + 2 * done, frames: n)
                    done += n
                }
            }
            return out
        }
        let mix = render(engine, frames: frames, block: block)
        var out: [Float] = []
        out.reserveCapacity(2 * frames)
        for i in 0..<frames {
            out.append(mix.left[i])
            out.append(mix.right[i])
        }
        return out
    }

    func testSameBytesForEveryBlockSize() throws {
        let reference = try Self.renderScene(block: 64)
        XCTAssertGreaterThan(reference.filter { $0 != 0 }.count, 10000, "the scene must actually sound")
        XCTAssertFalse(reference.contains { $0.isNaN }, "every frame must be written")
        for block in [512, 4096, 1000, 333, 1] {
            let other = try Self.renderScene(block: block, frames: block == 1 ? 3000 : 12000)
            assertSameBits(other, Array(reference.prefix(other.count)), "block \(block) against block 64")
        }
    }

    func testInterleavedMatchesPlanar() throws {
        let planar = try Self.renderScene(block: 1000)
        let interleaved = try Self.renderScene(block: 1000, interleaved: true)
        XCTAssertEqual(planar.map(\.bitPattern), interleaved.map(\.bitPattern))
    }

    func testBlocksLargerThanMaxBlockFramesAreSplit() throws {
        // 4096-frame max block, one render call of 12000 frames.
        let reference = try Self.renderScene(block: 64)
        let big = try Self.renderScene(block: 12000)
        XCTAssertEqual(reference.map(\.bitPattern), big.map(\.bitPattern))
    }
}

/// The sum must not depend on which voice slot each sound happened to get: slots are handed out by the control
/// side and, when effects fire during playback, depend on when earlier effects' slots came back.
final class SummationOrderTests: XCTestCase {
    /// Renders five overlapping effects; with `permuted`, tracks first take five slots and give them back in
    /// the order 0, 2, 4, 1, 3, so the effects land in slots 3, 1, 4, 2, 0 instead of 0…4.
    private func renderEffects(permuted: Bool) throws -> Mix {
        let engine = try makeEngine(maxVoices: 64)
        let filler = try monoSound(10) { _ in 0 }
        if permuted {
            var tracks: [Track?] = try (0..<5).map { _ in try engine.makeTrack(filler) }
            for i in [0, 2, 4, 1, 3] { tracks[i] = nil }
        }
        // Values whose Float sums depend on the order of addition.
        let sounds = try [0.1, 1e-4, 0.3, 7e-3, 0.9].enumerated().map { i, v in
            try monoSound(200 + 40 * i) { k in v * (1 + Double(k % 7) / 3) }
        }
        for (i, s) in sounds.enumerated() {
            let effect = try engine.registerEffect(s)
            try engine.fire(effect, volume: 0.7, pan: Float(i) / 5 - 0.4, at: engine.time(frame: Int64(3 + 17 * i)))
        }
        return render(engine, frames: 512, block: 128)
    }

    func testSlotAssignmentDoesNotChangeTheBits() throws {
        let a = try renderEffects(permuted: false)
        let b = try renderEffects(permuted: true)
        XCTAssertNotNil(a.firstNonZero)
        let differing = (0..<a.count).first {
            a.left[$0].bitPattern != b.left[$0].bitPattern || a.right[$0].bitPattern != b.right[$0].bitPattern
        }
        XCTAssertNil(differing, "frame \(differing ?? -1) differs between slot assignments")
    }
}
