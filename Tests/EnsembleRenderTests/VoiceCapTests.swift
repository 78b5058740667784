import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The global sounding-voice cap: which voice gives way (lowest priority, then quietest, then oldest, the
/// newcomer included), its fade; a track that gives way goes virtual (it ends on its natural end, `.finished`,
/// unless a place frees first), an effect is stolen: exactly one completion with reason `stolen`.
final class VoiceCapTests: XCTestCase {
    private func engine(cap: Int, block: Int = 4096) throws -> Engine {
        var c = Engine.Configuration()
        c.maxSoundingVoices = cap
        c.smoothingTime = 0.005 // 240-frame steal fade
        c.maxBlockFrames = block
        return try Engine(configuration: c)
    }

    private struct Spec {
        var priority: Int
        var volume: Float = 1
        var start: Int64
        var pan: Float = 1
    }

    /// Plays a 0.5 DC track per spec and renders; returns the mix and each track's (frame, reason) ends.
    private func run(cap: Int, _ specs: [Spec], block: Int = 512, frames: Int = 6000) throws
        -> (Mix, [[TrackEnd]], Engine) {
        let e = try engine(cap: cap)
        let sound = try monoSound(5000) { _ in 0.5 }
        var recorders: [Recorder<TrackEnd>] = []
        var tracks: [Track] = []
        for spec in specs {
            let t = try e.makeTrack(sound)
            try t.setPriority(spec.priority)
            try t.setVolume(spec.volume)
            try t.setPan(spec.pan)
            let r = Recorder<TrackEnd>()
            t.onFinish = { r.append($0) }
            try t.play(at: t.engine.time(frame: spec.start))
            recorders.append(r)
            tracks.append(t)
        }
        let mix = render(e, frames: frames, block: block)
        e.waitForEvents()
        withExtendedLifetime(tracks) {}
        return (mix, recorders.map(\.values), e)
    }

    func testLowestPriorityGivesWayWithAFade() throws {
        // A (left only) has the lowest priority: C's start at 1000 takes A's place. A track goes virtual rather
        // than ending: silent from the end of its fade, it still ends on its natural end (5000), before B's end
        // (5100) would free a place for it.
        let specs = [Spec(priority: 100, start: 0, pan: -1), Spec(priority: 200, start: 100), Spec(priority: 150, start: 1000)]
        let (mix, ends, _) = try run(cap: 2, specs)
        XCTAssertEqual(ends[0].map(\.time.frame), [5000])
        XCTAssertEqual(ends[0].map(\.reason), [.finished])
        XCTAssertEqual(ends[1].map(\.reason), [.finished])
        XCTAssertEqual(ends[2].map(\.reason), [.finished])
        XCTAssertEqual(mix.left[999], 0.5)
        XCTAssertEqual(Double(mix.left[1120]), 0.25, accuracy: 1e-6, "halfway down the 240-frame fade")
        XCTAssertTrue(mix.left[1240...].allSatisfy { $0 == 0 }, "virtual until its end")
        for block in [64, 1000] {
            let other = try run(cap: 2, specs, block: block).0
            assertSameBits(other.left, mix.left)
            assertSameBits(other.right, mix.right)
        }
    }

    func testQuietestThenOldestAmongEqualPriorities() throws {
        // All right only (pan 1): which voice is left out shows in the sum once the 240-frame fade is over.
        let (quietMix, quiet, _) = try run(cap: 2, [Spec(priority: 128, volume: 0.8, start: 0),
                                                    Spec(priority: 128, volume: 0.3, start: 10),
                                                    Spec(priority: 128, start: 500)])
        XCTAssertEqual(Double(quietMix.right[1000]), 0.5 * 0.8 + 0.5, accuracy: 1e-6, "the quietest (0.3) went virtual")
        XCTAssertEqual(quiet[1].map(\.reason), [.finished], "a virtual track ends on its natural end")
        XCTAssertEqual(quiet[1].map(\.time.frame), [5010])
        XCTAssertEqual(quiet[0].map(\.reason), [.finished])
        let (oldMix, old, _) = try run(cap: 2, [Spec(priority: 128, start: 20), Spec(priority: 128, start: 10),
                                                Spec(priority: 128, start: 500)])
        XCTAssertEqual(Double(oldMix.right[739]), 1 + 0.5 / 240, accuracy: 1e-6, "the oldest fades from 500 to 740")
        XCTAssertEqual(oldMix.right[740], 1, "the oldest of equals (started on 10) goes")
        XCTAssertEqual(old[1].map(\.time.frame), [5010])
        XCTAssertEqual(old[0].map(\.reason), [.finished])
    }

    func testNewcomerWithTheLowestPriorityStartsVirtualUntilAPlaceFrees() throws {
        // B starts held by the cap on 300; A's end on 5000 frees the place, and B comes back on the next
        // virtual-voice update (5120 = 5 × 1024), fading in over 240 frames, until its own end on 5300.
        let (mix, ends, _) = try run(cap: 1, [Spec(priority: 200, start: 0), Spec(priority: 10, start: 300, pan: -1)])
        XCTAssertEqual(ends[1].map(\.time.frame), [5300])
        XCTAssertEqual(ends[1].map(\.reason), [.finished])
        XCTAssertEqual(ends[0].map(\.reason), [.finished])
        XCTAssertTrue(mix.left[..<5121].allSatisfy { $0 == 0 }, "silent until it comes back")
        XCTAssertEqual(Double(mix.left[5180]), 0.5 * 60 / 240, accuracy: 1e-6)
        XCTAssertEqual(Double(mix.left[5299]), 0.5 * 179 / 240, accuracy: 1e-6, "ends during its fade-in")
    }

    func testEffectsCompeteUnderTheCapAndEndOnce() throws {
        let e = try engine(cap: 2)
        let fx = try e.registerEffect(try monoSound(2000) { _ in 0.25 })
        let reasons = Recorder<EndReason>()
        for (k, p) in [50, 255, 60, 255].enumerated() {
            try e.fire(fx, at: e.time(frame: Int64(k * 100)), priority: p) { reasons.append($0.reason) }
        }
        _ = render(e, frames: 4000, block: 256)
        e.waitForEvents()
        let got = reasons.values
        XCTAssertEqual(got.count, 4, "exactly one completion per voice")
        XCTAssertEqual(got.filter { $0 == .stolen }.count, 2)
        XCTAssertEqual(got.filter { $0 == .finished }.count, 2)
        XCTAssertThrowsError(try e.fire(fx, priority: 256))
    }

    func testNoCapMeansNoStealing() throws {
        let ends = try run(cap: 0, (0..<5).map { Spec(priority: $0, start: Int64($0) * 10) }).1
        XCTAssertTrue(ends.allSatisfy { $0.map(\.reason) == [.finished] })
    }

    func testStealingAllocatesNothing() throws {
        let e = try engine(cap: 3, block: 512)
        let fx = try e.registerEffect(try monoSound(3000) { _ in 0.1 })
        let track = try e.makeTrack(try monoSound(48000) { _ in 0.2 })
        try track.setPriority(255)
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: 512)
        defer { left.deallocate(); right.deallocate() }
        try e.fire(fx, at: e.time(frame: 0))
        for _ in 0..<4 { e.render(left: left, right: right, frames: 256) }
        let base = e.currentFrame
        try track.play(at: track.engine.time(frame: base + 10))
        for k in 0..<10 { try e.fire(fx, at: e.time(frame: base + 50 + Int64(k) * 97), priority: k * 20) }
        var total: UInt64 = 0
        for k in 0..<16 { total += renderCountingAllocations(e, k, left: left, right: right, frames: 256) }
        XCTAssertEqual(total, 0, "render allocated \(total) times")
    }

    // MARK: Scenes

    func testSceneMaxVoicesAndPriorities() throws {
        let dir = try TemporaryDirectory()
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.5, count: 960), rate: 48000).bytes, to: "tone.wav")
        let path = try dir.write(Array("""
        { "maxVoices": 1,
          "tracks": [ {"name": "bed", "file": "tone.wav", "priority": 10},
                      {"name": "lead", "file": "tone.wav", "start": 0.005, "priority": 200} ],
          "effects": [ {"name": "blip", "file": "tone.wav", "at": 0.01, "priority": 0} ] }
        """.utf8), to: "cap.json")
        let out = dir.file("out.wav"), events = dir.file("events.jsonl")
        let result = try runProcess(try ensembleExecutable(), ["render", path, "-o", out, "--events", events])
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\n")
        let decoded = try lines.map { try JSONDecoder().decode(SceneEvent.self, from: Data($0.utf8)) }
        // The bed gives way to the lead on 240 and goes virtual; it ends on its own end, 960.
        XCTAssertTrue(decoded.contains(SceneEvent(event: .trackFinished, name: "bed", frame: 960, reason: .finished)), "\(decoded)")
        XCTAssertTrue(decoded.contains(SceneEvent(event: .effectCompleted, name: "blip", frame: 480, reason: .stolen)))
        XCTAssertTrue(decoded.contains(SceneEvent(event: .trackFinished, name: "lead", frame: 1200, reason: .finished)))

        func rejected(_ json: String, _ key: String) {
            do {
                _ = try Scene.parse(Data(json.utf8), folder: "/", path: "s.json")
                XCTFail("accepted \(json)")
            } catch {
                XCTAssertTrue(error.message.contains(key), error.message)
            }
        }
        rejected(#"{"maxVoices":0,"tracks":[{"file":"a.wav"}]}"#, "maxVoices")
        rejected(#"{"maxVoices":1.5,"tracks":[{"file":"a.wav"}]}"#, "maxVoices")
        rejected(#"{"tracks":[{"file":"a.wav","priority":256}]}"#, "tracks[0].priority")
        rejected(#"{"effects":[{"file":"a.wav","priority":-1}]}"#, "effects[0].priority")
    }
}
