import XCTest
import EnsembleTestSupport
@_spi(Testing) import Ensemble
@_spi(Testing) import EnsembleFormats
@_spi(Testing) import EnsembleRender
@_spi(Testing) import EnsembleEngine
@_spi(Testing) import EnsembleOutput
@_spi(Testing) import EnsembleScene

/// Virtual voices: a voice held by the cap or below `virtualThreshold` keeps its timeline unmixed and comes back,
/// faded in over the smoothing time (240 frames here), at the position it would have reached.
///
/// The sources are ramps whose sample at file frame i is i / 65536 (exact in Float), played at the output rate:
/// a mixed voice at full gain and hard left outputs exactly that, so every expectation below is the position the
/// voice should be at, computed by hand from its start frame (and its loop length).
final class VirtualVoiceTests: XCTestCase {
    private static let scale: Float = 65536

    private func engine(cap: Int = 0, threshold: Float = 0.001, block: Int = 4096) throws -> Engine {
        var c = Engine.Configuration()
        c.maxSoundingVoices = cap
        c.virtualThreshold = threshold
        c.smoothingTime = 0.005 // 240 frames
        c.maxBlockFrames = block
        return try Engine(configuration: c)
    }

    private func ramp(_ frames: Int) throws -> Sound {
        try monoSound(frames) { Double($0) / Double(Self.scale) }
    }

    private func constant(_ frames: Int) throws -> Sound {
        try monoSound(frames) { _ in 0.5 }
    }

    // MARK: The cap

    /// Cap 2, three tracks: the ramp (left, lowest priority) starts first; the two others (right) start on 1000 and
    /// take its place; the first of them is silent from 3000 (`stop(at:)`: its fade starts on 2760 and it stops
    /// counting there), so on the next update (3072 = 3 × 1024) the ramp comes back.
    private func capScene(cap: Int, block: Int) throws -> (Mix, [EngineEvent], Track, Track, Track) {
        let e = try engine(cap: cap, block: block)
        let low = try e.makeTrack(try ramp(20000)), a = try e.makeTrack(try constant(20000))
        let b = try e.makeTrack(try constant(20000))
        try low.setPriority(10)
        try low.setPan(-1)
        for t in [a, b] {
            try t.setPan(1)
            try t.setPriority(200)
        }
        let events = e.events()
        try low.play(at: e.time(frame: 0))
        try e.play([a, b], at: e.time(frame: 1000))
        try a.stop(at: e.time(frame: 3000))
        var virtualMidway = false, virtualAfter = true
        let mix = render(e, frames: 8000, block: block) { frame in
            if frame >= 2000 && frame < 2000 + Int64(block) {
                e.waitForEvents()
                virtualMidway = low.isVirtual
            }
        }
        e.waitForEvents()
        virtualAfter = low.isVirtual
        if block == 512 && cap > 0 {
            XCTAssertTrue(virtualMidway, "Track.isVirtual while held by the cap")
            XCTAssertFalse(virtualAfter, "and no longer once back")
        }
        return (mix, drainEventsBlocking(events, through: e), low, a, b)
    }

    func testCappedTrackComesBackWhereItWouldBe() throws {
        let (mix, events, low, a, _) = try capScene(cap: 2, block: 512)
        // Before the steal and after the fade-in, the ramp's samples are its positions: frame t plays frame t.
        for t in 0..<1000 { XCTAssertEqual(mix.left[t], Float(t) / Self.scale, "frame \(t)") }
        XCTAssertEqual(Double(mix.left[1120]), 1120 / 65536 * 0.5, accuracy: 1e-9, "halfway down the fade-out")
        XCTAssertTrue(mix.left[1240..<3073].allSatisfy { $0 == 0 }, "virtual: not mixed")
        XCTAssertEqual(Double(mix.left[3192]), 3192 / 65536 * 0.5, accuracy: 1e-9, "halfway up the fade-in")
        for t in 3312..<8000 { XCTAssertEqual(mix.left[t], Float(t) / Self.scale, "frame \(t)") }
        // The same frames of an uncapped render are the same samples.
        let free = try capScene(cap: 0, block: 512).0
        assertSameBits(Array(mix.left[3312...]), Array(free.left[3312...]))
        assertSameBits(Array(mix.left[..<1000]), Array(free.left[..<1000]))

        let lines = events.compactMap { event -> String? in
            switch event {
            case let .trackStarted(t, at, _): "start \(t === low ? "low" : "other") \(at.frame)"
            case let .trackVirtual(t, at, reason): "virtual \(t === low ? "low" : "other") \(at.frame) \(reason)"
            case let .trackAudible(t, at): "audible \(t === low ? "low" : "other") \(at.frame)"
            case let .trackEnded(t, at, reason, _) where t === a: "end a \(at.frame) \(reason)"
            default: nil
            }
        }
        // On 1000, the second newcomer's admission takes the ramp's place: its virtual event comes between the
        // two starts. The stopped track stops counting where its fade begins (2760): back on the next update.
        XCTAssertEqual(lines, ["start low 0", "start other 1000", "virtual low 1000 voiceCap", "start other 1000",
                               "end a 3000 stopped", "audible low 3072"])
    }

