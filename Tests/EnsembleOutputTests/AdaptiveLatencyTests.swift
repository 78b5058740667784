import Foundation
import Synchronization
import XCTest
import EnsembleTestSupport
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput

/// Adaptive latency: an underrun within 10 s of the previous one doubles the output's ring, up to
/// `Configuration.maximumLatency`; the timeline and the samples are unchanged, `latency`, `bufferCount` and
/// `Engine.outputLatency` follow, and the engine publishes `outputLatencyIncreased`. Underruns are caused by
/// stalling the render thread for longer than any ring in play (150 ms against at most 80 ms), so each stall is
/// one underrun whatever the machine does; a busy machine can only add underruns, which the assertions allow
/// (the rule itself, with its clock passed in, is `RingGrowthRuleTests`).
final class AdaptiveLatencyTests: XCTestCase {
    private static let bufferFrames = 240

    /// Plays a 3 s ramp-like sound, stalls the render thread `stalls` times 0.4 s apart, and returns the output's
    /// figures, the latencies the engine's events reported, and whether the recording holds every rendered sample.
    private func run(stalls: Int, maximumLatency: Double)
        throws -> (start: Int, end: Int, growths: Int, underruns: Int, latency: Double, engineLatency: Double,
                   reported: [Double], samplesKept: Bool, seconds: Double) {
        let recording = try OpenALTestConfig.install()
        let length = 144_000
        let sound = try monoSound(length) { 0.1 + 0.8 * Double($0 % 1000) / 1000 }
        let engine = try makeEngine()
        let events = engine.events()
        let output = try OpenALOutput(engine: engine, configuration: .init(
            bufferCount: 4, bufferFrames: Self.bufferFrames, maximumLatency: maximumLatency))
        let start = output.bufferCount
        let track = try engine.makeTrack(sound)
        let began = DispatchTime.now().uptimeNanoseconds
        try output.start()
        try track.play(at: engine.now.advanced(bySeconds: 0.05))
        usleep(200_000)
        for _ in 0..<stalls {
            output.stallRenderThreadForTesting(0.15)
            usleep(400_000)
        }
        let engineLatency = engine.outputLatency
        XCTAssertTrue(try output.waitUntilPlayed(engine.time(seconds: 0.05).advanced(byFrames: Int64(length) + 4800), timeout: 10))
        let end = output.bufferCount, growths = output.ringGrowthCount, underruns = output.underrunCount
        let latency = output.latency
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9
        output.shutdown()
        engine.waitForEvents()
        let reported: [Double]
        if growths > 0 {
            let target = latency
            reported = drainEventsBlocking(events) { read in
                read.contains { if case let .outputLatencyIncreased(l, _) = $0 { l == target } else { false } }
            }.compactMap { if case let .outputLatencyIncreased(l, _) = $0 { l } else { nil } }
        } else {
            reported = drainEventsBlocking(events, through: engine).compactMap {
                if case let .outputLatencyIncreased(l, _) = $0 { l } else { nil }
            }
        }
        // Every rendered sample is in the recording, in order, around the gaps the underruns left.
        let offline = try makeEngine()
        let offlineTrack = try offline.makeTrack(sound)
        try offlineTrack.play(at: offline.time(frame: 0))
        let reference = offline.renderOffline(frames: Int64(length))
        withExtendedLifetime(offlineTrack) {}
        let played = try interleavedStereo(recording)
        var sounding: [Float] = []
        var i = try XCTUnwrap(firstSoundingFrame(played))
        while sounding.count < reference.count && 2 * i + 1 < played.count {
            if played[2 * i] != 0 || played[2 * i + 1] != 0 { sounding += [played[2 * i], played[2 * i + 1]] }
            i += 1
        }
        let kept = sounding.count == reference.count && zip(sounding, reference).allSatisfy { $0.bitPattern == $1.bitPattern }
        return (start, end, growths, underruns, latency, engineLatency, reported, kept, seconds)
    }

