import CAllocationCounter
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Replaced effect chains go back to the control side and are freed there, every one, without waiting for the
/// next `setEffects`, and without the render thread allocating.
final class EffectChainLifetimeTests: XCTestCase {
    func testReplacedChainsAreAllFreedEvenPastTheRingsCapacity() throws {
        let engine = try makeEngine(maxBlockFrames: 512)
        let lowpass = [EffectSpec.filter(.lowpass, frequency: 1000, q: 0.707, gainDB: 0)]
        // 1500 replacements reach the render side in one block: 1499 chains retired at once, more than the
        // 1024-slot ring back holds.
        for _ in 0..<1500 { try engine.setEffects(lowpass, on: busNumber(1)) }
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
        try track.setBus(busNumber(1))
        try track.setNumberOfLoops(-1)
        track.play()
        for k in 0..<20 {
            try engine.setEffects(k % 2 == 0 ? [] : lowpass, on: busNumber(1))
            engine.render(left: left, right: right, frames: 512)
        }
        engine.render(left: left, right: right, frames: 512)
        let deadline = Date().addingTimeInterval(5)
        while engine.liveEffectChains != 1 && Date() < deadline { usleep(1000) }
        XCTAssertEqual(engine.liveEffectChains, 1)
    }
}