    /// Cap 1: A (right, priority 100) sounds; B (left ramp, priority 200) starts inaudible. B's volume rises on
    /// 1500: on the update on 2048 it wants back and, of higher priority, takes A's place (A held by the cap).
    /// B's volume falls on 3500: on the update on 4096 B goes virtual again and A comes back in the place it frees.
    private func displacementScene(block: Int) throws -> (Mix, [String]) {
        let e = try engine(cap: 1, block: block)
        let a = try e.makeTrack(try constant(20000)), b = try e.makeTrack(try ramp(20000))
        try a.setPriority(100)
        try a.setPan(1)
        try b.setPriority(200)
        try b.setPan(-1)
        try b.setVolume(0.0001)
        let events = e.events()
        try e.play([a, b], at: e.time(frame: 0))
        try b.setVolume(1, at: e.time(frame: 1500), ramp: 0)
        try b.setVolume(0.0001, at: e.time(frame: 3500), ramp: 0)
        let mix = render(e, frames: 6000, block: block)
        e.waitForEvents()
        let lines = drainEventsBlocking(events, through: e).compactMap { event -> String? in
            switch event {
            case let .trackStarted(t, at, _): "start \(t === a ? "A" : "B") \(at.frame)"
            case let .trackVirtual(t, at, reason): "virtual \(t === a ? "A" : "B") \(at.frame) \(reason)"
            case let .trackAudible(t, at): "audible \(t === a ? "A" : "B") \(at.frame)"
            default: nil
            }
        }
        return (mix, lines)
    }

    func testAVoiceComingBackDisplacesALowerPriorityOne() throws {
        let (mix, lines) = try displacementScene(block: 512)
        XCTAssertEqual(lines, ["start A 0", "start B 0", "virtual B 0 inaudible", "virtual A 2048 voiceCap",
                               "audible B 2048", "virtual B 4096 inaudible", "audible A 4096"])
        XCTAssertTrue(mix.left[..<2049].allSatisfy { $0 == 0 }, "B virtual from its start")
        for t in 2288..<3500 { XCTAssertEqual(mix.left[t], Float(t) / Self.scale, "B at its position, frame \(t)") }
        XCTAssertEqual(mix.right[2047], 0.5)
        XCTAssertEqual(Double(mix.right[2168]), 0.25, accuracy: 1e-6, "A halfway down its fade-out")
        XCTAssertTrue(mix.right[2288..<4097].allSatisfy { $0 == 0 }, "A held by the cap")
        XCTAssertEqual(Double(mix.right[4216]), 0.25, accuracy: 1e-6, "A halfway up its fade-in")
        XCTAssertTrue(mix.right[4336...].allSatisfy { $0 == 0.5 }, "A back")
        assertSameBits(try displacementScene(block: 1000).0.right, mix.right)
        assertSameBits(try displacementScene(block: 64).0.left, mix.left)
    }

    func testBlockSizesGiveTheSameBytes() throws {
        let reference = try capScene(cap: 2, block: 512).0
        for block in [64, 1000] {
            let other = try capScene(cap: 2, block: block).0
            assertSameBits(other.left, reference.left, "block \(block)")
            assertSameBits(other.right, reference.right, "block \(block)")
        }
        let inaudible = try loopScene(block: 512).0
        for block in [64, 1000] {
            assertSameBits(try loopScene(block: block).0.left, inaudible.left, "block \(block)")
        }
    }

    // MARK: Inaudible voices

    /// A ramp looping over 1000 frames, whose volume drops to 0.0005 (below −60 dB) on 600 and comes back to 1 on
    /// 2500: virtual from the update on 1024 (silent from 1264), across the loop points on 2000 and 3000, back on
    /// the update on 3072.
    private func loopScene(block: Int, threshold: Float = 0.001) throws -> (Mix, [EngineEvent], Track) {
        let e = try engine(threshold: threshold, block: block)
        let t = try e.makeTrack(try ramp(1000))
        try t.setNumberOfLoops(-1)
        try t.setPan(-1)
        let events = e.events()
        try t.play(at: e.time(frame: 0))
        try t.setVolume(0.0005, at: e.time(frame: 600), ramp: 0)
        try t.setVolume(1, at: e.time(frame: 2500), ramp: 0)
        let mix = render(e, frames: 5000, block: block)
        e.waitForEvents()
        return (mix, drainEventsBlocking(events, through: e), t)
    }

