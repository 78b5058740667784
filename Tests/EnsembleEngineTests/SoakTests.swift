import CAllocationCounter
@testable import EnsembleSoak
import Foundation
import XCTest
import EnsembleTestSupport
@_spi(Testing) import Ensemble
@_spi(Testing) import EnsembleFormats
@_spi(Testing) import EnsembleRender
@_spi(Testing) import EnsembleEngine
@_spi(Testing) import EnsembleOutput
@_spi(Testing) import EnsembleScene

/// The soak (CONTRIBUTING.md, "Soak"): random traffic from four control threads against one engine, every voice, firing and
/// timed command reported exactly once, memory flat, and the mix equal to a replay of its command log. The
/// long run is `swift run -c release ensemble-bench --soak MINUTES`.
final class SoakTests: XCTestCase {
    func testRandomTrafficFromFourThreadsKeepsEveryAccountAndReplaysBitExactly() throws {
        // SOAK_SEED reproduces a failure (each control thread's calls follow from it; their interleaving does not).
        let seed = ProcessInfo.processInfo.environment["SOAK_SEED"].flatMap { UInt64($0) } ?? 0x5EED_0011
        var c = SoakConfiguration(seed: seed, seconds: 1)
        c.roundFrames = 12000
        c.warmUpRounds = 2
        // Debug build, busy machine: the rounds are few, so the bound only has to catch a leak per call or per
        // block (a thousand calls and 190 blocks: 1 KB each would pass 1 MB); the long run measures.
        c.memoryBound = 1 << 20
        let report = try Soak.run(c)
        print(report)
        XCTAssert(report.failures.isEmpty, "\(report)")
        // The traffic really happened, on every path the checks cover.
        XCTAssertGreaterThan(report.counts.voices, 50, "\(report)")
        XCTAssertGreaterThan(report.counts.trackStarts, 20, "\(report)")
        XCTAssertGreaterThan(report.counts.completions, 50, "\(report)")
        XCTAssertGreaterThan(report.counts.applied, 50, "\(report)")
        XCTAssertGreaterThan(report.counts.cancelled, 0, "\(report)")
        XCTAssertGreaterThan(report.counts.endReasons[.stolen] ?? 0, 0, "the voice cap and polyphony limit must bite")
        XCTAssertGreaterThan(report.counts.endReasons[.stopped] ?? 0, 0, "\(report)")
        XCTAssertGreaterThan(report.counts.endReasons[.refused] ?? 0, 0, "the per-effect limits must bite")
        XCTAssertGreaterThan(report.loggedCommands, 600, "\(report)")
        XCTAssertGreaterThan(report.customEffects, 0, "custom effects in chains, replayed by twins")
        XCTAssertGreaterThan(report.insertsSet, 0, "custom effects on track inserts, replayed by twins")
        XCTAssertGreaterThan(report.insertsCleared, 0, "\(report)")
        XCTAssertGreaterThan(report.generatedStarts, 0, "generated tracks, replayed by twin generators")
        XCTAssertGreaterThan(report.parameterChanges, 0, "\(report)")
    }

    /// The same traffic in real time through OpenAL Soft's wave writer while another thread reopens the device at
    /// random moments: every voice, firing and timed command is still reported exactly once, nothing is dropped,
    /// the timeline goes on (the replay of the render side's command log fits its block grid), memory stays flat.
    func testRealTimeTrafficSurvivesDeviceReopens() throws {
        try OpenALTestConfig.install()
        let seed = ProcessInfo.processInfo.environment["SOAK_SEED"].flatMap { UInt64($0) } ?? 0x5EED_0012
        var c = SoakConfiguration(seed: seed, seconds: 1.5)
        c.realTime = true
        c.reopenInterval = 0.15
        c.roundFrames = 12000
        c.memoryBound = 1 << 20
        let report = try Soak.run(c)
        print(report)
        XCTAssert(report.failures.isEmpty, "\(report)")
        XCTAssertGreaterThan(report.reopens, 2, "\(report)")
        XCTAssertGreaterThan(report.counts.voices, 30, "\(report)")
        XCTAssertGreaterThan(report.counts.completions, 30, "\(report)")
        XCTAssertGreaterThan(report.loggedCommands, 300, "\(report)")
    }

    private func loggingConfiguration(block: Int) -> Engine.Configuration {
        var c = Engine.Configuration()
        c.maxBlockFrames = block
        c.maxVoices = 64
        c.commandLogCapacity = 4096
        return c
    }

