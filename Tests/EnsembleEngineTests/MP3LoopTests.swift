import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// MP3 loops have no encoder-delay gap: libmpg123's gapless decode drops LAME's delay and padding (from the
/// Info tag), so a looped MP3 equals its decoded samples written out N times, sample for sample, in memory
/// and streamed.
final class MP3LoopTests: XCTestCase {
    private func engine44k() throws -> Engine {
        var c = Engine.Configuration()
        c.sampleRate = 44100
        return try Engine(configuration: c)
    }

    private func renderLooped(_ sound: Sound, loops: Int, frames: Int, block: Int) throws -> Mix {
        let engine = try engine44k()
        let track = try engine.makeTrack(sound)
        try track.setNumberOfLoops(loops)
        try track.play(at: track.engine.time(frame: 5))
        return render(engine, frames: frames, block: block) { _ in engine.waitForStreams() }
    }

    func testLoopedMP3EqualsTheDecodedSamplesWrittenOutNTimes() throws {
        for (file, seconds) in [("mp3/sine440-mono-cbr128.mp3", 1.0), ("mp3/sine440-stereo-vbr.mp3", 0.5)] {
            let path = fixture(file)
            let decoded = try AudioFile.decode(path: path)
            let n = decoded.channels[0].count
            // Gapless: exactly the source's length (no encoder delay, no padding), and the first samples are the
            // sine's start (sin 0 = 0), not the decoder's silent priming.
            XCTAssertEqual(n, Int(seconds * 44100), file)
            XCTAssertLessThan(abs(decoded.channels[0][0]), 0.01, file)
            XCTAssertGreaterThan(abs(decoded.channels[0][10]), 0.02, file)
            let loops = 3
            let written = try Sound(DecodedAudio(sampleRate: 44100, channels: decoded.channels.map { ch in
                Array(repeating: ch, count: loops + 1).flatMap { $0 }
            }), name: "written")
            let frames = 5 + (loops + 1) * n + 100
            let expected = try renderLooped(written, loops: 0, frames: frames, block: 4096)
            XCTAssertEqual(expected.endOfSound, 5 + (loops + 1) * n, file)
            for (label, sound) in [("memory", try Sound(contentsOf: path)), ("stream", try Sound(streamingContentsOf: path))] {
                for block in [512, 1000] {
                    let got = try renderLooped(sound, loops: loops, frames: frames, block: block)
                    assertSameBits(got.left, expected.left, "\(file) \(label) block \(block) (left)")
                    assertSameBits(got.right, expected.right, "\(file) \(label) block \(block) (right)")
                }
            }
        }
    }
}
