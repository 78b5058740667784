import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// `Engine.renderOffline`: the one call gives the bytes of the loop it replaces (pump commands, throttle events,
/// wait for streams, render), in memory and in a file, and reports progress that only grows and ends at the total.
final class OfflineRenderingTests: XCTestCase {
    private var dir: TemporaryDirectory!

    override func setUpWithError() throws { dir = try TemporaryDirectory() }
    override func tearDown() { dir = nil }

    /// A scene with a streamed track (so the loader must be waited for), a resampled looping track, a timed
    /// command and a burst of effects (so commands and events queue up).
    private func scene() throws -> (Engine, [Track]) {
        let engine = try makeEngine(maxBlockFrames: 512, maxVoices: 256)
        let samples = (0..<30000).map { Int16(truncatingIfNeeded: ($0 * 37) % 20000 - 10000) }
        let path = try dir.write(WAVBuilder.pcm16(samples, rate: 44100).bytes, to: "streamed.wav")
        let streamed = try engine.makeTrack(Sound(streamingContentsOf: path))
        let looped = try engine.makeTrack(try monoSound(700) { rampValue($0) })
        try looped.setRate(1.3)
        try looped.setNumberOfLoops(3)
        try looped.setPan(-0.4)
        try streamed.play(at: engine.time(frame: 10))
        try looped.play(at: engine.time(frame: 333))
        XCTAssertNotNil(looped.schedule(.volume(0.3, ramp: 100.0 / 48000), atFrame: 2000))
        let fx = try engine.registerEffect(try monoSound(200) { _ in 0.2 })
        for i in 0..<100 { try engine.fire(fx, pan: Float(i % 3) - 1, at: engine.time(frame: Int64(40 * i + 7))) }
        return (engine, [streamed, looped])
    }

    /// The loop every offline renderer wrote by hand before `renderOffline`.
    private func manualLoop(_ engine: Engine, frames: Int, block: Int, _ write: (UnsafeBufferPointer<Float>) throws -> Void) rethrows {
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
        defer { buffer.deallocate() }
        var done = 0
        while done < frames {
            let n = min(block, frames - done)
            engine.pumpCommands()
            engine.throttleEvents()
            engine.waitForStreams()
            engine.render(interleaved: buffer, frames: n)
            try write(UnsafeBufferPointer(start: buffer, count: 2 * n))
            done += n
        }
    }

    func testInMemoryMatchesTheManualLoopAndProgressEndsAtTheTotal() throws {
        let frames = 9000, block = 512
        let (manualEngine, manualTracks) = try scene()
        var expected: [Float] = []
        manualLoop(manualEngine, frames: frames, block: block) { expected += $0 }
        withExtendedLifetime(manualTracks) {}

        let (engine, tracks) = try scene()
        var reports: [OfflineRenderProgress] = []
        let got = engine.renderOffline(frames: Int64(frames), blockFrames: block) { reports.append($0) }
        withExtendedLifetime(tracks) {}
        XCTAssertEqual(got.count, 2 * frames)
        XCTAssertEqual(got.map(\.bitPattern), expected.map(\.bitPattern), "the same samples, bit for bit")
        XCTAssertTrue(got.contains { $0 != 0 }, "the scene is audible")

        // ⌈9000 / 512⌉ = 18 blocks: 17 full ones and one of 9000 − 17·512 = 296 frames.
        XCTAssertEqual(reports.count, 18)
        XCTAssertEqual(reports.map(\.framesRendered), (1...17).map { Int64($0 * 512) } + [9000])
        XCTAssertTrue(reports.allSatisfy { $0.totalFrames == 9000 })
        XCTAssertEqual(reports.last?.fraction, 1)
        XCTAssertEqual(reports.filter(\.isComplete).count, 1, "only the last report is complete")
    }

