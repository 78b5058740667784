import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

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
        try track.setNumberOfLoops(loops)
        try track.setRate(rate)
        try track.setCurrentTime(Double(offset) / sound.sampleRate)
        if let region { try track.setLoopRegion(frames: region.0, region.1) }
        try track.play(at: track.engine.time(frame: 7))
        return Ensemble_render(engine, frames: frames, block: block)
    }

    private func Ensemble_render(_ engine: Engine, frames: Int, block: Int) -> Mix {
        EnsembleTestSupport.render(engine, frames: frames, block: block)
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
                assertSameBits(got.left, expected.left, "rate \(rate), block \(block)")
                assertSameBits(got.right, expected.right, "rate \(rate), block \(block)")
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
        assertSameBits(got.left, reference.left, "the smpl loop is the track's region")
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

    // MARK: AIFF MARK + INST, CAF mark

    private func be(_ v: UInt64, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> (8 * (n - 1 - $0))) } }

    /// A 16-bit mono AIFF at 48 kHz with markers (id, position, name) and an INST sustain loop.
    private func aiff(_ samples: [Int16], markers: [(Int16, UInt32, String)], sustain: (mode: Int16, begin: Int16, end: Int16)?) -> [UInt8] {
        var comm = be(1, 2) + be(UInt64(samples.count), 4) + be(16, 2)
        comm += [0x40, 0x0E, 0xBB, 0x80, 0, 0, 0, 0, 0, 0]   // 48000 as an 80-bit extended
        var mark = be(UInt64(markers.count), 2)
        for (id, position, name) in markers {
            mark += be(UInt64(UInt16(bitPattern: id)), 2) + be(UInt64(position), 4) + [UInt8(name.utf8.count)] + Array(name.utf8)
            if (name.utf8.count + 1) % 2 == 1 { mark += [0] }
        }
        var body = Array("AIFF".utf8)
        body += Array("COMM".utf8) + be(UInt64(comm.count), 4) + comm
        body += Array("MARK".utf8) + be(UInt64(mark.count), 4) + mark
        if let sustain {
            var inst: [UInt8] = [60, 0, 0, 127, 1, 127] + be(0, 2)
            inst += be(UInt64(UInt16(bitPattern: sustain.mode)), 2) + be(UInt64(UInt16(bitPattern: sustain.begin)), 2)
                + be(UInt64(UInt16(bitPattern: sustain.end)), 2)
            inst += be(0, 6)   // release loop: none
            body += Array("INST".utf8) + be(UInt64(inst.count), 4) + inst
        }
        let ssnd = be(0, 4) + be(0, 4) + samples.flatMap { be(UInt64(UInt16(bitPattern: $0)), 2) }
        body += Array("SSND".utf8) + be(UInt64(ssnd.count), 4) + ssnd
        return Array("FORM".utf8) + be(UInt64(body.count), 4) + body
    }

    func testAIFFSustainLoopFromMarkersIsTheRegion() throws {
        let s = Self.samples.map { Int16($0 * 60000) }
        let path = try dir.write(aiff(s, markers: [(1, 250, "start"), (7, 640, "end"), (3, 10, "x")],
                                      sustain: (1, 1, 7)), to: "looped.aiff")
        let sound = try Sound(contentsOf: path)
        XCTAssertEqual(sound.frameCount, 1000)
        XCTAssertEqual(sound.loopPoints?.start, 250)
        XCTAssertEqual(sound.loopPoints?.end, 640)
        // Markers without an INST loop, or with play mode 0 (no looping): no loop points.
        XCTAssertNil(try Sound(contentsOf: try dir.write(aiff(s, markers: [(1, 250, "a"), (2, 640, "b")], sustain: nil),
                                                         to: "marks.aiff")).loopPoints)
        XCTAssertNil(try Sound(contentsOf: try dir.write(aiff(s, markers: [(1, 250, "a"), (2, 640, "b")], sustain: (0, 1, 2)),
                                                         to: "noloop.aiff")).loopPoints)
        // The loop is the track's region: the output is [0, 640) then [250, 640) twice, sample for sample.
        let f = (0..<1000).map { sound.sample(channel: 0, frame: $0) }
        let written = Array(f[0..<640]) + Array(f[250..<640]) + Array(f[250..<640])
        let reference = try render(try monoSound(written.count) { Double(written[$0]) }, offset: 0, loops: 0, rate: 1,
                                   region: nil, frames: 2000, block: 512)
        let got = try render(sound, offset: 0, loops: 2, rate: 1, region: nil, frames: 2000, block: 512)
        assertSameBits(got.left, reference.left)
    }

    /// A float32 mono CAF at 48 kHz with a `mark` chunk of (type, frame) markers.
    private func caf(_ samples: [Float], markers: [(String, Double)]) -> [UInt8] {
        var bytes = Array("caff".utf8) + be(1, 2) + be(0, 2)
        let desc = be(Double(48000).bitPattern, 8) + Array("lpcm".utf8) + be(1, 4) + be(4, 4) + be(1, 4) + be(1, 4) + be(32, 4)
        bytes += Array("desc".utf8) + be(UInt64(desc.count), 8) + desc
        var mark = be(0, 4) + be(UInt64(markers.count), 4)
        for (i, (type, position)) in markers.enumerated() {
            mark += Array(type.utf8) + be(position.bitPattern, 8) + be(UInt64(i + 1), 4) + be(0, 8) + be(0, 4)
        }
        bytes += Array("mark".utf8) + be(UInt64(mark.count), 8) + mark
        let data = be(0, 4) + samples.flatMap { be(UInt64($0.bitPattern), 4) }
        bytes += Array("data".utf8) + be(UInt64(data.count), 8) + data
        return bytes
    }

    func testCAFSustainLoopMarkersAreRead() throws {
        let s = Self.samples.map { Float($0) }
        let sound = try Sound(contentsOf: try dir.write(caf(s, markers: [("rbeg", 0), ("slbg", 120), ("slen", 880), ("rend", 1000)]),
                                                        to: "sustain.caf"))
        XCTAssertEqual(sound.frameCount, 1000)
        XCTAssertEqual(sound.sample(channel: 0, frame: 5), s[5])
        XCTAssertEqual(sound.loopPoints?.start, 120)
        XCTAssertEqual(sound.loopPoints?.end, 880)
        let region = try Sound(contentsOf: try dir.write(caf(s, markers: [("rbeg", 100), ("rend", 300)]), to: "region.caf"))
        XCTAssertEqual(region.loopPoints?.start, 100)
        XCTAssertEqual(region.loopPoints?.end, 300)
        XCTAssertNil(try Sound(contentsOf: try dir.write(caf(s, markers: []), to: "plain.caf")).loopPoints)
        let track = try makeEngine().makeTrack(sound)
        XCTAssertEqual(track.loopRegionFrames?.start, 120)
    }
}
