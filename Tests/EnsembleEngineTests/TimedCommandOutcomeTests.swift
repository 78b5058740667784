import CAllocationCounter
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

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
        engine.onCommandDropped = { id, frame, reason in dropped.append(Drop(id: id.rawValue, frame: frame.frame, reason: reason)) }
        try track.play(at: track.engine.time(frame: 0))
        let duck = try XCTUnwrap(track.schedule(.volume(0.5, ramp: frameSeconds(0)), atFrame: 500))
        // The voice ends on frame 1000: these come too late.
        let late = try XCTUnwrap(track.schedule(.volume(0.2), atFrame: 3000, onApplied: { _ in XCTFail("applied") },
                                                onDropped: { time, _ in ownDrops.append(time.frame) }))
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
        try track.setNumberOfLoops(-1)
        try track.play(at: track.engine.time(frame: 0))
        let applied = Recorder<Int64>(), dropped = Recorder<CommandDropReason>()
        for i in 0..<100 {
            XCTAssertNotNil(track.schedule(.pan(Float(i) / 100), atFrame: Int64(5000 + i), onApplied: { applied.append($0.frame) },
                                           onDropped: { _, reason in dropped.append(reason) }))
        }
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 64), right = UnsafeMutablePointer<Float>.allocate(capacity: 128)
        defer { left.deallocate(); right.deallocate() }
        var allocations: UInt64 = 0
        for k in 0..<(6000 / 64) {
            engine.pumpCommands()
            allocations += renderCountingAllocations(engine, k, left: left, right: right, frames: 64)
        }
        engine.waitForEvents()
        XCTAssertEqual(allocations, 0, "dropping and applying allocate nothing on the render thread")
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
}
