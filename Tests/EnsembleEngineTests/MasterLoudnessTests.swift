import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleRender
import EnsembleEngine
import EnsembleOutput

/// The master's and buses' live EBU R128 meters (`Configuration.loudnessMetering`): fed on the render thread, it reads what the
/// file meter reads of the same output, allocates nothing, starts over on request, and is absent unless asked for.
final class MasterLoudnessTests: XCTestCase {
    private func engine(metering: Bool) throws -> Engine {
        var c = Engine.Configuration()
        c.maxBlockFrames = 512
        c.loudnessMetering = metering
        return try Engine(configuration: c)
    }

    func testMasterMeterReadsWhatTheFileMeterReads() throws {
        let engine = try engine(metering: true)
        XCTAssertEqual(engine.masterLoudness, LoudnessMeasurement())
        let frames = 4 * 48000
        let track = try engine.makeTrack(try stereoSound(frames, left: { 0.1 * sin(2 * .pi * 1000 * Double($0) / 48000) },
                                                         right: { 0.05 * sin(2 * .pi * 440 * Double($0) / 48000) }))
        try engine.play([track], at: engine.time(frame: 0))
        // 4 s in blocks of 333 frames (whole 100 ms sub-blocks at the end: 4 s = 40 of them).
        var mix = [Float]()
        var done = 0
        let block = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 333)
        defer { block.deallocate() }
        while done < frames {
            let n = min(333, frames - done)
            engine.render(interleaved: block, frames: n)
            mix.append(contentsOf: UnsafeBufferPointer(start: block, count: 2 * n))
            done += n
        }
        let live = try XCTUnwrap(engine.masterLoudness)
        let file = mix.withUnsafeBufferPointer { LoudnessNormalizer.measure($0, channelCount: 2, sampleRate: 48000) }
        XCTAssertNotNil(live.integrated)
        XCTAssertEqual(live, file)

        engine.resetMasterLoudness()
        engine.render(interleaved: block, frames: 1)
        XCTAssertNil(engine.masterLoudness?.integrated)
    }

    func testMasterMeterAllocatesNothingAndIsOffByDefault() throws {
        XCTAssertNil(try engine(metering: false).masterLoudness)
        let engine = try engine(metering: true)
        let track = try engine.makeTrack(try monoSound(48000) { 0.3 * sin(Double($0) * 0.05) })
        let direct = try engine.makeTrack(try monoSound(48000) { 0.1 * sin(Double($0) * 0.02) })
        try engine.setBus(busNumber(1), settings: BusSettings(volume: 0.8))
        try track.setBus(busNumber(1))
        try engine.play([track, direct], at: engine.time(frame: 0))
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 1024), right = UnsafeMutablePointer<Float>.allocate(capacity: 1024)
        defer { left.deallocate(); right.deallocate() }
        for k in 0..<80 {
            XCTAssertEqual(renderCountingAllocations(engine, k, left: left, right: right, frames: 512), 0, "block \(k)")
        }
        XCTAssertNotNil(engine.masterLoudness?.integrated)
        XCTAssertNotNil(try engine.loudness(on: busNumber(1))?.integrated)
    }

    /// A bus's meter reads what the bus adds to the output: alone on the master, the master's figures exactly.
    func testBusMeterReadsTheBusContribution() throws {
        let engine = try engine(metering: true)
        let bus = busNumber(2)
        try engine.setBus(bus, settings: BusSettings(volume: 0.5))
        let track = try engine.makeTrack(try stereoSound(2 * 48000, left: { 0.2 * sin(Double($0) * 0.11) },
                                                         right: { 0.1 * sin(Double($0) * 0.07) }))
        try track.setBus(bus)
        try engine.play([track], at: engine.time(frame: 0))
        let block = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 480)
        defer { block.deallocate() }
        for _ in 0..<200 { engine.render(interleaved: block, frames: 480) }
        let onBus = try XCTUnwrap(try engine.loudness(on: bus))
        XCTAssertNotNil(onBus.integrated)
        XCTAssertEqual(onBus, engine.masterLoudness)
        XCTAssertEqual(try engine.loudness(on: .master), engine.masterLoudness)
        try engine.resetLoudness(on: bus)
        engine.render(interleaved: block, frames: 1)
        XCTAssertNil(try engine.loudness(on: bus)?.integrated)
        XCTAssertNotNil(engine.masterLoudness?.integrated)
    }
}