    func testLoopingTrackComesBackAtTheRightPass() throws {
        let (mix, events, _) = try loopScene(block: 512)
        for t in 0..<600 { XCTAssertEqual(mix.left[t], Float(t) / Self.scale) }
        XCTAssertEqual(Double(mix.left[700]), 0.0005 * 700 / 65536, accuracy: 1e-12, "quiet, still mixed")
        XCTAssertEqual(Double(mix.left[1144]), 0.0005 * 144 / 65536 * 0.5, accuracy: 1e-12, "halfway down, pass 2")
        XCTAssertTrue(mix.left[1264..<3073].allSatisfy { $0 == 0 }, "virtual from the end of its fade-out")
        // Back on 3072 in its fourth pass (3072 = 3 × 1000 + 72), full from 3312.
        XCTAssertEqual(Double(mix.left[3192]), 192 / 65536 * 0.5, accuracy: 1e-9)
        for t in 3312..<5000 { XCTAssertEqual(mix.left[t], Float(t % 1000) / Self.scale, "frame \(t)") }
        let never = try loopScene(block: 512, threshold: 0).0
        assertSameBits(Array(mix.left[3312...]), Array(never.left[3312...]), "as if it had never gone virtual")
        let times = events.compactMap { e -> String? in
            switch e {
            case let .trackVirtual(_, at, reason): "virtual \(at.frame) \(reason)"
            case let .trackAudible(_, at): "audible \(at.frame)"
            default: nil
            }
        }
        XCTAssertEqual(times, ["virtual 1024 inaudible", "audible 3072"])
    }

    func testThresholdHysteresisAndAnInaudibleStart() throws {
        // Starts at 0.0005: virtual from its first frame. 0.0015 on 1000 (between the threshold and twice it):
        // stays virtual. 0.0025 on 2000: back on 2048. Then 0.0015 again on 3000: stays mixed. Ends on 4000.
        let e = try engine(block: 256)
        let t = try e.makeTrack(try ramp(4000))
        try t.setPan(-1)
        try t.setVolume(0.0005)
        let ends = Recorder<TrackEnd>()
        t.onFinish = { ends.append($0) }
        let events = e.events()
        try t.play(at: e.time(frame: 0))
        try t.setVolume(0.0015, at: e.time(frame: 1000), ramp: 0)
        try t.setVolume(0.0025, at: e.time(frame: 2000), ramp: 0)
        try t.setVolume(0.0015, at: e.time(frame: 3000), ramp: 0)
        let mix = render(e, frames: 4500, block: 256)
        e.waitForEvents()
        XCTAssertTrue(mix.left[..<2049].allSatisfy { $0 == 0 })
        XCTAssertEqual(mix.left[2400], 0.0025 * 2400 / Self.scale)
        XCTAssertEqual(mix.left[3999], 0.0015 * 3999 / Self.scale, "still mixed at 0.0015")
        let times = drainEventsBlocking(events, through: e).compactMap { e -> String? in
            switch e {
            case let .trackStarted(_, at, _): "start \(at.frame)"
            case let .trackVirtual(_, at, reason): "virtual \(at.frame) \(reason)"
            case let .trackAudible(_, at): "audible \(at.frame)"
            case let .trackEnded(_, at, reason, _): "end \(at.frame) \(reason)"
            default: nil
            }
        }
        XCTAssertEqual(times, ["start 0", "virtual 0 inaudible", "audible 2048", "end 4000 finished"])
        XCTAssertEqual(ends.values.map(\.time.frame), [4000])
    }

    func testNaturalEndWhileVirtualIsOnItsFrame() throws {
        // 1500 frames at rate 1, silenced on 100: virtual from 1024, it still ends on 1500, finished.
        let e = try engine(block: 1000)
        let t = try e.makeTrack(try ramp(1500))
        let ends = Recorder<TrackEnd>()
        t.onFinish = { ends.append($0) }
        try t.play(at: e.time(frame: 0))
        try t.setVolume(0, at: e.time(frame: 100), ramp: 0)
        _ = render(e, frames: 3000, block: 1000)
        e.waitForEvents()
        XCTAssertEqual(ends.values.map(\.time.frame), [1500])
        XCTAssertEqual(ends.values.map(\.reason), [.finished])
    }

