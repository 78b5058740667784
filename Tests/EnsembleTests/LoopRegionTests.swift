import XCTest
@testable import Ensemble

/// Loop regions: the first pass plays from the offset to loopEnd, then [loopStart, loopEnd) repeats, and the
/// result equals the same material written out explicitly, sample for sample.
final class LoopRegionTests: XCTestCase {
    /// Deterministic noise, so any misplaced sample shows.
    private static let samples: [Double] = {
        var x: UInt64 = 0x9E37_79B9_7F4A_7C15
        return (0..<1000).map { _ in
            x = x &* 6364136223846793005 &+ 1442695040888963407
            return Double(Int64(bitPattern: x >> 11) % 1_000_000) / 1_000_000 - 0.5
        }
    }()

    private func render(_ sound: Sound, offset: Int, loops: Int, rate: Float, region: (Int, Int)?,
                        frames: Int, block: Int) throws -> Mix {
        let engine = try makeEngine()
        let track = try engine.makeTrack(sound)
        track.numberOfLoops = loops
        track.rate = rate
        track.currentTime = Double(offset) / sound.sampleRate
        if let region { try track.setLoopRegion(frames: region.0, region.1) }
        try track.play(atFrame: 7)
        return Ensemble_render(engine, frames: frames, block: block)
    }

    private func Ensemble_render(_ engine: Engine, frames: Int, block: Int) -> Mix {
        EnsembleTests.render(engine, frames: frames, block: block)
    }

    func testRegionEqualsTheConcatenatedReference() throws {
        let s = Self.samples
        let sound = try monoSound(1000) { s[$0] }
        let start = 300, end = 700, offset = 100, loops = 3
        // The reference file: [0, end) then the region three more times; played from `offset` once.
        let written = Array(s[0..<end]) + Array(repeating: Array(s[start..<end]), count: loops).flatMap { $0 }
        let reference = try monoSound(written.count) { written[$0] }
        for rate: Float in [1, 0.73, 1.61] {
            let frames = Int(Double(written.count) / Double(rate)) + 200
            let expected = try render(reference, offset: offset, loops: 0, rate: rate, region: nil, frames: frames, block: 4096)
            for block in [64, 512, 1000, 4096] {
                let got = try render(sound, offset: offset, loops: loops, rate: rate, region: (start, end),
                                     frames: frames, block: block)
                XCTAssertEqual(got.left, expected.left, "rate \(rate), block \(block)")
                XCTAssertEqual(got.right, expected.right, "rate \(rate), block \(block)")
            }
            if rate == 1 {
                XCTAssertEqual(expected.endOfSound, 7 + written.count - offset)
                // At rate 1 the samples pass through: the region written out, times the pan gain.
                let g = Float(cos(Double.pi / 4))
                XCTAssertEqual(expected.left[7 + end - offset], Float(s[start]) * g, "first repeat starts at loopStart")
            }
        }
    }

    func testForeverRegionRepeatsUntilStopped() throws {
        let s = Self.samples
        let sound = try monoSound(1000) { s[$0] }
        let got = try render(sound, offset: 0, loops: -1, rate: 1, region: (900, 1000), frames: 5000, block: 512)
        let g = Float(cos(Double.pi / 4))
        for k in [0, 1, 17, 38] {
            XCTAssertEqual(got.left[7 + 1000 + 100 * k + 5], Float(s[905]) * g, "repeat \(k)")
        }
        XCTAssertEqual(got.endOfSound, 5000)
    }

