import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The voice mix is split into lanes (`MixLane`) that an offline render may run on several threads. Lanes must
/// share no state: running them in any order has to give the same bytes and the same events. Here they run
/// first to last and last to first over a scene that uses everything a lane touches.
final class LaneTests: XCTestCase {
    private struct Outcome: Equatable {
        var samples: [UInt32]
        var ends: [String]
        var applied: [String]
    }

    /// Lanes on different cores write their own voices every span: the pool starts on a cache line and a voice
    /// fills whole lines, so no line holds two voices (a performance property, checked here so that a change of
    /// `Voice`'s size that breaks it is seen).
    func testVoicesDoNotShareCacheLines() {
        let pool = VoicePool(capacity: 3, sampleRate: 48000)
        defer { pool.deallocate() }
        XCTAssertEqual(Int(bitPattern: pool.slots) % 64, 0)
        XCTAssertEqual(MemoryLayout<Voice>.stride % 64, 0, "Voice is \(MemoryLayout<Voice>.stride) bytes a slot")
    }

    func testLanesInReverseOrderGiveTheSameBytesAndEvents() throws {
        let dir = try TemporaryDirectory()
        let frames = 48000
        let tone = (0..<frames).map { Float(0.4 * sin(Double($0) * 0.031) + 0.1 * sin(Double($0) * 0.17)) }
        let streamedPath = try dir.write(WAVBuilder.float32(tone, rate: 44100).bytes, to: "streamed.wav")

        let forward = try renderScene(streamedPath, reversed: false)
        let backward = try renderScene(streamedPath, reversed: true)
        XCTAssertEqual(forward.samples.count, backward.samples.count)
        if let i = forward.samples.indices.first(where: { forward.samples[$0] != backward.samples[$0] }) {
            XCTFail("lanes in reverse order differ at sample \(i) (frame \(i / 2))")
        }
        XCTAssertEqual(forward.ends, backward.ends)
        XCTAssertEqual(forward.applied, backward.applied)
        // The scene did what it is for: a stolen effect, timed commands applied, sound on the output.
        XCTAssertTrue(forward.ends.contains { $0.hasSuffix("stolen") }, "\(forward.ends)")
        XCTAssertGreaterThanOrEqual(forward.applied.count, 4)
        XCTAssertTrue(forward.samples.contains { Float(bitPattern: $0).magnitude > 0.05 })
    }

    /// 24 tracks and 6 effects (spread over the 8 lanes, four to a lane) on the master and three buses (one with
    /// an effect chain): resampled, stereo and mono, one pitch-keeping, one streamed; timed volume, pan and stop changes; a track moving to
    /// another bus while sounding (a crossfade); effects over the polyphony limit (a steal). Rendered in blocks
    /// of 700 frames so that timed commands split blocks into spans.
    private func renderScene(_ streamedPath: String, reversed: Bool) throws -> Outcome {
        var c = Engine.Configuration()
        c.maxBlockFrames = 1024
        c.maxVoices = 64
        c.effectPolyphony = 3
        let engine = try Engine(configuration: c)
        XCTAssertEqual(engine.mixer.laneCount, MixLane.defaultCount)
        engine.mixer.lanesInReverseForTesting = reversed
        XCTAssertFalse(engine.mixer.laneAccumulators.isPrepared(bus: 1))
        for bus in 1...3 { try engine.setBus(Bus(bus), settings: BusSettings(volume: 0.5 + 0.1 * Float(bus), pan: 0.2 * Float(bus - 2))) }
        // Lane accumulators exist for the master and the buses set up, not for the 13 others.
        XCTAssertEqual((0..<BusRack.count).filter { engine.mixer.laneAccumulators.isPrepared(bus: $0) }, [0, 1, 2, 3])
        try engine.setEffects([.filter(.lowpass, frequency: 3000, q: 0.7, gainDB: 0)], on: Bus(2))

        let ends = Recorder<String>(), applied = Recorder<String>()
        var tracks: [Track] = []
        for i in 0..<24 {
            let sound = i % 3 == 0
                ? try stereoSound(20000 + 500 * i, rate: 44100, name: "s\(i)", left: { sin(Double($0) * 0.01 * Double(i + 1)) * 0.05 },
                                  right: { cos(Double($0) * 0.013 * Double(i + 1)) * 0.05 })
                : try monoSound(18000 + 700 * i, rate: i % 2 == 0 ? 48000 : 32000, name: "m\(i)") {
                    sin(Double($0) * 0.02 * Double(i + 1)) * 0.05
                }
            let track = try engine.makeTrack(sound)
            try track.setBus(i % 4 == 0 ? .master : Bus(i % 4))
            try track.setPan(Float(i % 5) * 0.4 - 0.8)
            try track.setRate(i % 4 == 1 ? 1.25 : 1)
            try track.setNumberOfLoops(i % 6 == 0 ? 1 : 0)
            if i == 7 { track.rateMode = .preservePitch }
            let name = "track \(i)"
            track.onFinish = { end in ends.append("\(name) \(end.time.frame) \(end.reason)") }
            try track.play(at: engine.time(frame: Int64(97 * i)))
            tracks.append(track)
        }
        let streamed = try engine.makeTrack(try Sound(streamingContentsOf: streamedPath))
        try streamed.setBus(Bus(1))
        streamed.onFinish = { end in ends.append("streamed \(end.time.frame) \(end.reason)") }
        try streamed.play(at: engine.time(frame: 300))

        for (k, i) in [2, 5, 11, 17].enumerated() {
            let frame = Int64(3000 + 1234 * k)
            let change: TrackChange = k % 2 == 0 ? .volume(0.3, ramp: 400.0 / 48000) : .pan(-0.5, ramp: 200.0 / 48000)
            XCTAssertNotNil(tracks[i].schedule(change, atFrame: frame, onApplied: { applied.append("\(i) \($0.frame)") }))
        }
        XCTAssertNotNil(tracks[13].schedule(.stop(fade: 300.0 / 48000), atFrame: 9001, onApplied: { applied.append("13 stop \($0.frame)") }))

        let effect = try engine.registerEffect(try monoSound(6000, name: "fx") { sin(Double($0) * 0.05) * 0.1 })
        for j in 0..<6 {
            try engine.fire(effect, volume: 0.8, pan: 0.1 * Float(j), at: engine.time(frame: Int64(2000 + 400 * j)), bus: j % 3 == 0 ? .master : Bus(j % 3),
                            completion: { done in ends.append("effect \(j) \(done.time.frame) \(done.reason)") })
        }

        let total = 40000
        var out = [Float](repeating: 0, count: 2 * total)
        try out.withUnsafeMutableBufferPointer { o in
            var done = 0
            while done < total {
                if done == 4900 { try tracks[6].setBus(Bus(3)) } // sounding: crossfades from bus 2 to bus 3
                let n = min(700, total - done)
                engine.pumpCommands()
                engine.waitForStreams()
                engine.render(interleaved: o.baseAddress! + 2 * done, frames: n)
                done += n
            }
        }
        engine.waitForEvents()
        return Outcome(samples: out.map(\.bitPattern), ends: ends.values.sorted(), applied: applied.values.sorted())
    }
}
