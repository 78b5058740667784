import CAllocationCounter
import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// The lanes' IMA4 window cache (`IMA4WindowCache`): voices of one IMA4 sound playing in step share a decoded window,
/// and the mix has the same bytes with the cache on or off, for any block size and thread count, and the bytes of
/// the same sound decoded ahead to Float.
final class IMA4WindowCacheTests: XCTestCase {
    /// A crowd of one stereo and one mono IMA4 sound: eight voices of each started together at rate 1 (in step),
    /// three a few frames later (inside the first voices' windows, or not), two at rate 1.5 together, one looping a
    /// region, one panned hard.
    private func crowd(_ engine: Engine, _ sounds: [Sound]) throws -> [Track] {
        var tracks: [Track] = []
        for sound in sounds {
            var together: [Track] = []
            for i in 0..<8 {
                let t = try engine.makeTrack(sound)
                try t.setVolume(0.1 + 0.05 * Float(i))
                try t.setPan(Float(i) * 0.25 - 1)
                try t.setNumberOfLoops(-1)
                together.append(t)
            }
            try engine.play(together, atFrame: 0)
            tracks += together
            for (k, offset) in [3, 40, 700].enumerated() {
                let t = try engine.makeTrack(sound)
                try t.setPan(Float(k) * 0.5 - 0.5)
                try t.setNumberOfLoops(-1)
                try t.play(at: engine.time(frame: Int64(offset)))
                tracks.append(t)
            }
            var fast: [Track] = []
            for _ in 0..<2 {
                let t = try engine.makeTrack(sound)
                try t.setRate(1.5)
                try t.setNumberOfLoops(-1)
                fast.append(t)
            }
            try engine.play(fast, atFrame: 100)
            tracks += fast
            let region = try engine.makeTrack(sound)
            try region.setLoopRegion(start: 0.05, end: 0.12)
            try region.setNumberOfLoops(-1)
            try region.play(at: engine.time(frame: 0))
            tracks.append(region)
        }
        return tracks
    }

    private func render(_ paths: [String], storage: Sound.StoragePreference, cache: Bool, block: Int, threads: Int)
        throws -> (samples: [Float], hits: Int) {
        var c = Engine.Configuration()
        c.maxBlockFrames = 4096
        c.renderThreads = threads
        let engine = try Engine(configuration: c)
        engine.mixer.ima4WindowCacheEnabled = cache
        let sounds = try paths.map { try Sound(contentsOf: $0, storage: storage) }
        let tracks = try crowd(engine, sounds)
        let frames = 30_000
        var out = [Float](repeating: 0, count: 2 * frames)
        out.withUnsafeMutableBufferPointer { o in
            var done = 0
            while done < frames {
                let n = min(block, frames - done)
                engine.pumpCommands()
                engine.render(interleaved: o.baseAddress! + 2 * done, frames: n)
                done += n
            }
        }
        withExtendedLifetime(tracks) {}
        return (out, engine.mixer.ima4WindowCacheCounts.hits)
    }

    private func files(_ dir: TemporaryDirectory) throws -> [String] {
        [try TestFiles.makeFile(dir, "s4", container: "caf", codec: .ima4, seconds: 0.3, rate: 48000, channels: 2),
         try TestFiles.makeFile(dir, "m4", container: "caf", codec: .ima4, seconds: 0.25, rate: 44100, channels: 1)]
    }

    func testCacheOnAndOffGiveTheBytesOfTheSoundDecodedToFloat() throws {
        let dir = try TemporaryDirectory()
        let paths = try files(dir)
        XCTAssertEqual(try paths.map { try Sound(contentsOf: $0).storage }, [.ima4, .ima4])
        let float = try render(paths, storage: .float32, cache: true, block: 1024, threads: 1).samples
        XCTAssertGreaterThan(float.map(abs).max() ?? 0, 0.05)
        for block in [1024, 1000, 512, 4096] {
            for threads in [1, 2] {
                let on = try render(paths, storage: .compact, cache: true, block: block, threads: threads)
                let off = try render(paths, storage: .compact, cache: false, block: block, threads: threads)
                XCTAssertGreaterThan(on.hits, 0, "block \(block), \(threads) threads: windows shared")
                XCTAssertEqual(off.hits, 0)
                let what = "block \(block), \(threads) threads"
                XCTAssertTrue(on.samples.map(\.bitPattern) == float.map(\.bitPattern), "cache on: \(what)")
                XCTAssertTrue(off.samples.map(\.bitPattern) == float.map(\.bitPattern), "cache off: \(what)")
            }
        }
    }

    func testInStepVoicesAllocateNothing() throws {
        let dir = try TemporaryDirectory()
        let engine = try Engine(configuration: Engine.Configuration())
        let sounds = try files(dir).map { try Sound(contentsOf: $0) }
        let tracks = try crowd(engine, sounds)
        CompactStorageTests.assertRenderAllocatesNothing(engine)
        XCTAssertGreaterThan(engine.mixer.ima4WindowCacheCounts.hits, 0)
        withExtendedLifetime(tracks) {}
    }
}
