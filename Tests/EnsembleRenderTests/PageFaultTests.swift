import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The command and event rings are mapped and populated when the engine is made (`SPSCRing`): the first pass
/// through them takes no page faults, on the control side (each command a cell of a ring that is megabytes long)
/// nor on the render side (each event). Faults are counted per thread (`RUSAGE_THREAD`); in offline rendering both
/// sides are this thread. The rings are fresh mappings, so without `MAP_POPULATE` the test fails whatever ran
/// before it (175 and 44 faults).
final class PageFaultTests: XCTestCase {
    private func threadFaults() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(1), &usage) // RUSAGE_THREAD (Glibc does not import the GNU constant)
        return usage.ru_minflt + usage.ru_majflt
    }

    func testFirstPassThroughTheCommandAndEventRingsTakesNoPageFaults() throws {
        let engine = try makeEngine(maxBlockFrames: 256, effectPolyphony: 4)
        let effect = try engine.registerEffect(try monoSound(64) { _ in 0.25 })
        let block = 256
        var left = [Float](repeating: 0, count: block), right = left
        func render() {
            left.withUnsafeMutableBufferPointer { l in
                right.withUnsafeMutableBufferPointer { r in
                    engine.render(left: l.baseAddress!, right: r.baseAddress!, frames: block)
                }
            }
        }
        // Warm-up: every path (code, the runtime's lazy state) and every voice slot and lane the effects will use
        // (their tables and buffers are written on first use by design: only the slots in use become resident).
        func fireFour() throws {
            let base = engine.currentFrame
            for k in 0..<4 { try engine.fire(effect, volume: 0.5, at: engine.time(frame: base + Int64(k * 60))) }
        }
        // A block plays its four firings to their end; once the event thread has delivered the ends their slots
        // are free, so the next four take the same slots however late that thread runs (`waitForEvents`, outside
        // the counted spans).
        for _ in 0..<100 {
            try fireFour()
            render()
            engine.waitForEvents()
        }
        // Far more commands and events than a page of either ring holds: each fire is one command, and a start
        // and an end event.
        var commandFaults = 0, renderFaults = 0
        for _ in 0..<400 {
            var before = threadFaults()
            try fireFour()
            commandFaults += threadFaults() - before
            before = threadFaults()
            render()
            renderFaults += threadFaults() - before
            engine.waitForEvents()
        }
        XCTAssertEqual(engine.droppedEvents, 0)
        XCTAssertGreaterThan(left.map(abs).max() ?? 0, 0, "the effects were heard")
        XCTAssertEqual(commandFaults, 0, "page faults while sending 1,600 commands")
        XCTAssertEqual(renderFaults, 0, "page faults while rendering 1,600 starts and ends")
    }
}