    func testInvalidRegionsAreRejected() throws {
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(1000) { _ in 0.1 })
        XCTAssertThrowsError(try track.setLoopRegion(frames: 500, 500))
        XCTAssertThrowsError(try track.setLoopRegion(frames: -1, 500))
        XCTAssertThrowsError(try track.setLoopRegion(frames: 0, 1001))
        XCTAssertThrowsError(try track.setLoopRegion(start: 0.01, end: 1))
        try track.setLoopRegion(start: 0.001, end: 0.01)
        XCTAssertEqual(track.loopRegion?.start, 0.001)
        XCTAssertEqual(track.loopRegion?.end, 0.01)
        track.clearLoopRegion()
        XCTAssertNil(track.loopRegion)
    }

    // MARK: WAV smpl chunks and scenes

    private var dir: TemporaryDirectory!
    override func setUpWithError() throws { dir = try TemporaryDirectory() }
    override func tearDown() { dir = nil }

    /// A float WAV at 48 kHz with a `smpl` chunk whose first loop is [start, lastInclusive].
    private func wavWithLoop(_ samples: [Float], start: UInt32, lastInclusive: UInt32, name: String) throws -> String {
        var bytes = WAVBuilder.float32(samples, rate: 48000).bytes
        var smpl: [UInt8] = []
        smpl += le32(0) + le32(0) + le32(20833) + le32(60) + le32(0) + le32(0) + le32(0) + le32(1) + le32(0)
        smpl += le32(0) + le32(0) + le32(start) + le32(lastInclusive) + le32(0) + le32(0)
        bytes += Array("smpl".utf8) + le32(UInt32(smpl.count)) + smpl
        let riffSize = le32(UInt32(bytes.count - 8))
        for i in 0..<4 { bytes[4 + i] = riffSize[i] }
        return try dir.write(bytes, to: name)
    }

    func testSmplLoopPointsAreReadAndUsed() throws {
        let s = Self.samples.map { Float($0) }
        let path = try wavWithLoop(s, start: 200, lastInclusive: 599, name: "looped.wav")
        let sound = try Sound(contentsOf: path)
        XCTAssertEqual(sound.loopPoints?.start, 200)
        XCTAssertEqual(sound.loopPoints?.end, 600)
        let plain = try Sound(contentsOf: try dir.write(WAVBuilder.float32(s, rate: 48000).bytes, to: "plain.wav"))
        XCTAssertNil(plain.loopPoints)

        let written = Array(s[0..<600]) + Array(s[200..<600]) + Array(s[200..<600])
        let reference = try render(try monoSound(written.count) { Double(written[$0]) }, offset: 0, loops: 0, rate: 1,
                                   region: nil, frames: 2000, block: 512)
        let got = try render(sound, offset: 0, loops: 2, rate: 1, region: nil, frames: 2000, block: 512)
        XCTAssertEqual(got.left, reference.left, "the smpl loop is the track's region")
        // Played once, the whole file plays (the region only matters when the track loops).
        let once = try render(sound, offset: 0, loops: 0, rate: 1, region: nil, frames: 2000, block: 512)
        XCTAssertEqual(once.endOfSound, 7 + 1000)
        // Overridden.
        let other = try render(sound, offset: 0, loops: 1, rate: 1, region: (0, 1000), frames: 2100, block: 512)
        XCTAssertEqual(other.endOfSound, 7 + 2000)
    }

    func testSceneLoopKeys() throws {
        let s = Self.samples.map { Float($0) }
        _ = try dir.write(WAVBuilder.float32(s, rate: 48000).bytes, to: "noise.wav")
        let scenePath = try dir.write(Array("""
        { "tracks": [ { "file": "noise.wav", "loops": 2, "loopStart": 0.005, "loopEnd": 0.01 } ] }
        """.utf8), to: "loop.json")
        let out = dir.file("out.wav")
        let result = try runProcess(try ensembleExecutable(), ["render", scenePath, "-o", out])
        XCTAssertEqual(result.status, 0, result.stderr)
        let audio = try AudioFile.decode(path: out)
        // 480 frames, then [240, 480) twice: 960 frames, the scene's computed length.
        XCTAssertEqual(audio.frameCount, 960)
        let g = Float(cos(Double.pi / 4))
        XCTAssertEqual(audio.channels[0][480], s[240] * g)
        XCTAssertEqual(audio.channels[0][959], s[479] * g)

        func rejected(_ json: String, _ key: String) {
            do {
                _ = try Scene.parse(Data(json.utf8), folder: "/", path: "s.json")
                XCTFail("accepted \(json)")
            } catch {
                XCTAssertTrue(error.message.contains(key), error.message)
            }
        }
        rejected(#"{"tracks":[{"file":"a.wav","loopStart":2,"loopEnd":1}]}"#, "tracks[0].loopEnd")
        rejected(#"{"tracks":[{"file":"a.wav","loopStart":-1}]}"#, "tracks[0].loopStart")
        rejected(#"{"tracks":[{"file":"a.wav","loopStart":1,"stream":true}]}"#, "tracks[0].loopStart")
        rejected(#"{"tracks":[{"file":"a.wav","loopstart":1}]}"#, "tracks[0].loopstart")
    }
}