    func testDefaultBlockIsTheEnginesLargestWithTheSameSamples() throws {
        let frames = 9000
        let (manualEngine, manualTracks) = try scene()
        var expected: [Float] = []
        manualLoop(manualEngine, frames: frames, block: 300) { expected += $0 }
        withExtendedLifetime(manualTracks) {}

        let (engine, tracks) = try scene()
        var reports: [Int64] = []
        let got = engine.renderOffline(frames: Int64(frames)) { reports.append($0.framesRendered) }
        withExtendedLifetime(tracks) {}
        XCTAssertEqual(got.map(\.bitPattern), expected.map(\.bitPattern), "the same samples as 300-frame blocks")
        // The scene's engine renders at most 512 frames a block: ⌈9000 / 512⌉ = 18 reports.
        XCTAssertEqual(engine.configuration.maxBlockFrames, 512)
        XCTAssertEqual(reports, (1...17).map { Int64($0 * 512) } + [9000])
    }

    func testIntoAFileMatchesTheManualLoopByteForByte() throws {
        let frames: Int64 = 7000, block = 1000
        let format = OutputFormat(container: .wav, codec: .pcm16)
        let (manualEngine, manualTracks) = try scene()
        let manualPath = dir.file("manual.wav")
        let manualSink = try AudioFileSink(path: manualPath, format: format, sampleRate: 48000, channelCount: 2)
        try manualLoop(manualEngine, frames: Int(frames), block: block) { try manualSink.write(interleaved: $0) }
        try manualSink.finish()
        withExtendedLifetime(manualTracks) {}

        let (engine, tracks) = try scene()
        let path = dir.file("one-call.wav")
        let sink = try AudioFileSink(path: path, format: format, sampleRate: 48000, channelCount: 2)
        var reports: [Int64] = []
        try engine.renderOffline(frames: frames, blockFrames: block, to: sink) { reports.append($0.framesRendered) }
        try sink.finish()
        withExtendedLifetime(tracks) {}

        let a = try Data(contentsOf: URL(fileURLWithPath: manualPath)), b = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertEqual(a.count, 44 + 4 * Int(frames), "a 16-bit stereo WAV of 7000 frames")
        XCTAssertEqual(a, b)
        XCTAssertEqual(reports, (1...7).map { Int64($0 * 1000) })
    }

    /// A sink at another rate than the engine's is refused before anything is rendered (it used to write 48 kHz
    /// samples into a file labelled 44.1 kHz: played 8 % slow and flat).
    func testASinkAtAnotherRateIsRefused() throws {
        let (engine, tracks) = try scene()
        let path = dir.file("wrong-rate.wav")
        let sink = try AudioFileSink(path: path, format: OutputFormat(container: .wav, codec: .pcm16), sampleRate: 44100,
                                     channelCount: 2)
        XCTAssertThrowsError(try engine.renderOffline(frames: 1000, to: sink)) { error in
            XCTAssertEqual((error as? AudioFileError)?.kind, .unsupported)
            XCTAssertEqual((error as? AudioFileError)?.detail, "the sink writes 44100 Hz; the engine renders at 48000 Hz")
        }
        XCTAssertEqual(engine.renderedFrame, 0, "nothing rendered")
        sink.abort()
        withExtendedLifetime(tracks) {}
    }

    func testEveryEventIsDeliveredWhenTheCallReturns() throws {
        let (engine, tracks) = try scene()
        let ends = Recorder<TrackEnd>()
        tracks[1].onFinish = { ends.append($0) }
        // 700 frames at rate 1.3 (step 1.3 at equal rates), 4 passes: 2800 source frames, ⌈2800 / 1.3⌉ = 2154
        // output frames from its start on 333.
        _ = engine.renderOffline(frames: 3000, blockFrames: 512)
        XCTAssertEqual(ends.values.map(\.time.frame), [333 + 2154], "reported before renderOffline returned")
        XCTAssertEqual(ends.values.map(\.reason), [.finished])
    }
}
