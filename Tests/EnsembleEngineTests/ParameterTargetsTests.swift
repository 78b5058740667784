import CAllocationCounter
import XCTest
import EnsembleTestSupport
@_spi(Testing) import Ensemble
@testable import EnsembleEngine
@testable import EnsembleSoak

/// The registry of parameter targets (`ParameterTargets`): a target stays alive while a change of its parameters
/// may be on its way to the render side, and is forgotten once nobody holds it, so an engine that installs a new
/// custom effect or generated source per shot does not grow (it kept every one before: 220 bytes each and more).
final class ParameterTargetsTests: XCTestCase {
    private final class Target {}

    func testAChangeHoldsItsTargetUntilTheRenderSideHasSurelyTakenIt() {
        var registry = ParameterTargets<Target>()
        weak var immediate: Target?, timed: Target?, untouched: Target?
        do {
            let a = Target(), b = Target(), c = Target()
            (immediate, timed, untouched) = (a, b, c)
            for t in [a, b, c] { registry.add(t, rendered: 0) }
            XCTAssertTrue(registry.contains(a) && registry.contains(b) && registry.contains(c))
            registry.sending(a, frame: nil, rendered: 1000, grace: 512)       // the next block: held to 1512
            registry.sending(b, frame: 50_000, rendered: 1000, grace: 512)    // due at 50000: held to 50512
        }
        XCTAssertNil(untouched, "nobody holds it and no change is on its way")
        registry.sweep(rendered: 1511)
        XCTAssertNotNil(immediate, "one frame short of two blocks after the send")
        registry.sweep(rendered: 1512)
        XCTAssertNil(immediate)
        registry.sweep(rendered: 50_511)
        XCTAssertNotNil(timed, "a timed change holds its target until its frame and two blocks more")
        registry.sweep(rendered: 50_512)
        XCTAssertNil(timed)
        XCTAssertEqual(registry.count, 0, "forgotten")
    }

    func testATargetInstalledElsewhereIsNotKnownAndSendingToItHoldsNothing() {
        var registry = ParameterTargets<Target>()
        weak var stranger: Target?
        do {
            let s = Target()
            stranger = s
            XCTAssertFalse(registry.contains(s))
            registry.sending(s, frame: nil, rendered: 0, grace: 512)
        }
        XCTAssertNil(stranger)
        XCTAssertEqual(registry.count, 0)
    }

    /// An engine whose tracks get a new insert and whose bus gets a new custom chain every block, each changed
    /// once: the replaced effects are released, and the live heap stays flat.
    func testEffectsReplacedEveryBlockAreReleasedAndTheHeapStaysFlat() throws {
        let engine = try makeEngine(maxBlockFrames: 256)
        let track = try engine.makeTrack(try monoSound(48000) { sin(Double($0) * 0.01) })
        try track.setNumberOfLoops(-1)
        track.play()
        let bus = try Bus(2)
        try engine.setBus(bus, settings: BusSettings())
        weak var firstInsert: CustomEffect?, firstChained: CustomEffect?
        var made = 0
        func cycles(_ n: Int) throws {
            for k in 0..<n {
                let insert = try CustomEffect(SoakTremolo(), parameters: [6, 0.9])
                try track.setInsert(insert)
                try engine.setParameter(1, to: 0.5, of: insert)
                let chained = try CustomEffect(SoakTremolo(), parameters: [6, 0.9])
                if made == 0 { (firstInsert, firstChained) = (insert, chained) }
                made += 1
                try engine.setEffects([.custom(chained)], on: bus)
                try engine.scheduleParameter(0, to: 5, of: chained, at: engine.time(frame: engine.renderedFrame + 300))
                _ = render(engine, frames: 256, block: 256)
                if k % 64 == 0 { engine.waitForEvents() }
            }
        }
        try cycles(1000)
        engine.waitForEvents()
        XCTAssertNil(firstInsert, "the first insert, replaced 999 times since")
        XCTAssertNil(firstChained, "the first bus chain's effect, replaced 999 times since")
        let before = allocation_counter_heap_in_use()
        try cycles(4000)
        engine.waitForEvents()
        let growth = Int(allocation_counter_heap_in_use()) - Int(before)
        XCTAssertLessThan(growth, 64 << 10, "8000 effects installed: \(growth) bytes kept")
        XCTAssertLessThan(engine.busControl.customEffects.withLock { $0.count }, 300)
    }
}
