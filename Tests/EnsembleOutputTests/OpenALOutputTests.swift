import CAllocationCounter
import Foundation
import Synchronization
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Allocations the render thread made inside our refill code, and refills probed (see the allocation test).
private let probedAllocations = Atomic<UInt64>(0)
private let probedRefills = Atomic<Int>(0)
/// Allocations inside whole service passes, OpenAL's calls included (reported, not asserted).
private let passAllocations = Atomic<UInt64>(0)

/// The real-time output in process, through OpenAL Soft's wave writer, and the loopback renderer.
/// Every test calls `OpenALTestConfig.install()` before its first OpenAL call (see there).
final class OpenALOutputTests: XCTestCase {
    private static let rate = 48000.0

    /// Plays `body` on a fresh engine through the wave device and returns the recording (interleaved).
    ///
    /// The wave writer imitates a sound card with a timer: when its thread wakes late on a loaded machine it
    /// catches up by mixing several periods at once, which can drain any ring. A run that had an underrun is
    /// therefore repeated (up to 3 runs; `body` must reset what it records) unless `allowUnderruns`; the
    /// underrun behaviour itself has its own test.
    private func session(bufferCount: Int = 4, bufferFrames: Int = 240, allowUnderruns: Bool = false,
                         _ body: (Engine, OpenALOutput) throws -> Void) throws -> [Float] {
        let recording = try OpenALTestConfig.install()
        for attempt in 1...3 {
            let engine = try makeEngine()
            let output = try OpenALOutput(engine: engine, configuration: .init(bufferCount: bufferCount, bufferFrames: bufferFrames))
            XCTAssertEqual(output.device.name, "Wave File Writer")
            XCTAssertEqual(output.device.sampleRate, 48000)
            try output.start()
            do {
                try body(engine, output)
            } catch {
                output.shutdown()
                throw error
            }
            let underruns = output.underrunCount, underrunFrame = output.lastUnderrunFrame
            output.shutdown()
            XCTAssertFalse(output.isRunning)
            engine.waitForEvents()
            if allowUnderruns || underruns == 0 { return try interleavedStereo(recording) }
            print("run \(attempt) had \(underruns) underrun(s), last at engine frame \(underrunFrame ?? -1) (machine busy); repeating")
            XCTAssertLessThan(attempt, 3, "underruns in every run")
        }
        return try interleavedStereo(recording)
    }

