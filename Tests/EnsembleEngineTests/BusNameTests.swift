import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// Buses made by name, and the engine's side of a bus's pause: typed errors, lookups, and the events on the
/// frames the pauses took effect on.
final class BusNameTests: XCTestCase {
    func testNamedBusesAreNumberedInOrderAndFoundAgain() throws {
        let engine = try makeEngine()
        let sfx = try engine.makeBus(named: "sfx"), music = try engine.makeBus(named: "music")
        XCTAssertEqual([sfx.index, music.index], [1, 2])
        XCTAssertEqual(engine.bus(named: "music"), music)
        XCTAssertNil(engine.bus(named: "voice"))
        XCTAssertEqual(engine.name(of: sfx), "sfx")
        XCTAssertNil(engine.name(of: .master))
        XCTAssertTrue(engine.isSetUp(sfx))
        // A numbered bus set up first is skipped.
        try engine.setBus(busNumber(3), settings: BusSettings())
        XCTAssertEqual(try engine.makeBus(named: "voice").index, 4)
    }

    func testDuplicateNamesAndRunningOutAreTypedErrors() throws {
        let engine = try makeEngine()
        _ = try engine.makeBus(named: "sfx")
        XCTAssertThrowsError(try engine.makeBus(named: "sfx")) {
            XCTAssertEqual($0 as? EngineError, .duplicateBusName("sfx"))
            XCTAssertEqual("\($0)", "a bus named \"sfx\" already exists")
        }
        for i in 2...Engine.maxBuses { _ = try engine.makeBus(named: "bus\(i)") }
        XCTAssertThrowsError(try engine.makeBus(named: "one more")) {
            XCTAssertEqual($0 as? EngineError, .busesExhausted(limit: 16))
        }
    }

    func testPausingTheMasterABusNotSetUpOrWithABadFadeThrows() throws {
        let engine = try makeEngine()
        XCTAssertThrowsError(try engine.pause(.master)) {
            guard case .invalidParameter(name: "bus", _, _)? = $0 as? EngineError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try engine.pause(busNumber(5))) { XCTAssertEqual($0 as? EngineError, .unknownBus(index: 5)) }
        let sfx = try engine.makeBus(named: "sfx")
        XCTAssertThrowsError(try engine.resume(sfx, fade: -1)) {
            guard case .invalidParameter(name: "fade", _, _)? = $0 as? EngineError else { return XCTFail("\($0)") }
        }
        XCTAssertFalse(engine.isPaused(sfx))
    }

    func testBusPausesAreEventsOnTheirFrames() throws {
        let engine = try makeEngine(maxBlockFrames: 256)
        let sfx = try engine.makeBus(named: "sfx"), music = try engine.makeBus(named: "music")
        let events = engine.events()
        let applied = Recorder<Int64>()
        try engine.pause(sfx, at: engine.time(frame: 1000), onApplied: { applied.append($0.frame) })
        try engine.resume(sfx, at: engine.time(frame: 2500))
        try engine.pause(sfx, at: engine.time(frame: 2600)) // twice: the second does nothing
        try engine.pause(sfx, at: engine.time(frame: 2700))
        try engine.pause(music, at: engine.time(frame: 3001))
        _ = render(engine, frames: 4000, block: 256)
        let got = drainEventsBlocking(events, through: engine)
        XCTAssertEqual(applied.values, [1000])
        var lines: [String] = []
        for event in got {
            switch event {
            case let .busPaused(bus, at): lines.append("paused \(engine.name(of: bus) ?? "?")@\(at.frame)")
            case let .busResumed(bus, at): lines.append("resumed \(engine.name(of: bus) ?? "?")@\(at.frame)")
            default: break
            }
        }
        XCTAssertEqual(lines, ["paused sfx@1000", "resumed sfx@2500", "paused sfx@2600", "paused music@3001"])
        XCTAssertTrue(engine.isPaused(sfx))
        XCTAssertTrue(engine.isPaused(music))
    }
}
