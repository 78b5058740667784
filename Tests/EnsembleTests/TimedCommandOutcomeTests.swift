import CAllocationCounter
import XCTest
@testable import Ensemble

/// Every timed command ends in exactly one report: applied on its frame, or dropped with a reason (its voice had
/// ended, or the render side's queue was full), never "applied" when it did nothing and never silence.
final class TimedCommandOutcomeTests: XCTestCase {
    private struct Drop: Equatable {
        var id: UInt64
        var frame: Int64
        var reason: CommandDropReason
    }

    func testChangesToAVoiceThatHasEndedAreReportedDroppedNotApplied() throws {
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(1000, rampValue))
        let applied = Recorder<UInt64>(), dropped = Recorder<Drop>(), ownDrops = Recorder<Int64>()
        engine.onCommandApplied = { id, _ in applied.append(id.rawValue) }
        engine.onCommandDropped = { id, frame, reason in dropped.append(Drop(id: id.rawValue, frame: frame, reason: reason)) }
        try track.play(atFrame: 0)
        let duck = try XCTUnwrap(track.schedule(.volume(0.5, rampFrames: 0), atFrame: 500))
        // The voice ends on frame 1000: these come too late.
        let late = try XCTUnwrap(track.schedule(.volume(0.2), atFrame: 3000, onApplied: { _ in XCTFail("applied") },
                                                onDropped: { frame, _ in ownDrops.append(frame) }))
        let resume = try XCTUnwrap(track.schedule(.resume(), atFrame: 3100))
        let mix = render(engine, frames: 4000, block: 512)
        engine.waitForEvents()
        XCTAssertEqual(applied.values, [duck.rawValue])
        XCTAssertEqual(dropped.values, [Drop(id: late.rawValue, frame: 3000, reason: .voiceEnded),
                                        Drop(id: resume.rawValue, frame: 3100, reason: .voiceEnded)])
        XCTAssertEqual(ownDrops.values, [3000])
        XCTAssertEqual(track.volume, 0.5, "a dropped change leaves the track's properties alone")
        XCTAssertEqual(mix.endOfSound, 1000)
    }

    func testCommandsBeyondTheQueuesCapacityAreReportedDropped() throws {
        var configuration = Engine.Configuration()
        configuration.commandCapacity = 64
        let engine = try Engine(configuration: configuration)
        let track = try engine.makeTrack(try monoSound(100, rampValue))
        track.numberOfLoops = -1
        try track.play(atFrame: 0)
        let applied = Recorder<Int64>(), dropped = Recorder<CommandDropReason>()
        for i in 0..<100 {
            track.schedule(.pan(Float(i) / 100), atFrame: Int64(5000 + i), onApplied: { applied.append($0) },
                           onDropped: { _, reason in dropped.append(reason) })
        }
        _ = render(engine, frames: 6000, block: 64) { _ in engine.pumpCommands() }
        engine.waitForEvents()
        XCTAssertEqual(applied.values, (5000..<5064).map(Int64.init), "the first 64 fill the queue and apply")
        XCTAssertEqual(dropped.values, Array(repeating: .queueFull, count: 36))
        XCTAssertEqual(engine.droppedCommands, 36)
        XCTAssertEqual(engine.droppedEvents, 0, "every outcome was delivered")
    }

    func testTheScenesEventsListADroppedEntry() throws {
        let dir = try TemporaryDirectory()
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.5, count: 480), rate: 48000).bytes, to: "a.wav")
        let path = try dir.write(Array(#"""
        {"duration": 0.1, "tracks": [{"name": "t", "file": "a.wav"}],
         "timeline": [{"at": 0.005, "track": "t", "set": {"volume": 0.5}}, {"at": 0.05, "track": "t", "set": {"pan": 1}}]}
        """#.utf8), to: "s.json")
        let events = dir.file("events.jsonl")
        let result = try runProcess(try ensembleExecutable(), ["render", path, "-o", dir.file("o.wav"), "--events", events])
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.filter { $0.contains("command") }, [
            #"{"command":"set volume","event":"commandApplied","frame":240,"name":"t","timeline":0}"#,
            #"{"cause":"voiceEnded","command":"set pan","event":"commandDropped","frame":2400,"name":"t","timeline":1}"#,
        ])
    }

    // MARK: Bus volume and mute/solo

    func testATimedVolumeNeverUnmutesABus() throws {
        let engine = try makeEngine()
        try engine.setBus(1, BusSettings(volume: 1, mute: true))
        let track = try engine.makeTrack(try monoSound(48000) { _ in 0.5 })
        track.bus = 1
        try track.play(atFrame: 0)
        try engine.scheduleBusVolume(1, 0.5, atFrame: 1000, rampFrames: 0)
        let muted = render(engine, frames: 3000, block: 512)
        XCTAssertEqual(muted.endOfSound, 0, "a muted bus stays silent")
        engine.waitForEvents()
        var settings = engine.busSettings(1)
        XCTAssertEqual(settings.volume, 0.5)
        // Unmuted, it plays at the scheduled volume.
        settings.mute = false
        try engine.setBus(1, settings)
        let open = render(engine, frames: 1000, block: 512)
        assertClose(open.left[500], 0.5 * 0.5 * Pan.mono(0).l)
    }

    func testATimedVolumeNeverBringsBackABusSoloedOut() throws {
        let engine = try makeEngine()
        try engine.setBus(1, BusSettings(solo: true))
        try engine.setBus(2, BusSettings(volume: 0.8))
        let track = try engine.makeTrack(try monoSound(48000) { _ in 0.5 })
        track.bus = 2
        try track.play(atFrame: 0)
        try engine.scheduleBusVolume(2, 0.7, atFrame: 700, rampFrames: 100)
        let mix = render(engine, frames: 2000, block: 512)
        XCTAssertEqual(mix.endOfSound, 0, "bus 2 is soloed out")
        engine.waitForEvents()
        XCTAssertEqual(engine.busSettings(2).volume, 0.7)
    }

    // MARK: Effect chains handed back

    func testReplacedChainsAreAllFreedEvenPastTheRingsCapacity() throws {
        let engine = try makeEngine(maxBlockFrames: 512)
        let lowpass = [EffectSpec.filter(.lowpass, frequency: 1000, q: 0.707, gainDB: 0)]
        // 1500 replacements reach the render side in one block: 1499 chains retired at once, more than the
        // 1024-slot ring back holds.
        for _ in 0..<1500 { try engine.setEffects(lowpass, onBus: 1) }
        XCTAssertEqual(engine.liveEffectChains, 1500)
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 512), right = UnsafeMutablePointer<Float>.allocate(capacity: 1024)
        defer { left.deallocate(); right.deallocate() }
        var allocations: UInt64 = 0
        // The ring is emptied between blocks (no further setEffects); what did not fit follows on the next block.
        for k in 0..<2 {
            allocations += renderCountingAllocations(engine, k, left: left, right: right, frames: 512)
            engine.pumpCommands()
        }
        XCTAssertEqual(allocations, 0)
        XCTAssertEqual(engine.liveEffectChains, 1, "only the installed chain is left")

        // Replaced while rendering (each old chain crossfades out first); the event thread frees them alone.
        let track = try engine.makeTrack(try monoSound(480) { _ in 0.5 })
        track.bus = 1
        track.numberOfLoops = -1
        try track.play()
        for k in 0..<20 {
            try engine.setEffects(k % 2 == 0 ? [] : lowpass, onBus: 1)
            engine.render(left: left, right: right, frames: 512)
        }
        engine.render(left: left, right: right, frames: 512)
        let deadline = Date().addingTimeInterval(5)
        while engine.liveEffectChains != 1 && Date() < deadline { usleep(1000) }
        XCTAssertEqual(engine.liveEffectChains, 1)
    }
}
