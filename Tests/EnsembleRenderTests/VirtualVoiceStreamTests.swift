import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// A streamed track that goes virtual consumes its ring as if it played: when it comes back it reads the frames
/// of the position it would have reached, bit for bit those of the same track played from memory, and the same
/// as a render where it never went virtual once its fade-in is over.
final class VirtualVoiceStreamTests: XCTestCase {
    /// 3 s of the streaming tests' signal at 44.1 kHz (resampled to 48 kHz), looping, silenced on 20,000 and
    /// back on 100,000 (virtual from the update on 20,480, silent from 20,720, back on the update on 100,352, full
    /// from 100,592).
    private func render(_ path: String, streamed: Bool, threshold: Float) throws -> [Float] {
        var c = Engine.Configuration()
        c.maxBlockFrames = 1000
        c.virtualThreshold = threshold
        c.streamBufferDuration = 0.5
        let engine = try Engine(configuration: c)
        let sound = streamed ? try Sound(streamingContentsOf: path) : try Sound(contentsOf: path)
        XCTAssertEqual(sound.isStreamed, streamed)
        let t = try engine.makeTrack(sound)
        try t.setNumberOfLoops(-1)
        try t.play(at: engine.time(frame: 0))
        try t.setVolume(0.0001, at: engine.time(frame: 20000), ramp: 0)
        try t.setVolume(1, at: engine.time(frame: 100_000), ramp: 0)
        let frames = 200_000
        var out = [Float](repeating: 0, count: 2 * frames)
        out.withUnsafeMutableBufferPointer { o in
            var done = 0
            while done < frames {
                let n = min(1000, frames - done)
                engine.pumpCommands()
                engine.waitForStreams()
                engine.render(interleaved: o.baseAddress! + 2 * done, frames: n)
                done += n
            }
        }
        if streamed { XCTAssertEqual(engine.streamStatistics().underruns, 0) }
        return out
    }

    func testStreamedVirtualTrackComesBackOnItsFrames() throws {
        let dir = try TemporaryDirectory()
        let path = try TestFiles.makeFile(dir, "s", container: "wav", codec: .pcm16, seconds: 3, rate: 44100,
                                               channels: 2)
        let streamed = try render(path, streamed: true, threshold: 0.001)
        let memory = try render(path, streamed: false, threshold: 0.001)
        let never = try render(path, streamed: false, threshold: 0)
        XCTAssertEqual(streamed.map(\.bitPattern), memory.map(\.bitPattern), "streamed and in memory")
        XCTAssertTrue(streamed[(2 * 20720)..<(2 * 100_352)].allSatisfy { $0 == 0 }, "virtual, not mixed")
        let back = 2 * 100_592
        assertSameBits(Array(streamed[back...]), Array(never[back...]), "back where it would have been")
        XCTAssertGreaterThan(streamed[back...].map { abs($0) }.max() ?? 0, 0.1, "sounding")
    }
}
