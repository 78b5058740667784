import Glibc
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The validation policy (`Engine`, "Arguments are checked, never adjusted"), under `ValuePolicy.strict` (the
/// clamping default is `ValuePolicyTests`'): every public entry point throws the
/// documented `EngineError` for NaN, infinity, out-of-range values, a time at another rate and an unknown bus,
/// changes nothing when it throws, and accepts the ends of each range.
final class ArgumentPolicyTests: XCTestCase {
    /// A time on a 44.1 kHz timeline: wrong for a 48 kHz engine.
    private let foreignTime = EngineTime(frame: 100, sampleRate: 44100)

    private func assertInvalid<T>(_ name: String, _ call: @autoclosure () throws -> T,
                                  file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try call(), file: file, line: line) { error in
            guard case .invalidParameter(name: name, _, _)? = error as? EngineError else {
                return XCTFail("expected invalidParameter(\(name)), got \(error)", file: file, line: line)
            }
        }
    }

    private func assertForeignTime<T>(_ call: @autoclosure () throws -> T, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try call(), file: file, line: line) { error in
            XCTAssertEqual(error as? EngineError, .sampleRateMismatch(name: "time", sampleRate: 44100, engineRate: 48000),
                           file: file, line: line)
        }
    }

    private func assertUnknownBus<T>(_ index: Int, _ call: @autoclosure () throws -> T,
                                     file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try call(), file: file, line: line) { error in
            XCTAssertEqual(error as? EngineError, .unknownBus(index: index), file: file, line: line)
        }
    }

    func testTrackSettersRefuseBadValuesAndKeepTheOldOne() throws {
        let engine = try makeEngine(valuePolicy: .strict)
        let track = try engine.makeTrack(try monoSound(4800) { _ in 0.5 })
        for v: Float in [.nan, .infinity, -.infinity, -0.001, 1.001] { assertInvalid("volume", try track.setVolume(v)) }
        for p: Float in [.nan, .infinity, -1.01, 1.01] { assertInvalid("pan", try track.setPan(p)) }
        for r: Float in [.nan, .infinity, 0.0624, 4.01, 0] { assertInvalid("rate", try track.setRate(r)) }
        for n in [-2, Int.min, Track.maxLoops + 1] { assertInvalid("numberOfLoops", try track.setNumberOfLoops(n)) }
        for t in [.nan, .infinity, -0.001, 0.1 + 0.001] { assertInvalid("seek", try track.setCurrentTime(t)) }
        for f in [.nan, .infinity, -1, Engine.maxDuration * 2] {
            assertInvalid("fadeIn", try track.setFadeIn(f))
            assertInvalid("fadeOut", try track.setFadeOut(f))
            assertInvalid("ramp", try track.setVolume(0.5, ramp: f))
            assertInvalid("ramp", try track.setPan(0.5, ramp: f))
            assertInvalid("fade", try track.stop(fade: f))
        }
        for p in [-1, 256] { assertInvalid("priority", try track.setPriority(p)) }
        assertInvalid("loopStart", try track.setLoopRegion(start: .nan, end: 0.05))
        assertInvalid("loopEnd", try track.setLoopRegion(start: 0, end: .infinity))
        assertUnknownBus(3, try track.setBus(Bus(3)))
        // Nothing changed.
        XCTAssertEqual(track.volume, 1)
        XCTAssertEqual(track.pan, 0)
        XCTAssertEqual(track.rate, 1)
        XCTAssertEqual(track.numberOfLoops, 0)
        XCTAssertEqual(track.currentTime, 0)
        XCTAssertEqual(track.fadeIn, 0)
        XCTAssertEqual(track.fadeOut, 0)
        XCTAssertEqual(track.priority, 128)
        XCTAssertEqual(track.bus, .master)
        XCTAssertNil(track.loopRegion)
    }

    func testTrackSettersAcceptTheEndsOfTheirRanges() throws {
        let engine = try makeEngine(valuePolicy: .strict)
        let track = try engine.makeTrack(try monoSound(4800) { _ in 0.5 })
        for v: Float in [0, 1] { try track.setVolume(v); XCTAssertEqual(track.volume, v) }
        for p: Float in [-1, 1] { try track.setPan(p); XCTAssertEqual(track.pan, p) }
        for r: Float in [0.0625, 4] { try track.setRate(r); XCTAssertEqual(track.rate, r) }
        for n in [-1, 0, Track.maxLoops] { try track.setNumberOfLoops(n); XCTAssertEqual(track.numberOfLoops, n) }
        for t in [0, 0.1] { try track.setCurrentTime(t); XCTAssertEqual(track.currentTime, t) }
        for p in [0, 255] { try track.setPriority(p); XCTAssertEqual(track.priority, p) }
        try track.setFadeIn(0.25)
        try track.setFadeOut(0)
        XCTAssertEqual(track.fadeIn, 0.25)
        try engine.setBus(Bus(2), settings: BusSettings())
        try track.setBus(Bus(2))
        XCTAssertEqual(track.bus, try Bus(2))
        try track.setBus(.master)
        XCTAssertEqual(track.bus, .master)
    }

    func testBusHandlesAndBusCalls() throws {
        let engine = try makeEngine(valuePolicy: .strict)
        for i in [0, -1, Engine.maxBuses + 1] { assertInvalid("bus", try Bus(i)) }
        XCTAssertEqual(try Bus(Engine.maxBuses).index, Engine.maxBuses)
        XCTAssertEqual(Bus.submixes.count, Engine.maxBuses)
        assertInvalid("bus", try engine.setBus(.master, settings: BusSettings()))
        assertInvalid("volume", try engine.setBus(Bus(1), settings: BusSettings(volume: .nan)))
        assertInvalid("pan", try engine.setBus(Bus(1), settings: BusSettings(pan: 1.5)))
        XCTAssertFalse(engine.isSetUp(try Bus(1)), "a refused setBus sets nothing up")
        assertUnknownBus(1, try engine.scheduleVolume(0.5, on: Bus(1), at: engine.time(frame: 10)))
        assertUnknownBus(1, try engine.peakPower(forChannel: 0, on: Bus(1)))
        assertInvalid("effects[0].frequency", try engine.setEffects([.filter(.lowpass, frequency: .nan, q: 1, gainDB: 0)], on: .master))
        try engine.setBus(Bus(1), settings: BusSettings(volume: 0.5))
        XCTAssertEqual(engine.settings(of: try Bus(1)).volume, 0.5)
        assertInvalid("volume", try engine.scheduleVolume(1.5, on: Bus(1), at: engine.time(frame: 10)))
        assertInvalid("ramp", try engine.scheduleVolume(0.5, on: Bus(1), at: engine.time(frame: 10), ramp: .nan))
        assertForeignTime(try engine.scheduleVolume(0.5, on: Bus(1), at: foreignTime))
        for channel in [-1, 2] {
            assertInvalid("channel", try engine.peakPower(forChannel: channel))
            assertInvalid("channel", try engine.averagePower(forChannel: channel, on: Bus(1)))
        }
        XCTAssertEqual(try engine.peakPower(forChannel: 1, on: Bus(1)), -160)
    }

    func testTimedCallsRefuseATimeAtAnotherRate() throws {
        let engine = try makeEngine(valuePolicy: .strict)
        let track = try engine.makeTrack(try monoSound(4800) { _ in 0.5 })
        let fx = try engine.registerEffect(try monoSound(100) { _ in 0.5 })
        assertForeignTime(try track.play(at: foreignTime))
        assertForeignTime(try engine.play([track], at: foreignTime))
        XCTAssertFalse(track.isPlaying, "a refused play starts nothing")
        assertForeignTime(try engine.pause(at: foreignTime))
        XCTAssertFalse(engine.isPaused)
        assertForeignTime(try engine.fire(fx, at: foreignTime))
        assertForeignTime(try engine.hostTime(for: foreignTime))
        try track.play(at: engine.time(frame: 0))
        assertForeignTime(try track.stop(at: foreignTime))
        assertForeignTime(try track.setVolume(0.5, at: foreignTime))
        assertForeignTime(try track.schedule(.rate(1.5), at: foreignTime))
        assertForeignTime(try track.schedulePlay(at: foreignTime))
        let id = try XCTUnwrap(track.schedule(.volume(0.5), at: engine.time(frame: 1000)))
        assertForeignTime(try engine.replace(id, on: track, with: .volume(0.25), at: foreignTime))
        XCTAssertTrue(engine.cancel(id), "a refused replace leaves the command scheduled")
        assertInvalid("seconds", try engine.time(seconds: .nan))
        assertInvalid("seconds", try engine.time(seconds: .infinity))
    }

    func testTimedChangesAndFiringsRefuseBadValues() throws {
        let engine = try makeEngine(valuePolicy: .strict)
        let track = try engine.makeTrack(try monoSound(4800) { _ in 0.5 })
        let fx = try engine.registerEffect(try monoSound(100) { _ in 0.5 })
        try track.play(at: engine.time(frame: 0))
        let at = engine.time(frame: 500)
        assertInvalid("volume", try track.schedule(.volume(.nan), at: at))
        assertInvalid("ramp", try track.schedule(.volume(0.5, ramp: -1), at: at))
        assertInvalid("pan", try track.schedule(.pan(-2), at: at))
        assertInvalid("rate", try track.schedule(.rate(5), at: at))
        assertInvalid("numberOfLoops", try track.schedule(.loops(-5), at: at))
        assertInvalid("seek", try track.schedule(.seek(to: 1), at: at))
        assertInvalid("fade", try track.schedule(.pause(fade: .infinity), at: at))
        assertInvalid("fade", try track.schedule(.resume(fade: -0.1), at: at))
        assertInvalid("fade", try track.schedule(.stop(fade: .nan), at: at))
        assertInvalid("offset", try track.schedulePlay(at: at, offset: 0.2))
        assertInvalid("volume", try track.setVolume(2, at: at))
        for v: Float in [.nan, 1.5] { assertInvalid("volume", try engine.fire(fx, volume: v)) }
        for p: Float in [.infinity, -1.5] { assertInvalid("pan", try engine.fire(fx, pan: p)) }
        assertInvalid("priority", try engine.fire(fx, priority: 300))
        assertUnknownBus(4, try engine.fire(fx, bus: Bus(4)))
        let applied = Recorder<Int64>()
        engine.onCommandApplied = { _, time in applied.append(time.frame) }
        engine.pumpCommands()
        _ = render(engine, frames: 2048, block: 512)
        engine.waitForEvents()
        XCTAssertEqual(applied.values, [], "no refused change reached the render side")
        XCTAssertEqual(track.volume, 1)
    }

    func testConfigurationValuesAreCheckedAtInit() {
        func assertRefused(_ name: String, _ change: (inout Engine.Configuration) -> Void, line: UInt = #line) {
            var c = Engine.Configuration()
            change(&c)
            assertInvalid(name, try Engine(configuration: c), line: line)
        }
        assertRefused("commandCapacity") { $0.commandCapacity = 10 }
        assertRefused("eventCapacity") { $0.eventCapacity = 0 }
        assertRefused("streamBufferDuration") { $0.streamBufferDuration = .nan }
        assertRefused("streamBufferDuration") { $0.streamBufferDuration = 0 }
        assertRefused("maxOpenStreamFiles") { $0.maxOpenStreamFiles = 0 }
    }

    /// In-range values behave as before: the volume set by `setVolume` before `play`, a timed `setVolume(at:)`
    /// with a ramp, and events reporting `EngineTime`s on the exact frames.
    func testInRangeValuesAndEventTimes() throws {
        let engine = try makeEngine(maxBlockFrames: 256)
        let track = try engine.makeTrack(try monoSound(2000) { _ in 0.5 })
        try track.setPan(-1) // L = s exactly
        try track.setVolume(0.5)
        let starts = Recorder<EngineTime>(), ends = Recorder<EngineTime>(), applied = Recorder<EngineTime>()
        track.onStart = { starts.append($0) }
        track.onFinish = { ends.append($0.time) }
        try track.play(at: engine.time(frame: 100))
        try track.setVolume(1, at: engine.time(frame: 1000), ramp: frameSeconds(200))
        engine.onCommandApplied = { _, time in applied.append(time) }
        let mix = render(engine, frames: 2400, block: 256)
        engine.waitForEvents()
        for t in [100, 500, 999] { XCTAssertEqual(mix.left[t], 0.25, "frame \(t)") }
        // Ramp from 0.5 to 1 over 200 frames from frame 1000 (g = 0.5 + 0.5·k/200).
        assertClose(mix.left[1100], 0.5 * (0.5 + 0.5 * 100 / 200))
        XCTAssertEqual(mix.left[1300], 0.5)
        XCTAssertEqual(mix.left[2100], 0, "ended at 100 + 2000")
        XCTAssertEqual(starts.values, [engine.time(frame: 100)])
        XCTAssertEqual(ends.values, [engine.time(frame: 2100)])
        XCTAssertEqual(applied.values, [engine.time(frame: 1000)])
        XCTAssertEqual(track.volume, 1, "a timed change shows once applied")
    }

    /// Host time is CLOCK_MONOTONIC nanoseconds; offline the timeline is mapped as running in real time from now.
    /// Each conversion reads the host clock once; the test reads it just before and just after, so the engine's
    /// read lies between the two and the answer between the values those two reads give, however long the
    /// thread was held up in between.
    func testHostTimeConversions() throws {
        let engine = try makeEngine(valuePolicy: .strict)
        func hostNow() -> Int64 {
            var ts = timespec()
            clock_gettime(CLOCK_MONOTONIC, &ts)
            return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
        }
        // One second after `before` is 48000 frames after frame 0, less the frames between `before` and the
        // engine's read (at most `after - before`), rounded to a frame.
        var before = hostNow()
        let t = engine.time(forHostTime: before + 1_000_000_000)
        var after = hostNow()
        XCTAssertEqual(t.sampleRate, 48000)
        let earliest = Int64((Double(1_000_000_000 - (after - before)) * 48000e-9).rounded())
        XCTAssertTrue((earliest...48000).contains(t.frame), "\(t.frame) frames, expected \(earliest)…48000")
        // Frame 48000 is played one second after the engine's read of the clock.
        before = hostNow()
        let back = try engine.hostTime(for: engine.time(frame: 48000))
        after = hostNow()
        XCTAssertTrue((before + 1_000_000_000...after + 1_000_000_000).contains(back),
                      "\(back - before) ns after the first read, expected 1 s to 1 s + \(after - before) ns")
        XCTAssertEqual(try engine.time(seconds: 1.5), engine.time(frame: 72000))
    }
}
