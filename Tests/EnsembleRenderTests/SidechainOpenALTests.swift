import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The ducking scene of `SidechainTests` played in real time through OpenAL Soft's wave writer equals its offline
/// render sample for sample: the bus order and the key levels depend on frames and commands only.
final class SidechainOpenALTests: XCTestCase {
    func testRealTimeEqualsOffline() throws {
        let recordingPath = try OpenALTestConfig.install()
        let length = SidechainTests.frames
        let offline = try makeEngine()
        let offlineTracks = try SidechainTests.build(offline, music: 2, voice: 5, lookahead: 0.002)
        let reference = offline.renderOffline(frames: Int64(length))
        withExtendedLifetime(offlineTracks) {}
        XCTAssertLessThan(SidechainTests.musicLevel(Mix(left: stride(from: 0, to: reference.count, by: 2).map { reference[$0] },
                                                        right: []), 30000..<48000), -14, "the offline render ducks")

        var recording: [Float] = []
        for attempt in 1...3 {
            let engine = try makeEngine()
            let output = try OpenALOutput(engine: engine, configuration: .init(bufferCount: 16, bufferFrames: 480))
            XCTAssertEqual(output.device.name, "Wave File Writer")
            try output.start()
            // Buses, chains and the start are all set while the device plays; the start lies half a second beyond
            // what the render side has rendered (its ring runs ahead of the device clock).
            let start = engine.time(frame: engine.renderedFrame + 24000)
            let tracks = try SidechainTests.build(engine, music: 2, voice: 5, lookahead: 0.002, start: start)
            let deadline = Date().addingTimeInterval(15)
            while engine.currentFrame < start.frame + Int64(length) + 48000 && Date() < deadline { usleep(50_000) }
            let underruns = output.underrunCount
            output.shutdown()
            withExtendedLifetime(tracks) {}
            engine.waitForEvents()
            recording = try interleavedStereo(recordingPath)
            if underruns == 0 { break }
            print("run \(attempt) had \(underruns) underrun(s) (machine busy); repeating")
            XCTAssertLessThan(attempt, 3, "underruns in every run")
        }
        let first = try XCTUnwrap(firstSoundingFrame(recording)) - XCTUnwrap(firstSoundingFrame(reference))
        XCTAssertGreaterThanOrEqual(recording.count, 2 * (first + length), "the whole scene was recorded")
        assertSameBits(frames(recording, first..<(first + length)), reference, "real time vs offline")
    }
}