    /// The ring sizes the doublings pass through from `start` buffers up to the cap `maximumLatency` allows (never
    /// below `start`), worked from the rule's statement.
    private static func doublings(from start: Int, maximumLatency: Double) -> [Int] {
        let cap = max(Int((maximumLatency * 48000).rounded()) / bufferFrames, start)
        var sizes: [Int] = [], count = start
        while count < cap {
            count = min(2 * count, cap)
            sizes.append(count)
        }
        return sizes
    }

    /// The latency of a ring of `buffers` buffers, seconds.
    private static func latency(_ buffers: Int) -> Double { Double(buffers * bufferFrames) / 48000 }

    func testRepeatedUnderrunsDoubleTheRingUpToTheCap() throws {
        // 80 ms at 240-frame buffers: 16 buffers at most.
        let r = try run(stalls: 4, maximumLatency: 0.08)
        let sizes = Self.doublings(from: r.start, maximumLatency: 0.08)
        let cap = sizes.last ?? r.start
        XCTAssertGreaterThanOrEqual(r.underruns, 4, "each stall is an underrun")
        XCTAssertEqual(r.end, cap, "doubled up to the cap, never past it")
        XCTAssertEqual(r.growths, sizes.count, "one growth per doubling, none once at the cap")
        XCTAssertEqual(r.latency, Self.latency(cap))
        // Each growth is announced once (growths 0.4 s apart are never coalesced by the event thread's poll).
        XCTAssertEqual(r.reported, sizes.map(Self.latency))
        // The engine's latency counts the grown ring (and the device's own latency on top).
        XCTAssertGreaterThanOrEqual(r.engineLatency, Self.latency(cap) - 0.001)
        XCTAssertTrue(r.samplesKept, "the timeline and the rendered samples are unchanged by the growth")
    }

    func testOneUnderrunDoesNotGrowTheRing() throws {
        // One stall is one underrun; a busy machine may add its own, and each one within 10 s of the previous
        // (rightly) doubles the ring. So: the growths are the underruns after the first, up to the cap (the whole
        // run inside the 10 s window) or at most that (a longer run), and a lone underrun grows nothing. Up to
        // three tries for a run with the lone underrun; every try checks the rule.
        for attempt in 1...3 {
            let r = try run(stalls: 1, maximumLatency: 0.5)
            let sizes = Self.doublings(from: r.start, maximumLatency: 0.5)
            let repeated = min(max(r.underruns - 1, 0), sizes.count)
            XCTAssertGreaterThanOrEqual(r.underruns, 1, "the stall is an underrun")
            if r.seconds < 10 {
                XCTAssertEqual(r.growths, repeated, "one growth per underrun after the first (\(r.underruns) underruns)")
            } else {
                XCTAssertLessThanOrEqual(r.growths, repeated, "\(r.underruns) underruns over \(r.seconds) s")
            }
            XCTAssertEqual(r.end, r.growths == 0 ? r.start : sizes[r.growths - 1])
            XCTAssertEqual(r.reported, sizes.prefix(r.growths).map(Self.latency))
            XCTAssertTrue(r.samplesKept)
            if r.underruns == 1 || attempt == 3 { return }
        }
    }

    func testMaximumLatencyAtTheStartKeepsTheRingFixed() throws {
        let r = try run(stalls: 3, maximumLatency: 0)
        XCTAssertGreaterThanOrEqual(r.underruns, 3)
        XCTAssertEqual(r.growths, 0)
        XCTAssertEqual(r.end, r.start)
        XCTAssertEqual(r.reported, [])
        XCTAssertTrue(r.samplesKept)
    }

    func testMaximumLatencyOutsideItsRangeIsRefused() throws {
        try OpenALTestConfig.install()
        for bad in [-0.001, 10.5, .nan, .infinity] {
            let engine = try makeEngine()
            XCTAssertThrowsError(try OpenALOutput(engine: engine, configuration: .init(maximumLatency: bad))) { error in
                guard case let .invalidParameter(name, _, expected) = error as? OutputError else {
                    return XCTFail("\(error)")
                }
                XCTAssertEqual(name, "maximumLatency")
                XCTAssertEqual(expected, "0…10 s")
            }
        }
    }
}
