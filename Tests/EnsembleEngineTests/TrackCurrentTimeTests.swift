import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// `Track.currentTime` is the position being heard (like `AVAudioPlayer.currentTime`), `renderPosition` the one
/// the render side has reached; they differ by the output latency while an output plays, and agree offline.
final class TrackCurrentTimeTests: XCTestCase {
    private static let rate: Float = 1.5

    /// Offline there is no output latency: both read the cursor, floor(1.5 × frames since the start).
    func testOfflineCurrentTimeIsTheRenderPosition() throws {
        let engine = try makeEngine(maxBlockFrames: 500)
        let track = try engine.makeTrack(try monoSound(48000) { _ in 0.5 })
        try track.setRate(Self.rate)
        try track.play(at: engine.time(frame: 100))
        _ = render(engine, frames: 10000, block: 500)
        XCTAssertEqual(engine.outputLatency, 0)
        XCTAssertEqual(engine.now, engine.renderTime)
        XCTAssertEqual(track.renderPosition, 14850.0 / 48000, "1.5 × 9900 frames")
        XCTAssertEqual(track.currentTime, track.renderPosition)
    }

    /// Through the real-time wave device (a ring of 8 × 240 frames, 40 ms): the heard position follows the
    /// device clock, (now − start) × rate, and the render position the render clock, (renderTime − start) × rate.
    ///
    /// Tolerance: each sample brackets `currentTime` between two reads of `now`, microseconds apart, so the only
    /// errors are the cursor's rounding (< 1 source frame) and, rarely, a block finishing between the reads of a
    /// position and of the render clock (one block, 5 ms, off): so ≥ 90 % of 40 samples must be within 1 ms and
    /// the median within 0.25 ms. The latency itself is at least one 240-frame buffer, so a `currentTime` that
    /// reported the render position instead would miss by ≥ 7.5 ms (× 1.5) on every sample.
    func testRealTimeCurrentTimeTrailsTheRenderPositionByTheLatency() throws {
        try OpenALTestConfig.install()
        let engine = try makeEngine()
        let output = try OpenALOutput(engine: engine, configuration: .init(bufferCount: 8, bufferFrames: 240))
        defer { output.shutdown() }
        let track = try engine.makeTrack(try monoSound(3 * 48000) { _ in 0.25 })
        try track.setRate(Self.rate)
        try output.start()
        let start = engine.now.advanced(bySeconds: 0.05)
        try track.play(at: start)
        usleep(300_000)
        let rate = Double(Self.rate)
        var heardErrors: [Double] = [], renderErrors: [Double] = [], latencies: [Int64] = []
        for _ in 0..<40 {
            let n1 = engine.now.frame
            let heard = track.currentTime
            let n2 = engine.now.frame
            let low = Double(n1 - start.frame) * rate / 48000, high = Double(n2 - start.frame) * rate / 48000
            heardErrors.append(heard < low ? low - heard : heard > high ? heard - high : 0)
            let r1 = engine.renderTime.frame
            let rendered = track.renderPosition
            let r2 = engine.renderTime.frame
            if r1 == r2 {
                renderErrors.append(abs(rendered - (Double(r1 - start.frame) * rate).rounded(.down) / 48000))
                latencies.append(r1 - engine.now.frame)
            }
            usleep(5000)
        }
        // An underrun (a busy machine) holds both clocks together; the brackets above still apply.
        func check(_ errors: [Double], _ what: String) {
            XCTAssertGreaterThanOrEqual(errors.count, 20, what)
            let sorted = errors.sorted()
            XCTAssertLessThan(sorted[sorted.count / 2], 0.00025, "\(what): median error")
            let within = errors.filter { $0 < 0.001 }.count
            XCTAssertGreaterThanOrEqual(Double(within), 0.9 * Double(errors.count), "\(what): \(sorted.suffix(4))")
        }
        check(heardErrors, "currentTime vs (now − start) × rate")
        check(renderErrors, "renderPosition vs (renderTime − start) × rate")
        let medianLatency = latencies.sorted()[latencies.count / 2]
        XCTAssertGreaterThanOrEqual(medianLatency, 240, "the render side runs at least a buffer ahead")
        XCTAssertLessThanOrEqual(medianLatency, 8 * 240 + 4800, "at most the ring plus 100 ms of device latency")
        print("currentTime: latency median \(medianLatency) frames, heard error median \(heardErrors.sorted()[20] * 1e6) µs, \(output.underrunCount) underruns")
    }
}