    /// The replay check can fail: the same log renders the same bytes, and the log less one start does not.
    /// `blocks` blocks of 128 frames from `engine` (stereo, interleaved), `step(k)` called before block k, and
    /// the command log drained after each block.
    private func renderLogged(_ engine: Engine, blocks: Int, _ step: (Int) throws -> Void) throws
        -> (mix: [Float], log: [LoggedCommand]) {
        var mix = [Float](repeating: 0, count: 2 * 128 * blocks)
        var log: [LoggedCommand] = []
        try mix.withUnsafeMutableBufferPointer { out in
            for k in 0..<blocks {
                try step(k)
                engine.render(interleaved: out.baseAddress! + 2 * 128 * k, frames: 128)
                engine.drainCommandLog(into: &log)
            }
        }
        return (mix, log)
    }

    func testReplayOfTheCommandLogMatchesAndNoticesAMissingCommand() throws {
        let c = loggingConfiguration(block: 128)
        let engine = try Engine(configuration: c)
        let tone = try monoSound(3000) { sin(Double($0) * 0.05) * 0.5 }
        let ramp = try stereoSound(2000, rate: 44100, left: rampValue, right: { -rampValue($0) })
        let a = try engine.makeTrack(tone), b = try engine.makeTrack(ramp)
        try b.setRate(1.3)
        try b.setNumberOfLoops(2)
        let fx = try engine.registerEffect(tone)
        let chain: [EffectSpec] = [.delay(time: 0.01, feedback: 0.4, mix: 0.5)]
        try engine.setEffects(chain, on: busNumber(2))

        let frames = 128 * 40
        let (live, log) = try renderLogged(engine, blocks: 40) { k in
            switch k {
            case 0: a.play()
            case 3: try b.play(at: b.engine.time(frame: 500))
            case 5: try b.setBus(busNumber(2))
            case 9: try engine.fire(fx, volume: 0.5, pan: 0.3, at: engine.time(frame: 1300), bus: busNumber(2))
            case 12: try a.setPan(-0.7)
            case 20: _ = b.schedule(.seek(to: frameSeconds(100)), atFrame: 2700)
            case 25: a.stop()
            default: break
            }
        }
        XCTAssertEqual(engine.lostCommandLogEntries, 0)
        XCTAssert(log.allSatisfy { $0.frame % 128 == 0 })
        XCTAssertGreaterThan(live.map(abs).max() ?? 0, 0.1)

        func replay(_ entries: [LoggedCommand]) -> [Float] {
            var out = [Float](repeating: 0, count: 2 * frames)
            let replay = CommandReplay(configuration: c)
            let fits = out.withUnsafeMutableBufferPointer { o in
                replay.render(entries[...], frames: frames, blockFrames: 128, into: o.baseAddress!) { bus in
                    XCTAssertEqual(bus, 2)
                    return chain
                }
            }
            XCTAssert(fits)
            return out
        }
        XCTAssertEqual(replay(log).map(\.bitPattern), live.map(\.bitPattern))
        let withoutFirstStart = log.filter { if case .start = $0.command { return $0.frame != 0 } else { return true } }
        XCTAssertLessThan(withoutFirstStart.count, log.count)
        XCTAssertNotEqual(replay(withoutFirstStart).map(\.bitPattern), live.map(\.bitPattern))
    }

    /// A track insert and a generated source replay through twins given to the replay: with them the bytes match;
    /// with the insert replayed as none, or a generator twin made with another level, they do not.
    func testReplayRunsTwinsOfTrackInsertsAndGeneratedSources() throws {
        let c = loggingConfiguration(block: 128)
        let engine = try Engine(configuration: c)
        let a = try engine.makeTrack(try monoSound(6000) { sin(Double($0) * 0.05) * 0.5 })
        let effect = try CustomEffect(SoakTremolo(), parameters: [6, 0.9])
        let source = try GeneratedSource(SoakGenerator(length: 3000), channelCount: 2, parameters: [440, 0.4])
        let g = try engine.makeTrack(try Sound(generator: source, sampleRate: engine.sampleRate))

        let frames = 128 * 40
        let (live, log) = try renderLogged(engine, blocks: 40) { k in
            switch k {
            case 0:
                try a.setInsert(effect)
                a.play()
            case 2: try g.play(at: engine.time(frame: 300))
            case 8: try engine.setParameter(1, to: 0.3, of: effect)
            case 12: try engine.scheduleParameter(0, to: 880, of: source, at: engine.time(frame: 2000))
            case 30: try a.setInsert(nil)
            default: break
            }
        }
        XCTAssertEqual(engine.lostCommandLogEntries, 0)

        /// The log replayed with fresh twins (the insert's left out if `insert` is false; the generator's level
        /// `level`), parameter changes mapped onto them.
        func replay(insert: Bool, level: Float) throws -> [Float] {
            let effectTwin = try CustomEffect(SoakTremolo(), parameters: [6, 0.9])
            let sourceTwin = try GeneratedSource(SoakGenerator(length: 3000), channelCount: 2, parameters: [440, level])
            var out = [Float](repeating: 0, count: 2 * frames)
            let replay = CommandReplay(configuration: c)
            let fits = out.withUnsafeMutableBufferPointer { o in
                replay.render(log[...], frames: frames, blockFrames: 128, into: o.baseAddress!,
                              parameterTarget: { $0 == effect.parameters + 1 ? effectTwin.parameters + 1 : sourceTwin.parameters },
                              insertTwin: { slot in
                                  XCTAssertEqual(slot, Int(a.slot))
                                  return insert ? effectTwin : nil
                              },
                              generatorTwin: { $0 === source ? sourceTwin : nil }) { _ in [] }
            }
            XCTAssert(fits)
            return out
        }
        XCTAssertEqual(try replay(insert: true, level: 0.4).map(\.bitPattern), live.map(\.bitPattern))
        XCTAssertNotEqual(try replay(insert: false, level: 0.4).map(\.bitPattern), live.map(\.bitPattern))
        XCTAssertNotEqual(try replay(insert: true, level: 0.3).map(\.bitPattern), live.map(\.bitPattern))
    }

