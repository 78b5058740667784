import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Frames the application computes on request (`PCMSource`): played through the stream loader, so loops, seeks, offsets, scheduled starts, rates and 3D give the bits of the same frames held in memory.
final class PCMSourceTests: XCTestCase {
    /// Frame f of channel c: a function of f alone, so any read at any position gives the same samples.
    static func value(_ f: Int, _ c: Int) -> Float {
        Float(0.5 * sin(2 * Double.pi * (330 + 110 * Double(c)) * Double(f) / 44100) + 0.1 * sin(Double(f) * 0.37))
    }

    static func source(frames: Int, channels: Int, reads: Locked<[Int]>? = nil, failAt: Int? = nil) throws -> PCMSource {
        try PCMSource(name: "synth", sampleRate: 44100, channelCount: channels, frameCount: frames) { frame, buffer in
            reads?.append(frame)
            var n = buffer.count / channels
            if let failAt, frame + n > failAt { n = max(0, failAt - frame) }
            for i in 0..<n {
                for c in 0..<channels { buffer[i * channels + c] = value(frame + i, c) }
            }
            return n
        }
    }

    private func render(_ sound: Sound, blocks: Int, block: Int,
                        between: ([Track], Int) throws -> Void) throws -> [Float] {
        var c = Engine.Configuration()
        c.maxBlockFrames = 2048
        c.streamBufferDuration = 0.25
        let engine = try Engine(configuration: c)
        var tracks: [Track] = []
        for (i, rate) in [Float(1), 1.3, 0.75].enumerated() {
            let t = try engine.makeTrack(sound)
            try t.setRate(rate)
            try t.setPan(Float(i) * 0.4 - 0.4)
            try t.setVolume(0.5)
            try t.setNumberOfLoops(i == 0 ? 3 : -1)
            if i == 2 { try t.setCurrentTime(0.6) }
            tracks.append(t)
        }
        let positioned = try engine.makeTrack(sound)
        try positioned.setSpatial(SpatialSource(position: Vector3(1, 0, -2), velocity: Vector3(-3, 0, 0)))
        tracks.append(positioned)
        try engine.play(tracks, at: engine.time(frame: 123))
        var out = [Float](repeating: 0, count: 2 * blocks * block)
        for k in 0..<blocks {
            try between(tracks, k)
            engine.pumpCommands()
            engine.waitForStreams()
            out.withUnsafeMutableBufferPointer { engine.render(interleaved: $0.baseAddress! + 2 * k * block, frames: block) }
        }
        return out
    }

    func testPlaysLikeTheSameFramesInMemory() throws {
        for channels in [1, 2] {
            let frames = 44100   // 1 s
            let reads = Locked<[Int]>([])
            let pcm = try Sound(pcmSource: Self.source(frames: frames, channels: channels, reads: reads))
            XCTAssertTrue(pcm.isStreamed)
            XCTAssertEqual(pcm.frameCount, frames)
            let memory = try Sound(DecodedAudio(sampleRate: 44100, channels: (0..<channels).map { c in
                (0..<frames).map { Self.value($0, c) }
            }), name: "memory")
            let between: ([Track], Int) throws -> Void = { tracks, k in
                // Seeks while paused (a seek while playing catches up as a file's stream does: not bit-exact).
                if k == 30 { tracks[1].pause() }
                if k == 32 { try tracks[1].setCurrentTime(0.9) }
                if k == 34 { tracks[1].play() }
                if k == 60 { tracks[0].pause() }
                if k == 62 { try tracks[0].setCurrentTime(0.05) }      // a seek while paused
                if k == 64 { tracks[0].play() }
            }
            let a = try render(pcm, blocks: 180, block: 1000, between: between)
            let b = try render(memory, blocks: 180, block: 1000, between: between)
            XCTAssertGreaterThan(b.map(abs).max() ?? 0, 0.1)
            assertSameBits(a, b, "\(channels) channels")
            // The loader asked for frames at positions other than the running one: loop seams and seeks.
            let positions = reads.value
            XCTAssertTrue(positions.contains(0))
            XCTAssertTrue(zip(positions, positions.dropFirst()).contains { $1 < $0 }, "went back for a loop or a seek")
        }
    }

    /// A source that stops giving frames ends its tracks with `.failed` after the frames it gave; the engine
    /// reports the error naming it.
    func testASourceThatFailsEndsItsTrack() throws {
        let engine = try Engine()
        let sound = try Sound(pcmSource: Self.source(frames: 44100, channels: 1, failAt: 22050))
        let track = try engine.makeTrack(sound)
        let ends = Locked<[TrackEnd]>([])
        track.onFinish = { ends.append($0) }
        try track.play(at: engine.time(frame: 0))
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 1000)
        defer { buffer.deallocate() }
        for _ in 0..<60 {
            engine.pumpCommands()
            engine.waitForStreams()
            engine.render(interleaved: buffer, frames: 1000)
        }
        engine.waitForEvents()
        XCTAssertEqual(ends.value.map(\.reason), [.failed])
        // 22050 frames at 44.1 kHz are 24000 at 48 kHz.
        XCTAssertEqual(Double(ends.value.first?.time.frame ?? 0), 24000, accuracy: 2)
        let error = engine.streamStatistics().errors.first
        XCTAssertEqual(error?.path, "synth")
        XCTAssertEqual(error?.kind, .truncated)
    }

    func testInvalidSourcesAreRefused() {
        let read: PCMSource.Read = { _, _ in 0 }
        XCTAssertThrowsError(try PCMSource(sampleRate: 10, channelCount: 1, frameCount: 10, read: read))
        XCTAssertThrowsError(try PCMSource(sampleRate: 48000, channelCount: 3, frameCount: 10, read: read))
        XCTAssertThrowsError(try PCMSource(sampleRate: 48000, channelCount: 1, frameCount: 0, read: read))
    }
}
