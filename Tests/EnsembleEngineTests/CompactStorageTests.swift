import CAllocationCounter
import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Sounds kept as 16-bit PCM (`Sound.Storage.int16`): half the memory of Float, and the same bits out through
/// every resampler, loop, loop region, seek, late start, pitch-preserving rate and 3D position.
final class CompactStorageTests: XCTestCase {
    static func files(_ dir: TemporaryDirectory) throws -> [String] {
        [try TestFiles.makeFile(dir, "s", container: "wav", codec: .pcm16, seconds: 0.6, rate: 44100, channels: 2),
         try TestFiles.makeFile(dir, "m", container: "aiff", codec: .pcm16, seconds: 0.4, rate: 48000, channels: 1)]
    }

    func testSixteenBitFilesAreHeldAsInt16WithTheirOwnSamples() throws {
        let dir = try TemporaryDirectory()
        for path in try Self.files(dir) {
            let compact = try Sound(contentsOf: path)
            let float = try Sound(contentsOf: path, storage: .float32)
            XCTAssertEqual(compact.storage, .int16)
            XCTAssertEqual(float.storage, .float32)
            XCTAssertEqual(compact.sampleBytes * 2, float.sampleBytes, "half the memory")
            let decoded = try AudioFile.decode(path: path)
            for c in 0..<decoded.channelCount {
                for i in stride(from: 0, to: decoded.frameCount, by: 97) {
                    XCTAssertEqual(compact.sample(channel: c, frame: i), decoded.channels[c][i])
                }
            }
        }
        // What is not 16-bit stays Float.
        let f32 = try TestFiles.makeFile(dir, "f", container: "wav", codec: .float32, seconds: 0.1, rate: 48000, channels: 1)
        XCTAssertEqual(try Sound(contentsOf: f32).storage, .float32)
        XCTAssertEqual(try Sound(contentsOf: fixture("mp3/sine440-mono-cbr128.mp3")).storage, .float32)
    }

    /// Renders one configuration of tracks on a sound held each way; the two must be equal bit for bit.
    static func render(_ path: String, _ storage: Sound.StoragePreference, block: Int,
                       configure: (Engine, Sound) throws -> [Track]) throws -> [Float] {
        var c = Engine.Configuration()
        c.maxBlockFrames = 1024
        let engine = try Engine(configuration: c)
        let sound = try Sound(contentsOf: path, storage: storage)
        let tracks = try configure(engine, sound)
        var out = [Float](repeating: 0, count: 2 * 60_000)
        out.withUnsafeMutableBufferPointer { o in
            var done = 0, k = 0
            while done < 60_000 {
                let n = min(block, 60_000 - done)
                engine.pumpCommands()
                if k == 20 { do { try tracks.first?.setCurrentTime(0.05) } catch { XCTFail("seek: \(error)") } }   // a seek while playing
                engine.render(interleaved: o.baseAddress! + 2 * done, frames: n)
                done += n
                k += 1
            }
        }
        withExtendedLifetime(tracks) {}
        return out
    }

    /// Every way a voice reads a sound: the three resamplers at rates 1, 1.37, 0.71 and 2, loops, a loop region,
    /// a start offset, a seek while playing (in `render`), pitch preservation, a moving and a still 3D source, a
    /// late start.
    static func everyPath(_ quality: ResamplerQuality) -> (Engine, Sound) throws -> [Track] {
        { engine, sound in
            var tracks: [Track] = []
            for (i, rate) in [Float(1), 1.37, 0.71, 2].enumerated() {
                let t = try engine.makeTrack(sound)
                t.resampler = quality
                try t.setRate(rate)
                try t.setPan(Float(i) * 0.3 - 0.4)
                try t.setNumberOfLoops(i == 0 ? 2 : 1)
                if i == 1 { try t.setLoopRegion(start: 0.1, end: 0.25) }
                if i == 2 { try t.setCurrentTime(0.2) }
                tracks.append(t)
            }
            let stretched = try engine.makeTrack(sound)
            stretched.rateMode = .preservePitch
            try stretched.setRate(1.25)
            tracks.append(stretched)
            let positioned = try engine.makeTrack(sound)
            try positioned.setSpatial(SpatialSource(position: Vector3(2, 0, -1), velocity: Vector3(5, 0, 0)))
            tracks.append(positioned)
            let still = try engine.makeTrack(sound)
            try still.setSpatial(SpatialSource(position: Vector3(-1, 0, -1)))
            tracks.append(still)
            try engine.play(tracks, atFrame: 300)
            let late = try engine.makeTrack(sound)
            try late.play(at: engine.time(frame: -2000))   // a late start: whole, from the first block
            tracks.append(late)
            return tracks
        }
    }