    /// Recording the commands costs the render side no allocation (it is a preallocated ring).
    func testRenderingWithTheCommandLogOnAllocatesNothing() throws {
        let engine = try Engine(configuration: loggingConfiguration(block: 256))
        let track = try engine.makeTrack(try monoSound(20000) { sin(Double($0) * 0.02) })
        try track.setNumberOfLoops(-1)
        let fx = try engine.registerEffect(try monoSound(300) { _ in 0.2 })
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 512)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: 512)
        defer {
            left.deallocate()
            right.deallocate()
        }
        track.play()
        for k in 0..<4 { _ = renderCountingAllocations(engine, k, left: left, right: right, frames: 256) }
        var total: UInt64 = 0, log: [LoggedCommand] = []
        for k in 0..<32 {
            try track.setVolume(k % 2 == 0 ? 0.4 : 0.9)
            try engine.fire(fx, at: engine.time(frame: engine.renderedFrame + 100))
            total += renderCountingAllocations(engine, k, left: left, right: right, frames: 256)
        }
        engine.drainCommandLog(into: &log)
        XCTAssertEqual(total, 0, "render allocated \(total) times")
        XCTAssertGreaterThanOrEqual(log.count, 64, "every command must have been logged")
        XCTAssertEqual(engine.lostCommandLogEntries, 0)
    }

    /// The ledger's checks can fail: a second completion, a second end and a start with no voice are violations,
    /// and a voice or firing that never reports stays open.
    func testTheLedgerFlagsDuplicatedAndLostReports() throws {
        let engine = try makeEngine(maxBlockFrames: 256)
        let track = try engine.makeTrack(try monoSound(1000) { _ in 0.1 })
        let ledger = SoakLedger()
        ledger.startingVoices(on: [(7, track)], "play()") { track.play() }
        XCTAssertFalse(ledger.isIdle(track: 7))
        ledger.startingVoices(on: [(7, track)], "play() while playing") { track.play() } // no new voice
        XCTAssertEqual(ledger.totals.counts.voices, 1)
        let end = TrackEnd(time: EngineTime(frame: 1000, sampleRate: 48000), reason: .finished)
        ledger.finished(track: 7, end)
        XCTAssert(ledger.isIdle(track: 7))
        XCTAssertEqual(ledger.totals.violations, 0)
        ledger.finished(track: 7, end)
        ledger.started(track: 7)
        XCTAssertEqual(ledger.totals.violations, 2, "an end and a start for no live voice")

        let firing = ledger.open(.firing)
        XCTAssertEqual(ledger.openCount(.firing), 1, "a firing with no completion stays open (lost)")
        let completion = EffectCompletion(effect: SoundEffect(id: 1, name: "fx", duration: 0.1), time: EngineTime(frame: 0, sampleRate: 48000), reason: .finished)
        ledger.completed(firing: firing, completion)
        ledger.completed(firing: firing, completion)
        XCTAssertEqual(ledger.openCount(.firing), 0)
        XCTAssertEqual(ledger.totals.violations, 3, "a second completion")

        let command = ledger.open(.command)
        ledger.cancelled(command: command)
        ledger.applied(command: command)
        XCTAssertEqual(ledger.totals.violations, 4, "onApplied after a successful cancel")
    }
}