    func testPausedWhileVirtualResumesWhereItStopped() throws {
        // Virtual from its start (volume 0.0001); paused on 1500 (its 240-frame pause fade ends on 1740, cursor
        // there), turned up at once (ramp 0: a glide set while paused would run from the resume, HeldRampTests),
        // and played again on 3000: it resumes audible from file frame 1740, faded in.
        let e = try engine(block: 500)
        let t = try e.makeTrack(try ramp(20000))
        try t.setPan(-1)
        try t.setVolume(0.0001)
        let events = e.events()
        try t.play(at: e.time(frame: 0))
        let mix = render(e, frames: 5000, block: 500) { frame in
            if frame == 1500 { t.pause() }
            if frame == 2500 { do { try t.setVolume(1, ramp: 0) } catch { XCTFail("setVolume: \(error)") } }
            if frame == 3000 { t.play() }
        }
        e.waitForEvents()
        XCTAssertTrue(mix.left[..<3000].allSatisfy { $0 == 0 })
        XCTAssertEqual(Double(mix.left[3120]), (1740 + 120) / 65536 * 0.5, accuracy: 1e-9, "halfway up the resume fade")
        for f in 3240..<5000 { XCTAssertEqual(mix.left[f], Float(1740 + f - 3000) / Self.scale, "frame \(f)") }
        XCTAssertFalse(t.isVirtual)
        let lines = drainEventsBlocking(events, through: e).compactMap { event -> String? in
            switch event {
            case let .trackStarted(_, at, _): "start \(at.frame)"
            case let .trackPaused(_, at): "pause \(at.frame)"
            case let .trackVirtual(_, at, reason): "virtual \(at.frame) \(reason)"
            case let .trackAudible(_, at): "audible \(at.frame)"
            default: nil
            }
        }
        XCTAssertEqual(lines, ["start 0", "virtual 0 inaudible", "pause 1740", "start 3000"])
    }

    func testInaudibleEffectGoesVirtualAndCompletesOnItsEnd() throws {
        let e = try engine(block: 512)
        let fx = try e.registerEffect(try ramp(3000))
        let events = e.events()
        let done = Recorder<EffectCompletion>()
        try e.fire(fx, volume: 0.0001, at: e.time(frame: 100)) { done.append($0) }
        let mix = render(e, frames: 4000, block: 512)
        e.waitForEvents()
        XCTAssertTrue(mix.left.allSatisfy { $0 == 0 } && mix.right.allSatisfy { $0 == 0 }, "never mixed")
        XCTAssertEqual(done.values.map(\.time.frame), [3100])
        XCTAssertEqual(done.values.map(\.reason), [.finished])
        let lines = drainEventsBlocking(events, through: e).compactMap { event -> String? in
            switch event {
            case let .effectStarted(_, at, _): "start \(at.frame)"
            case let .effectVirtual(_, at, reason): "virtual \(at.frame) \(reason)"
            case let .effectAudible(_, at): "audible \(at.frame)"
            case let .effectEnded(_, at, reason, _): "end \(at.frame) \(reason)"
            default: nil
            }
        }
        XCTAssertEqual(lines, ["start 100", "virtual 100 inaudible", "end 3100 finished"])
    }

    func testThresholdIsChecked() {
        for bad: Float in [-0.1, 1.5, .nan, .infinity] {
            var c = Engine.Configuration()
            c.virtualThreshold = bad
            XCTAssertThrowsError(try Engine(configuration: c)) { error in
                guard case let .invalidParameter(name, _, _) = error as? EngineError else { return XCTFail("\(error)") }
                XCTAssertEqual(name, "virtualThreshold")
            }
        }
    }

    // MARK: Real time

    func testVirtualVoicesAllocateNothing() throws {
        let e = try engine(cap: 4, block: 512)
        let sound = try ramp(48000)
        var tracks: [Track] = []
        for k in 0..<12 {
            let t = try e.makeTrack(sound)
            try t.setPriority(k * 20)
            try t.setNumberOfLoops(-1)
            tracks.append(t)
        }
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 512)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: 1024)
        defer { left.deallocate(); right.deallocate() }
        for _ in 0..<2 { e.render(left: left, right: right, frames: 256) }
        let base = e.currentFrame
        for (k, t) in tracks.enumerated() {
            try t.play(at: e.time(frame: base + 10 + Int64(k) * 37))
            // Quiet, then loud again: inaudible and capped voices going virtual and coming back.
            try t.setVolume(0.0001, at: e.time(frame: base + 600 + Int64(k) * 90), ramp: 0)
            try t.setVolume(1, at: e.time(frame: base + 2400 + Int64(k) * 50), ramp: 0)
            if k % 3 == 0 { try t.stop(at: e.time(frame: base + 3000 + Int64(k) * 40)) }
        }
        var total: UInt64 = 0
        for k in 0..<24 { total += renderCountingAllocations(e, k, left: left, right: right, frames: 256) }
        XCTAssertEqual(total, 0, "render allocated \(total) times")
        withExtendedLifetime(tracks) {}
    }
}