    /// Renders `path` held compact and as Float through `everyPath` with each resampler and two block sizes; the
    /// two must be equal bit for bit.
    static func assertSameBitsAsFloat(_ path: String, qualities: [ResamplerQuality] = [.sinc, .cubic, .linear],
                                      blocks: [Int] = [512, 1000],
                                      file: StaticString = #filePath, line: UInt = #line) throws {
        for quality in qualities {
            for block in blocks {
                let compact = try render(path, .compact, block: block, configure: everyPath(quality))
                let float = try render(path, .float32, block: block, configure: everyPath(quality))
                XCTAssertGreaterThan(float.map(abs).max() ?? 0, 0.05, file: file, line: line)
                assertSameBits(compact, float, "\(path) \(quality) block \(block)", file: file, line: line)
            }
        }
    }

    /// Each file through the kernels of one block size (each kernel once); every resampler at both block sizes
    /// for both files: `CompactStorageLongTests`.
    func testSameBitsAsFloatThroughEveryPath() throws {
        let dir = try TemporaryDirectory()
        let paths = try Self.files(dir)
        try Self.assertSameBitsAsFloat(paths[0], qualities: [.sinc, .linear], blocks: [512])
        try Self.assertSameBitsAsFloat(paths[1], qualities: [.cubic], blocks: [1000])
    }

    func testCompactVoicesAllocateNothing() throws {
        let dir = try TemporaryDirectory()
        let path = try Self.files(dir)[0]
        let engine = try Engine(configuration: Engine.Configuration())
        let sound = try Sound(contentsOf: path)
        let tracks = try (0..<4).map { i -> Track in
            let t = try engine.makeTrack(sound)
            try t.setRate([1, 1.5, 0.8, 1.1][i])
            try t.setNumberOfLoops(-1)
            return t
        }
        try engine.play(tracks, atFrame: 0)
        Self.assertRenderAllocatesNothing(engine)
    }

    /// Renders one block to get the tracks going, then counts the allocations of 100 more.
    static func assertRenderAllocatesNothing(_ engine: Engine, file: StaticString = #filePath, line: UInt = #line) {
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 512)
        defer { buffer.deallocate() }
        engine.pumpCommands()
        engine.render(interleaved: buffer, frames: 512)
        var total: UInt64 = 0
        for _ in 0..<100 {
            allocation_counter_start()
            engine.render(interleaved: buffer, frames: 512)
            total += allocation_counter_stop()
        }
        XCTAssertEqual(total, 0, file: file, line: line)
    }
}

/// `CompactStorageTests.testSameBitsAsFloatThroughEveryPath` with every resampler at both block sizes for both
/// files (the long suite: `requireLongTests`).
final class CompactStorageLongTests: XCTestCase {
    override func setUpWithError() throws { try requireLongTests() }

    func testSameBitsAsFloatThroughEveryPathWithEveryResamplerAndBlockSize() throws {
        let dir = try TemporaryDirectory()
        for path in try CompactStorageTests.files(dir) { try CompactStorageTests.assertSameBitsAsFloat(path) }
    }
}
