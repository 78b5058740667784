import CAllocationCounter
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Voices with sends and filters (2D, positioned, fired effects), and changes to them while rendering: nothing
/// allocates on the render thread.
final class AuxSendAllocationTests: XCTestCase {
    func testSendsAndFiltersWhileRenderingAllocateNothing() throws {
        let engine = try makeEngine(maxBlockFrames: 512)
        for b in 1...3 { try engine.setBus(busNumber(b), settings: BusSettings(volume: 0.8)) }
        let stereo = try stereoSound(3000, left: { sin(Double($0) * 0.04) }, right: { sin(Double($0) * 0.3) })
        let mono = try monoSound(2500) { sin(Double($0) * 0.2) * 0.5 }
        let fx = try engine.registerEffect(try monoSound(500) { _ in 0.2 })
        let t1 = try engine.makeTrack(stereo), t2 = try engine.makeTrack(mono)
        try t1.setNumberOfLoops(-1)
        try t1.setBus(busNumber(1))
        try t1.setFilter(.lowpass(gainHF: 0.3))
        try t1.setSends([AuxSend(bus: busNumber(2), level: 0.5),
                         AuxSend(bus: busNumber(3), preFader: true, filter: .highpass(gainLF: 0.2))])
        try t2.setNumberOfLoops(-1)
        try t2.setSpatial(SpatialSource(position: Vector3(1, 0, -2)))
        try t2.setFilter(.bandpass(gainLF: 0.5, gainHF: 0.5))
        try t2.setSends([AuxSend(bus: busNumber(2), level: 0.3, filter: .lowpass(gainHF: 0.1))])
        let block = 256
        let left = UnsafeMutablePointer<Float>.allocate(capacity: block)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
        defer { left.deallocate(); right.deallocate() }
        try engine.play([t1, t2], at: engine.time(frame: 5))
        try engine.fire(fx, at: engine.time(frame: 30), bus: busNumber(1), sends: [AuxSend(bus: busNumber(3))],
                        filter: .highpass(gainLF: 0.5))
        for _ in 0..<8 { engine.render(left: left, right: right, frames: block) }

        var total: UInt64 = 0
        for k in 0..<60 {
            let now = engine.currentFrame
            switch k % 6 {
            case 0: try t1.setSendLevel(Float(k % 5) / 5, send: k % 2, at: engine.time(frame: now + 100), ramp: 0.002)
            case 1: try t1.setFilter(k % 12 == 1 ? nil : .bandpass(gain: 0.8, gainLF: 0.3, gainHF: Float(k % 7) / 7),
                                     ramp: 0.004)
            case 2: try engine.fire(fx, pan: 0.3, bus: busNumber(k % 3), sends: [AuxSend(bus: busNumber(2), level: 0.5)],
                                    filter: .lowpass(gainHF: 0.2))
            case 3: try t2.setSends(k % 12 == 3 ? [] : [AuxSend(bus: busNumber(3 - k % 2), level: 0.4, preFader: k % 4 == 3)])
            case 4: try t2.setPosition(Vector3(Float(k % 5) - 2, 0, -1), ramp: 0.01)
            default: try t2.setFilter(.highpass(gainLF: Float(k % 9 + 1) / 10), at: engine.time(frame: now + 37), ramp: 0.003)
            }
            total += renderCountingAllocations(engine, k, left: left, right: right, frames: block)
        }
        XCTAssertEqual(total, 0, "render allocated \(total) times")
        engine.updateMeters()
        XCTAssertGreaterThan(try engine.peakPower(forChannel: 0), -160, "the scene must be sounding")
    }
}
