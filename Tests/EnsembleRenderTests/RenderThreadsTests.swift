import CAllocationCounter
import Foundation
import Synchronization
import XCTest
import EnsembleTestSupport
@_spi(Testing) import Ensemble
@_spi(Testing) import EnsembleFormats
@_spi(Testing) import EnsembleRender
@_spi(Testing) import EnsembleEngine
@_spi(Testing) import EnsembleOutput
@_spi(Testing) import EnsembleScene

/// `Engine.Configuration.renderThreads` and `ensemble render --threads`: validated, and (once the mixer renders
/// lanes on the pool) the same bytes for any thread count.
final class RenderThreadsTests: XCTestCase {
    func testRenderThreadsIsValidated() throws {
        for bad in [0, -1, Engine.Configuration.maxRenderThreads + 1] {
            var c = Engine.Configuration()
            c.renderThreads = bad
            XCTAssertThrowsError(try Engine(configuration: c)) { error in
                guard case .invalidParameter(name: "renderThreads", value: Double(bad), _)? = error as? EngineError else {
                    return XCTFail("expected invalidParameter(renderThreads), got \(error)")
                }
                XCTAssertEqual("\(error)", "renderThreads is \(Double(bad)); expected 1…64")
            }
        }
        XCTAssertEqual(Engine.Configuration().renderThreads, 1, "real time keeps one render thread unless configured")
        for good in [1, 2, Engine.Configuration.maxRenderThreads] {
            var c = Engine.Configuration()
            c.renderThreads = good
            XCTAssertNoThrow(try Engine(configuration: c))
        }
    }