    /// Test 2. Effects fired from another thread while playing: each lands on the first frame of the next
    /// buffer the render thread fills, so within one buffer period of the end of what was already queued when
    /// it was fired (on the device clock: within the ring's latency plus one buffer).
    func testEffectsFiredFromAnotherThreadLandWithinOneBuffer() throws {
        let firings = 8
        let requests = Mutex<[(rendered: Int64, played: Int64)]>([])
        let ends = Mutex<[Int64]>([])
        var queued = 0, bufferFrames = 0, deviceLatency = 0
        // 8 × 5 ms: a roomier ring than the default, so a busy CI machine does not underrun mid-measurement.
        let recording = try session(bufferCount: 8) { engine, output in
            requests.withLock { $0 = [] }
            ends.withLock { $0 = [] }
            queued = output.queuedFrames
            bufferFrames = output.configuration.bufferFrames
            let fx = try engine.registerEffect(try monoSound(100) { _ in 0.5 })
            usleep(100_000)
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                for k in 0..<firings {
                    usleep(UInt32(60_000 + 7_000 * k))
                    let played = engine.currentFrame, rendered = engine.renderedFrame
                    _ = try? engine.fire(fx) { c in ends.withLock { $0.append(c.time.frame) } }
                    requests.withLock { $0.append((rendered, played)) }
                }
                done.signal()
            }
            done.wait()
            usleep(150_000)
            deviceLatency = Int((output.deviceLatency * Self.rate).rounded())
        }
        let starts = ends.withLock { $0 }.map { $0 - 100 }.sorted()
        let asked = requests.withLock { $0 }
        XCTAssertEqual(starts.count, firings)
        var deviceLatencies: [Double] = []
        for (start, request) in zip(starts, asked) {
            // Render timeline: the next buffer rendered after the request (0 or 1 buffer later).
            XCTAssertGreaterThanOrEqual(start, request.rendered)
            XCTAssertLessThanOrEqual(start - request.rendered, Int64(bufferFrames))
            // Device timeline: the clock trails the renderer by the ring plus the device latency OpenAL reports;
            // the effect comes after those, late by at most one buffer period.
            let earliest = request.played + Int64(queued + deviceLatency)
            XCTAssertLessThanOrEqual(abs(start - earliest), Int64(bufferFrames), "fired at device frame \(request.played)")
            deviceLatencies.append(Double(start - request.played) / Self.rate * 1000)
        }
        let mean = deviceLatencies.reduce(0, +) / Double(deviceLatencies.count)
        print(String(format: "effect fire → first sample on the device clock: mean %.2f ms, max %.2f ms (ring %.1f ms + device %.1f ms, buffer %.1f ms)",
                     mean, deviceLatencies.max() ?? 0, Double(queued) / 48, Double(deviceLatency) / 48, Double(bufferFrames) / 48))
        // And they are heard there: the recording has each effect's first sample at lead + its start frame.
        let lead = try XCTUnwrap(firstSoundingFrame(recording)) - Int(starts[0])
        let offline = try makeEngine()
        try offline.fire(try offline.registerEffect(try monoSound(100) { _ in 0.5 }), at: offline.time(frame: 1))
        let expected = offline.renderOffline(frames: 102)
        for start in starts {
            let at = lead + Int(start)
            assertSameBits(frames(recording, (at - 1)..<(at + 101)), expected, "effect at \(start) in the recording")
        }
    }

    /// Test 3. `play(at: currentTime + 0.08)` (beyond the 40 ms ring) on three different tracks while playing: one start frame for
    /// all, and the recording from there equals an offline render of the three started together on frame 0.
    func testGroupStartWhilePlayingBeginsOnOneFrame() throws {
        let sounds = [try monoSound(9000, name: "ramp", rampValue),
                      try stereoSound(7000, rate: 44100, left: { 0.2 + 0.1 * sin(Double($0) * 0.01) }, right: { -0.15 * cos(Double($0) * 0.02) }),
                      try monoSound(8000, name: "saw") { 0.05 + Double($0 % 97) / 400 }]
        func setUp(_ engine: Engine) throws -> [Track] {
            let tracks = try sounds.map { try engine.makeTrack($0) }
            try tracks[0].setPan(-0.5)
            try tracks[1].setRate(1.1)
            try tracks[2].setPan(0.7)
            try tracks[2].setRate(1.25)
            return tracks
        }
        let startFrames = Mutex<[Int64]>([])
        var groupFrame: Int64 = 0
        let recording = try session(bufferCount: 8) { engine, output in
            startFrames.withLock { $0 = [] }
            let tracks = try setUp(engine)
            for t in tracks { t.onStart = { f in let f = f.frame; startFrames.withLock { $0.append(f) } } }
            usleep(150_000)
            let when = engine.now.seconds + 0.08
            groupFrame = try engine.time(seconds: when).frame
            XCTAssertGreaterThan(groupFrame, engine.renderedFrame, "the start is still ahead of the renderer")
            try engine.play(tracks, at: engine.time(seconds: when))
            usleep(350_000)
        }
        XCTAssertEqual(startFrames.withLock { $0 }, [groupFrame, groupFrame, groupFrame])

        let offline = try makeEngine()
        let offlineTracks = try setUp(offline)
        try offline.play(offlineTracks, at: offline.time(frame: 0))
        let length = 9000
        let reference = offline.renderOffline(frames: Int64(length))
        withExtendedLifetime(offlineTracks) {}
        let first = try XCTUnwrap(firstSoundingFrame(recording))
        assertSameBits(frames(recording, first..<(first + length)), reference, "group start in the recording")
        print("group start: engine frame \(groupFrame), recording frame \(first), all three tracks on it")
    }

    /// A firing asked for a frame already heard (behind `now`, so behind the renderer by the latency too) is late:
    /// it plays whole from its first frame where the render side took it, and its completion says how late.
    /// `earliestStartTime` is never behind the render clock.
    func testLateFireWhilePlayingPlaysWholeAndReportsHowLate() throws {
        let length = 3000
        let sound = try monoSound(length) { 0.1 + Double($0 % 500) / 1000 }
        let done = Mutex<[EffectCompletion]>([])
        var asked: Int64 = 0
        let recording = try session(bufferCount: 8) { engine, output in
            done.withLock { $0 = [] }
            let fx = try engine.registerEffect(sound)
            usleep(150_000)
            let rendered = engine.renderedFrame
            XCTAssertGreaterThanOrEqual(engine.earliestStartTime.frame, rendered)
            asked = engine.now.frame - 480
            try engine.fire(fx, pan: -1, at: engine.time(frame: asked)) { c in done.withLock { $0.append(c) } }
            // It lands by the end of the block being rendered: well within 2 blocks past `rendered`.
            let by = rendered + 2 * Int64(engine.configuration.maxBlockFrames) + Int64(length) + 2400
            XCTAssertTrue(try output.waitUntilPlayed(engine.time(frame: by), timeout: 5))
        }
        let completion = try XCTUnwrap(done.withLock { $0 }.first)
        XCTAssertEqual(done.withLock { $0.count }, 1)
        XCTAssertEqual(completion.reason, .finished)
        XCTAssertGreaterThanOrEqual(completion.lateBy, 480, "asked for a frame already heard")
        XCTAssertEqual(completion.time.frame, asked + completion.lateBy + Int64(length), "started late, played whole")

        let offline = try makeEngine()
        try offline.fire(try offline.registerEffect(sound), pan: -1, at: offline.time(frame: 0))
        let reference = offline.renderOffline(frames: Int64(length))
        let first = try XCTUnwrap(firstSoundingFrame(recording))
        assertSameBits(frames(recording, first..<(first + length)), reference, "the whole firing in the recording")
    }

    /// Test 5. The render thread's refill code (Engine.render plus our fade and bookkeeping) allocates
    /// nothing while tracks play and effects are fired from another thread. OpenAL Soft 1.19's own
    /// `alSourceQueueBuffers` allocates a queue entry per buffer inside OpenAL; that is counted separately and
    /// reported, not asserted.
    func testRenderThreadRefillAllocatesNothing() throws {
        probedAllocations.store(0, ordering: .relaxed)
        probedRefills.store(0, ordering: .relaxed)
        passAllocations.store(0, ordering: .relaxed)
        let recording = try OpenALTestConfig.install()
        let engine = try makeEngine()
        let output = try OpenALOutput(engine: engine)
        output.setRenderThreadProbeForTesting { phase in
            switch phase {
            case 1: allocation_counter_start()
            case 2:
                probedAllocations.add(allocation_counter_stop(), ordering: .relaxed)
                probedRefills.add(1, ordering: .relaxed)
            default: break
            }
        }
        let loop = try engine.makeTrack(try stereoSound(5000, rate: 44100, left: { sin(Double($0) * 0.05) * 0.3 }, right: rampValue))
        try loop.setNumberOfLoops(-1)
        loop.isMeteringEnabled = true
        let fx = try engine.registerEffect(try monoSound(300) { _ in 0.1 })
        try output.start()
        try engine.play([loop], at: engine.now.advanced(bySeconds: 0.01))
        for k in 0..<20 {
            usleep(20_000)
            try engine.fire(fx, pan: k % 2 == 0 ? -0.5 : 0.5)
            try loop.setPan(Float(k % 5) / 5)
        }
        output.shutdown()
        XCTAssertGreaterThan(probedRefills.load(ordering: .relaxed), 50, "the probe ran on the render thread")
        XCTAssertEqual(probedAllocations.load(ordering: .relaxed), 0, "our refill code allocated")

        // For the record: whole passes, OpenAL included.
        let engine2 = try makeEngine()
        let output2 = try OpenALOutput(engine: engine2)
        output2.setRenderThreadProbeForTesting { phase in
            if phase == 3 { allocation_counter_start() }
            if phase == 4 { passAllocations.add(allocation_counter_stop(), ordering: .relaxed) }
        }
        try output2.start()
        usleep(200_000)
        output2.shutdown()
        print("allocations inside OpenAL calls on the render thread over 0.2 s: \(passAllocations.load(ordering: .relaxed))")
        _ = recording
    }

    /// Underruns: a render thread stalled for 150 ms (and later 60 ms) lets the source run dry; each is counted, the
    /// source restarted, and the engine timeline is unchanged (the track still ends exactly its length after
    /// it started, and the recording holds every rendered sample, in order, around a gap of silence).
    func testUnderrunIsCountedAndTimelineKept() throws {
        let length = 48000
        let sound = try monoSound(length) { 0.1 + 0.8 * Double($0 % 1000) / 1000 }
        let started = Mutex<Int64>(-1), finished = Mutex<Int64>(-1)
        var underruns = 0
        let recording = try session(allowUnderruns: true) { engine, output in
            let track = try engine.makeTrack(sound)
            track.onStart = { f in let f = f.frame; started.withLock { $0 = f } }
            track.onFinish = { e in finished.withLock { $0 = e.time.frame } }
            try track.play(at: engine.now.advanced(bySeconds: 0.05))
            usleep(200_000)
            output.stallRenderThreadForTesting(0.15)
            usleep(400_000)
            output.stallRenderThreadForTesting(0.06)
            XCTAssertTrue(try output.waitUntilPlayed(engine.time(seconds: 0.05).advanced(byFrames: Int64(length) + 2400), timeout: 3))
            XCTAssertFalse(track.isPlaying)
            XCTAssertLessThanOrEqual(engine.currentFrame, engine.renderedFrame)
            underruns = output.underrunCount
            XCTAssertNotNil(output.lastUnderrunFrame)
        }
        XCTAssertGreaterThanOrEqual(underruns, 2, "each stall must have caused an underrun")
        let s = started.withLock { $0 }, f = finished.withLock { $0 }
        XCTAssertEqual(f - s, Int64(length), "engine timeline unchanged")
        let offline = try makeEngine()
        let offlineTrack = try offline.makeTrack(sound)
        try offlineTrack.play(at: offlineTrack.engine.time(frame: 0))
        let reference = offline.renderOffline(frames: Int64(length))
        withExtendedLifetime(offlineTrack) {}
        let first = try XCTUnwrap(firstSoundingFrame(recording))
        var sounding: [Float] = [], gap = 0, i = first
        while sounding.count < reference.count && 2 * i + 1 < recording.count {
            if recording[2 * i] == 0 && recording[2 * i + 1] == 0 { gap += 1 } else { sounding += [recording[2 * i], recording[2 * i + 1]] }
            i += 1
        }
        assertSameBits(sounding, reference, "rendered samples around the underrun")
        XCTAssertGreaterThan(gap, 4800, "gaps of silence where the source ran dry")
        print("underruns: \(underruns), silent gap \(gap) frames (\(Double(gap) / 48) ms)")
    }

    /// Engine-wide pause while playing: the engine clock stops on the freeze frame (rendered and played),
    /// the device plays silence, and after `resume` the track goes on from exactly there; the recording is
    /// the render with a gap, a 5 ms ramp down before it and a ramp up after it (gains from the contract).
    func testEnginePauseWhilePlayingHoldsTheClockAndResumesInSync() throws {
        let length = 24000, ramp = 240
        let sound = try monoSound(length) { 0.1 + 0.8 * Double($0 % 1000) / 1000 }
        var start: Int64 = 0, freeze: Int64 = 0
        let recording = try session(bufferCount: 8) { engine, output in
            let track = try engine.makeTrack(sound)
            start = try engine.time(seconds: engine.now.seconds + 0.05).frame
            try track.play(at: track.engine.time(frame: start))
            usleep(200_000)
            XCTAssertNotEqual(output.realTimePriority, .notStarted, "the render thread reported its scheduling")
            engine.pause()
            usleep(100_000)
            freeze = engine.renderedFrame
            XCTAssertTrue(try output.waitUntilPlayed(engine.time(frame: freeze), timeout: 1))
            usleep(50_000)
            XCTAssertEqual(engine.renderedFrame, freeze, "the timeline stands still while paused")
            XCTAssertEqual(engine.currentFrame, freeze, "the device clock holds on the freeze frame")
            XCTAssertTrue(track.isPlaying)
            engine.resume()
            XCTAssertTrue(try output.waitUntilPlayed(engine.time(frame: start + Int64(length) + 2400), timeout: 3))
            XCTAssertFalse(track.isPlaying)
        }
        let offline = try makeEngine()
        let offlineTrack = try offline.makeTrack(sound)
        try offlineTrack.play(at: offlineTrack.engine.time(frame: 0))
        var expected = offline.renderOffline(frames: Int64(length))
        withExtendedLifetime(offlineTrack) {}
        let f = Int(freeze - start)
        XCTAssertGreaterThan(f, ramp)
        XCTAssertLessThan(f, length - ramp)
        for i in (f - ramp)..<(f + ramp) {
            let g = i < f ? Float(f - i) / Float(ramp) : Float(i - f) / Float(ramp)
            expected[2 * i] *= g
            expected[2 * i + 1] *= g
        }
        let lead = try XCTUnwrap(firstSoundingFrame(recording))
        assertSameBits(frames(recording, lead..<(lead + f)), frames(expected, 0..<f), "before the pause")
        // Frame f has gain 0; the first sounding frame after the gap is f + 1.
        let back = try XCTUnwrap(firstSoundingFrame(recording, from: lead + f))
        assertSameBits(frames(recording, back..<(back + length - f - 1)), frames(expected, (f + 1)..<length), "after the resume")
        let gap = back - (lead + f + 1)
        XCTAssertGreaterThan(gap, 4800, "the device played silence while paused")
        print("engine pause while playing: froze at scene frame \(f), silent for \(gap) frames")
    }

    /// Test 4 (library). A device name that does not exist is a typed error; the engine is free again after.
    func testUnknownDeviceIsATypedError() throws {
        try OpenALTestConfig.install()
        let engine = try makeEngine()
        XCTAssertThrowsError(try OpenALOutput(engine: engine, configuration: .init(deviceName: "No Such Card"))) { error in
            XCTAssertEqual(error as? OutputError, .deviceNotFound(name: "No Such Card", available: ["Wave File Writer"]))
        }
        XCTAssertEqual(OpenALDevice.availableDevices(), ["Wave File Writer"])
        XCTAssertThrowsError(try OpenALOutput(engine: engine, configuration: .init(bufferCount: 1))) { error in
            XCTAssertEqual(error as? OutputError, .invalidParameter(name: "bufferCount", value: 1, expected: "2…64"))
        }
        let output = try OpenALOutput(engine: engine)
        // Printed as a person reads it (it was "EnsembleOutput.OpenALDevice").
        XCTAssertEqual("\(output.device)", "\"Wave File Writer\" at 48000 Hz, period 240 frames")
        XCTAssertThrowsError(try OpenALLoopback(engine: engine)) { XCTAssertEqual($0 as? OutputError, .engineBusy) }
        output.shutdown()
        XCTAssertNoThrow(try OpenALLoopback(engine: engine).close())
    }

    /// The loopback route renders faster than real time and passes the mix through OpenAL bit for bit.
    func testLoopbackEqualsOfflineRender() throws {
        try OpenALTestConfig.install()
        func build(_ engine: Engine) throws {
            let a = try engine.makeTrack(try stereoSound(6000, rate: 44100, left: { sin(Double($0) * 0.03) * 0.4 }, right: rampValue))
            try a.setNumberOfLoops(2)
            try a.setPan(0.25)
            let b = try engine.makeTrack(try monoSound(3000) { cos(Double($0) * 0.07) * 0.3 })
            try b.setRate(0.8)
            try engine.play([a, b], at: engine.time(frame: 100))
            try engine.fire(try engine.registerEffect(try monoSound(200) { _ in 0.25 }), pan: -1, at: engine.time(frame: 5003))
        }
        let offline = try makeEngine()
        try build(offline)
        let reference = offline.renderOffline(frames: 20000)

        let engine = try makeEngine()
        try build(engine)
        let loopback = try OpenALLoopback(engine: engine, bufferCount: 3, bufferFrames: 256)
        let started = monotonicNanos()
        let out = loopback.render(frames: 20000)
        let seconds = Double(monotonicNanos() - started) * 1e-9
        // A loopback device plays only when pulled: wall time passing must not move its clock.
        usleep(50_000)
        XCTAssertEqual(engine.currentFrame, 20000, "the clock counts frames pulled through OpenAL")
        // Ahead by the ring: 3 buffers, less the part of one already pulled (20000 = 78 × 256 + 32).
        XCTAssertEqual(engine.renderedFrame, (3 + 78) * 256, "the ring is rendered ahead")
        XCTAssertEqual(loopback.underrunCount, 0)
        loopback.close()
        XCTAssertEqual(engine.currentFrame, engine.renderedFrame, "closed: the render clock again")
        assertSameBits(out, reference, "loopback vs offline")
        print(String(format: "loopback: 20000 frames in %.1f ms (%.0f× real time)", seconds * 1000, 20000 / 48000 / seconds))
    }
}
