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

    /// A change that found the command ring full waits in the engine's overflow, possibly for many blocks: its
    /// target must stay alive until the render side has taken it, however long past its send (the hold counted
    /// from the send alone let the effect go after two blocks, and the change then wrote into freed memory).
    func testAChangeLeftInTheOverflowHoldsItsTargetUntilTaken() throws {
        var c = Engine.Configuration()
        c.maxBlockFrames = 256
        c.commandCapacity = 64
        let engine = try Engine(configuration: c)
        let bus = try Bus(2), other = try Bus(3)
        try engine.setBus(bus, settings: BusSettings())
        try engine.setBus(other, settings: BusSettings())
        let keeper = try CustomEffect(SoakTremolo(), parameters: [6, 0.9])
        try engine.setEffects([.custom(keeper)], on: other)
        weak var gone: CustomEffect?
        do {
            let fx = try CustomEffect(SoakTremolo(), parameters: [6, 0.9])
            gone = fx
            try engine.setEffects([.custom(fx)], on: bus)
            _ = render(engine, frames: 256, block: 256)
            // Its chain is let go at the next block (twice: the control side keeps the previous list for the ramp).
            try engine.setEffects([], on: bus)
            try engine.setEffects([], on: bus)
            // 600 commands: the ring (64) and the overflow; the render side takes at most 64 a block.
            for k in 0..<600 { try engine.setParameter(1, to: Float(k % 10) / 10, of: keeper) }
            try engine.setParameter(1, to: 0.5, of: fx)
        }
        XCTAssertEqual(engine.parameterReleaseFrame, .min, "commands wait in the overflow")
        _ = render(engine, frames: 768, block: 256) // two blocks past the send and more
        engine.pumpCommands() // the old chain freed; the change still waits behind the others
        engine.busControl.customEffects.withLock { $0.sweep(rendered: engine.parameterReleaseFrame) }
        XCTAssertNotNil(gone, "its change still waits in the overflow")
        // Until the overflow is empty and two blocks more, then let go.
        for _ in 0..<40 {
            engine.pumpCommands()
            _ = render(engine, frames: 256, block: 256)
        }
        engine.pumpCommands()
        XCTAssertEqual(engine.control.withLock { $0.overflow.count }, 0)
        XCTAssertEqual(engine.parameterReleaseFrame, engine.renderedFrame)
        engine.busControl.customEffects.withLock { $0.sweep(rendered: engine.parameterReleaseFrame) }
        XCTAssertNil(gone, "taken, and nobody else holds it")
    }
}