    func testCommandLineRefusesABadThreadCountWithOneLine() throws {
        let dir = try TemporaryDirectory()
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.5, count: 100), rate: 48000).bytes, to: "tone.wav")
        let scene = try dir.write(Array(#"{ "tracks": [ { "file": "tone.wav" } ] }"#.utf8), to: "scene.json")
        for bad in ["0", "65"] {
            let out = dir.file("out.wav")
            let result = try runProcess(try ensembleExecutable(), ["render", scene, "-o", out, "--threads", bad])
            // A usage error (64, EX_USAGE) that names the option, not the scene, which is not at fault.
            XCTAssertEqual(result.status, 64, result.stderr)
            XCTAssertEqual(result.stderr, "ensemble: --threads \(bad): expected 1…64\n")
            XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        }
        let help = try runProcess(try ensembleExecutable(), ["render", "--help"])
        let usage = String(decoding: help.stdout, as: UTF8.self)
        XCTAssertTrue(usage.contains("--threads <n>"), usage)
    }

    func testCommandLineFileHasTheSameBytesForAnyThreadCount() throws {
        // 40 tracks (more than the 16 a span needs before its lanes go to the workers) at several rates and pans.
        let dir = try TemporaryDirectory()
        for k in 0..<4 {
            let tone = (0..<4000).map { Float(0.2 * sin(Double($0) * 0.01 * Double(k + 1))) }
            _ = try dir.write(WAVBuilder.float32(tone, rate: k % 2 == 0 ? 48000 : 44100).bytes, to: "t\(k).wav")
        }
        let tracks = (0..<40).map { i in
            #"{ "name": "v\#(i)", "file": "t\#(i % 4).wav", "start": \#(Double(i) * 0.001), "rate": \#(0.6 + 0.03 * Double(i)), "#
                + #""pan": \#(Double(i % 9) * 0.2 - 0.8), "volume": 0.5, "loops": \#(i % 3) }"#
        }
        let scene = try dir.write(Array(#"{ "duration": 0.4, "tracks": [ \#(tracks.joined(separator: ", ")) ] }"#.utf8),
                                  to: "scene.json")
        var files: [Data] = []
        for threads in [1, 2, 3, 4] {
            let out = dir.file("out-\(threads).wav")
            let result = try runProcess(try ensembleExecutable(), ["render", scene, "-o", out, "--threads", "\(threads)"])
            XCTAssertEqual(result.status, 0, result.stderr)
            files.append(try Data(contentsOf: URL(fileURLWithPath: out)))
        }
        XCTAssertGreaterThan(files[0].count, 19200 * 8)
        for (k, f) in files.enumerated().dropFirst() { XCTAssertEqual(f, files[0], "\(k + 1) threads") }
    }

    // MARK: Same bytes for any thread count

    private struct Outcome: Equatable {
        var samples: [UInt32]
        var ends: [String]
        var applied: [String]
        var lanesRunByWorkers: Int
        var renderAllocations: UInt64
        var workerAllocations: UInt64

        static func == (a: Outcome, b: Outcome) -> Bool {
            a.samples == b.samples && a.ends == b.ends && a.applied == b.applied
        }
    }

    /// One thread set through the configuration, and three (more than this machine's two cores, and an odd count
    /// to share the lanes); the long suite adds 2, 4 and 8 (`RenderThreadsLongTests`).
    func testAnyThreadCountGivesTheBytesOfTheSingleThreadedRender() throws {
        try Self.checkThreadCounts([1, 3])
    }

    static func checkThreadCounts(_ counts: [Int]) throws {
        let dir = try TemporaryDirectory()
        let tone = (0..<15000).map { Float(0.3 * sin(Double($0) * 0.023) + 0.1 * sin(Double($0) * 0.29)) }
        let streamedPath = try dir.write(WAVBuilder.float32(tone, rate: 44100).bytes, to: "streamed.wav")

        let plain = try Self.renderScene(streamedPath, threads: nil)
        XCTAssertTrue(plain.ends.contains { $0.hasSuffix("stolen") }, "an effect must be stolen: \(plain.ends)")
        XCTAssertTrue(plain.ends.contains { $0.hasPrefix("streamed ") }, "the streamed track must end: \(plain.ends)")
        XCTAssertGreaterThanOrEqual(plain.applied.count, 10, "\(plain.applied)")
        XCTAssertGreaterThan(plain.samples.filter { Float(bitPattern: $0).magnitude > 0.05 }.count, 10000)
        XCTAssertTrue(plain.samples.allSatisfy { Float(bitPattern: $0).isFinite })
        for threads in counts {
            let mix = try Self.renderScene(streamedPath, threads: threads)
            XCTAssertEqual(mix.samples.count, plain.samples.count)
            if let i = mix.samples.indices.first(where: { mix.samples[$0] != plain.samples[$0] }) {
                XCTFail("\(threads) threads: sample \(i) (frame \(i / 2)) is \(Float(bitPattern: mix.samples[i])), "
                        + "one thread gives \(Float(bitPattern: plain.samples[i]))")
            }
            XCTAssertEqual(mix.ends, plain.ends, "\(threads) threads: ends")
            XCTAssertEqual(mix.applied, plain.applied, "\(threads) threads: applied timed commands")
            if threads > 1 {
                XCTAssertGreaterThan(mix.lanesRunByWorkers, 0, "\(threads) threads: the workers took no lane")
            }
        }
    }

    func testRenderingOnTwoThreadsAllocatesNothingOnAnyThread() throws {
        let dir = try TemporaryDirectory()
        let tone = (0..<30000).map { Float(0.3 * sin(Double($0) * 0.023)) }
        let streamedPath = try dir.write(WAVBuilder.float32(tone, rate: 44100).bytes, to: "streamed.wav")
        // The first render takes the runtime's one-time allocations (metadata) of every path the scene uses.
        _ = try Self.renderScene(streamedPath, threads: 2)
        let counted = try Self.renderScene(streamedPath, threads: 2, countAllocations: true)
        XCTAssertGreaterThan(counted.lanesRunByWorkers, 0, "the workers took no lane, so their count proves nothing")
        XCTAssertEqual(counted.renderAllocations, 0, "the render thread allocated")
        XCTAssertEqual(counted.workerAllocations, 0, "a render worker thread allocated")
    }

    func testTheSharedCountSeesAWorkerThreadAllocate() {
        // The enrolment the engine's workers get (through `renderThreadStartHook`) makes a thread's allocations count.
        let counted = Atomic<UInt64>(0)
        let thread = Thread {
            allocation_counter_enroll()
            allocation_counter_shared_start()
            let p = malloc(32)
            free(p)
            counted.store(allocation_counter_shared_stop(), ordering: .releasing)
        }
        thread.start()
        let deadline = Date().addingTimeInterval(10)
        while counted.load(ordering: .acquiring) == 0 && Date() < deadline { usleep(1000) }
        XCTAssertGreaterThanOrEqual(counted.load(ordering: .acquiring), 1)
    }

    /// 72 tracks and 12 effect firings over the master and four buses with effect chains (EQ and delay, a low-pass,
    /// a limiter, and a limiter on the master): mono and stereo, 48, 44.1 and 32 kHz sources, rates 0.5…2 through
    /// the sinc and cubic resamplers, one pitch-keeping, fades in and out, loops (finite and endless), one streamed
    /// track; timed volume, pan, rate, stop, pause and resume commands and a timed bus volume; effects beyond the
    /// polyphony limit (steals); two tracks moving to another bus while sounding (crossfades). Rendered in blocks
    /// of 700 frames, so that timed commands split blocks into spans. `threads` nil: the default configuration.
    private static func renderScene(_ streamedPath: String, threads: Int?, countAllocations: Bool = false) throws -> Outcome {
        var c = Engine.Configuration()
        c.maxBlockFrames = 1024
        c.maxVoices = 128
        c.effectPolyphony = 4
        if let threads { c.renderThreads = threads }
        c.renderThreadStartHook = allocation_counter_enroll
        let engine = try Engine(configuration: c)
        XCTAssertEqual(engine.mixer.parallelLanes?.threadCount ?? 1, threads ?? 1)
        try engine.setBus(Bus(1), settings: BusSettings(volume: 0.8, pan: -0.2))
        try engine.setBus(Bus(2), settings: BusSettings(volume: 0.7, pan: 0.3))
        try engine.setBus(Bus(3), settings: BusSettings(volume: 0.9))
        try engine.setBus(Bus(4), settings: BusSettings(volume: 0.6, pan: 0.1))
        try engine.setEffects([EffectSpec.eq(preset: "Rock"), .delay(time: 0.01, feedback: 0.4, mix: 0.3)], on: Bus(1))
        try engine.setEffects([.filter(.lowpass, frequency: 2500, q: 0.7, gainDB: 0)], on: Bus(2))
        try engine.setEffects([.limiter(ceilingDB: -6, lookahead: 0.002, release: 0.02)], on: Bus(3))
        try engine.setEffects([.limiter(ceilingDB: -1, lookahead: 0.003, release: 0.05)], on: .master)

        let ends = Recorder<String>(), applied = Recorder<String>()
        var tracks: [Track] = []
        for i in 0..<72 {
            let length = 6000 + 211 * i
            let sound = i % 3 == 0
                ? try stereoSound(length, rate: 44100, name: "s\(i)", left: { sin(Double($0) * 0.007 * Double(i + 1)) * 0.04 },
                                  right: { cos(Double($0) * 0.011 * Double(i + 1)) * 0.04 })
                : try monoSound(length, rate: i % 2 == 0 ? 48000 : 32000, name: "m\(i)") {
                    sin(Double($0) * 0.013 * Double(i + 1)) * 0.04
                }
            let track = try engine.makeTrack(sound)
            try track.setBus(i % 5 == 0 ? .master : Bus(i % 5))
            try track.setVolume(0.5 + Float(i % 7) * 0.07)
            try track.setPan(Float(i % 9) * 0.25 - 1)
            try track.setRate([1, 1.25, 0.5, 2, 0.8][i % 5])
            if i % 4 == 3 { track.resampler = .cubic }
            try track.setNumberOfLoops(i % 6 == 0 ? -1 : i % 6 == 1 ? 2 : 0)
            if i % 5 == 2 { try track.setFadeIn(0.01) }
            if i % 7 == 3 { try track.setFadeOut(0.02) }
            if i == 7 { track.rateMode = .preservePitch }
            let name = "track \(i)"
            track.onFinish = { end in ends.append("\(name) \(end.time.frame) \(end.reason)") }
            try track.play(at: engine.time(frame: Int64(53 * i)))
            tracks.append(track)
        }
        let streamed = try engine.makeTrack(try Sound(streamingContentsOf: streamedPath))
        try streamed.setBus(Bus(1))
        try streamed.setNumberOfLoops(1)
        streamed.onFinish = { end in ends.append("streamed \(end.time.frame) \(end.reason)") }
        try streamed.play(at: engine.time(frame: 450))

        let changes: [(Int, TrackChange)] = [
            (2, .volume(0.2, ramp: 400.0 / 48000)), (5, .pan(-0.6, ramp: 300.0 / 48000)), (11, .rate(1.5)),
            (17, .volume(0.9, ramp: 0)), (23, .pause(fade: 200.0 / 48000)), (29, .stop(fade: 500.0 / 48000)),
            (35, .pan(0.9)), (41, .rate(0.7)), (47, .stop()), (53, .volume(0.1, ramp: 1000.0 / 48000)),
        ]
        for (k, (i, change)) in changes.enumerated() {
            _ = tracks[i].schedule(change, atFrame: Int64(2100 + 1733 * k), onApplied: { applied.append("\(i) \($0.frame)") })
        }
        _ = tracks[23].schedule(.resume(fade: 100.0 / 48000), atFrame: 15000, onApplied: { applied.append("23 resume \($0.frame)") })
        try engine.scheduleVolume(0.3, on: Bus(2), at: engine.time(frame: 9999), ramp: 2000.0 / 48000)

        let effect = try engine.registerEffect(try monoSound(5000, name: "fx") { sin(Double($0) * 0.05) * 0.1 })
        for j in 0..<12 {
            try engine.fire(effect, volume: 0.7, pan: 0.15 * Float(j % 7) - 0.45, at: engine.time(frame: Int64(1500 + 377 * j)),
                            bus: j % 4 == 0 ? .master : Bus(j % 4), completion: { done in ends.append("effect \(j) \(done.time.frame) \(done.reason)") })
        }

        let total = 36000
        var out = [Float](repeating: 0, count: 2 * total)
        var renderAllocations: UInt64 = 0, workerAllocations: UInt64 = 0
        try out.withUnsafeMutableBufferPointer { o in
            var done = 0
            while done < total {
                if done == 4900 { try tracks[6].setBus(Bus(3)) } // sounding: crossfades from bus 1 to bus 3
                if done == 11200 { try tracks[14].setBus(.master) } // from bus 4 to the master
                let n = min(700, total - done)
                engine.pumpCommands()
                engine.waitForStreams()
                if countAllocations {
                    allocation_counter_shared_start()
                    allocation_counter_start()
                }
                engine.render(interleaved: o.baseAddress! + 2 * done, frames: n)
                if countAllocations {
                    renderAllocations += allocation_counter_stop()
                    workerAllocations += allocation_counter_shared_stop()
                }
                done += n
            }
        }
        engine.waitForEvents()
        return Outcome(samples: out.map(\.bitPattern), ends: ends.values.sorted(), applied: applied.values.sorted(),
                       lanesRunByWorkers: engine.mixer.parallelLanes?.lanesRunByWorkers ?? 0,
                       renderAllocations: renderAllocations, workerAllocations: workerAllocations)
    }
}

/// `RenderThreadsTests`' thread counts 2, 4 and 8 (the long suite: `requireLongTests`).
final class RenderThreadsLongTests: XCTestCase {
    override func setUpWithError() throws { try requireLongTests() }

    func testMoreThreadCountsGiveTheBytesOfTheSingleThreadedRender() throws {
        try RenderThreadsTests.checkThreadCounts([2, 4, 8])
    }
}
