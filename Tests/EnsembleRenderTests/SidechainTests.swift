import Foundation
import XCTest
import EnsembleTestSupport
@_spi(Testing) import Ensemble
@_spi(Testing) import EnsembleFormats
@_spi(Testing) import EnsembleRender
@_spi(Testing) import EnsembleEngine
@_spi(Testing) import EnsembleOutput
@_spi(Testing) import EnsembleScene

/// Ducking through the engine: music on one bus, compressed by a compressor keyed by a voice bus. The voice sits
/// in the right channel only and the music in the left, so the master's left channel is the music alone.
final class SidechainTests: XCTestCase {
    static let frames = 120_000
    /// The voice speaks (a 200 Hz square wave at −10 dBFS, so its level is exactly −10 dB on every frame) in
    /// [24000, 48000) and [72000, 96000).
    static let voiceLevel = Float(pow(10, -10.0 / 20))
    static func speaks(_ i: Int) -> Bool { (24000..<48000).contains(i) || (72000..<96000).contains(i) }
    static let musicAmplitude = 0.5
    static func music(_ i: Int) -> Float { Float(musicAmplitude * sin(2 * Double.pi * 440 * Double(i) / 48000)) }
    /// T −30 dB, 4:1, hard knee, 5 ms attack, 50 ms release: the voice at −10 dB asks (−10 + 30)·(1 − 1/4) = 15 dB.
    static func ducker(key: Int, lookahead: Double = 0) -> CompressorSettings {
        CompressorSettings(thresholdDB: -30, ratio: 4, kneeDB: 0, attack: 0.005, release: 0.05, lookahead: lookahead,
                           sidechain: busNumber(key))
    }

    /// Sets the scene up on `engine`, music on bus `music` ducked by bus `voice`, starting at `start`; `setUp`
    /// runs after the buses are made. Returns the tracks (released, they stop).
    static func build(_ engine: Engine, music: Int = 1, voice: Int = 2, voiceSettings: BusSettings = BusSettings(),
                      lookahead: Double = 0, start: EngineTime? = nil, setUp: (Engine) throws -> Void = { _ in }) throws -> [Track] {
        try engine.setBus(busNumber(voice), settings: voiceSettings)
        try engine.setEffects([.compressor(ducker(key: voice, lookahead: lookahead))], on: busNumber(music))
        try setUp(engine)
        let m = try engine.makeTrack(try stereoSound(frames, left: { Double(Self.music($0)) }, right: { _ in 0 }))
        try m.setBus(busNumber(music))
        let v = try engine.makeTrack(try stereoSound(frames, left: { _ in 0 }, right: {
            Self.speaks($0) ? Double(($0 / 120) % 2 == 0 ? voiceLevel : -voiceLevel) : 0
        }))
        try v.setBus(busNumber(voice))
        try engine.play([m, v], at: start ?? engine.time(frame: 0))
        return [m, v]
    }

    /// Renders the scene (`build`) offline in blocks of `block` frames.
    static func scene(music: Int = 1, voice: Int = 2, voiceSettings: BusSettings = BusSettings(), lookahead: Double = 0,
                      block: Int = 512, setUp: (Engine) throws -> Void = { _ in },
                      between: ((Engine, Int64) -> Void)? = nil) throws -> Mix {
        let engine = try makeEngine()
        let tracks = try build(engine, music: music, voice: voice, voiceSettings: voiceSettings, lookahead: lookahead,
                               setUp: setUp)
        return withExtendedLifetime(tracks) {
            render(engine, frames: frames, block: block) { frame in between?(engine, frame) }
        }
    }

    /// The music's level in `range` relative to its undisturbed amplitude, in dB (from the window's peak; a
    /// 440 Hz sine's sampled peak over 100+ periods is within 0.005 dB of its amplitude).
    static func musicLevel(_ mix: Mix, _ range: Range<Int>) -> Double {
        20 * log10(Double(mix.left[range].map { abs($0) }.max()!) / musicAmplitude)
    }

    /// The music drops by the static curve's 15 dB while the voice speaks (after 6 attack time constants), comes
    /// back after it (to within 0.05 dB after 7.5 release time constants), is untouched, bit for bit, before the
    /// voice first speaks, and starts ducking on the very frame the voice starts, by the attack's first step.
    func testMusicDucksWhileTheVoiceSpeaks() throws {
        let mix = try Self.scene()
        let before = (0..<24000).first { mix.left[$0] != Self.music($0) }
        XCTAssertNil(before, "frame \(before ?? -1) changed before the voice spoke")
        XCTAssertTrue(mix.right[24000] != 0, "the voice sounds")
        for window in [30000..<48000, 78000..<96000] {
            XCTAssertEqual(Self.musicLevel(mix, window), -15, accuracy: 0.05, "ducked in \(window)")
        }
        for window in [66000..<72000, 114000..<120000] {
            XCTAssertEqual(Self.musicLevel(mix, window), 0, accuracy: 0.05, "back in \(window)")
        }
        // Smooth branching attack: after k + 1 loud key frames the reduction is 15·(1 − α^(k+1)) dB.
        let alpha = exp(-1 / (0.005 * 48000))
        for k in 0..<200 where abs(Self.music(24000 + k)) > 0.05 {
            let reduction = 15 * (1 - pow(alpha, Double(k + 1)))
            let gain = Double(mix.left[24000 + k]) / Double(Self.music(24000 + k))
            XCTAssertEqual(20 * log10(gain), -reduction, accuracy: 0.001, "frame \(24000 + k)")
        }
    }

    /// The key is taken after the voice bus's volume: at volume 0.5 the voice keys at −10 − 6.02 dB, asking
    /// (−16.02 + 30)·¾ dB; muted, it ducks nothing (the music comes out bit for bit).
    func testTheKeyIsPostFader() throws {
        let half = try Self.scene(voiceSettings: BusSettings(volume: 0.5))
        let key = 20 * log10(Double(Self.voiceLevel * 0.5))
        XCTAssertEqual(Self.musicLevel(half, 30000..<48000), -(key + 30) * 0.75, accuracy: 0.05)
        let muted = try Self.scene(voiceSettings: BusSettings(mute: true))
        let changed = (0..<Self.frames).first { muted.left[$0] != Self.music($0) }
        XCTAssertNil(changed, "a muted voice bus ducked the music at frame \(changed ?? -1)")
        XCTAssertEqual(muted.right.map { abs($0) }.max(), 0, "the muted voice is silent")
    }

    /// Whichever bus numbers the music and the voice have (the key above or below the bus it keys), the music
    /// comes out the same, bit for bit: the key bus's chain always runs first.
    func testKeyBusesRunFirstWhateverTheirIndex() throws {
        let reference = try Self.scene(music: 3, voice: 2)
        XCTAssertEqual(Self.musicLevel(reference, 30000..<48000), -15, accuracy: 0.05)
        for (music, voice) in [(1, 2), (1, 16), (16, 1), (5, 9)] {
            let mix = try Self.scene(music: music, voice: voice)
            let i = (0..<Self.frames).first { mix.left[$0].bitPattern != reference.left[$0].bitPattern }
            XCTAssertNil(i, "music on bus \(music), voice on bus \(voice): frame \(i ?? -1) differs")
        }
        // A chain of keys, set up in the order that makes each wait on a higher index: 3 keys 2, 2 keys 1.
        let chained = try Self.scene(music: 1, voice: 2) { engine in
            try engine.setBus(busNumber(3), settings: BusSettings())
            try engine.setEffects([.compressor(Self.ducker(key: 3))], on: busNumber(2))
        }
        let i = (0..<Self.frames).first { chained.left[$0].bitPattern != reference.left[$0].bitPattern }
        XCTAssertNil(i, "frame \(i ?? -1) differs with bus 2 itself keyed by bus 3")
    }

    /// Same scene, same bytes for blocks of 64, 512 and 1000 frames, with look-ahead, a chain on the voice bus,
    /// timed volume ramps on it that fall inside blocks, and at frame 64000 (a block boundary for all three) the
    /// sidechain turned round: the music's compressor keyed by silent bus 3, then the voice bus's keyed by the
    /// music bus (so the order changes while the music's old chain, keyed by the voice, fades out).
    func testSameBytesForEveryBlockSize() throws {
        func run(_ block: Int) throws -> Mix {
            try Self.scene(lookahead: 0.003, block: block, setUp: { engine in
                try engine.setBus(busNumber(3), settings: BusSettings())
                try engine.setEffects([.filter(.lowpass, frequency: 3000, q: 0.7, gainDB: 0)], on: busNumber(2))
                try engine.scheduleVolume(0.3, on: busNumber(2), at: engine.time(frame: 40_021), ramp: frameSeconds(333))
                try engine.scheduleVolume(1, on: busNumber(2), at: engine.time(frame: 80_007), ramp: frameSeconds(97))
            }, between: { engine, frame in
                guard frame == 64000 else { return }
                try! engine.setEffects([.compressor(Self.ducker(key: 3))], on: busNumber(1))
                try! engine.setEffects([.filter(.lowpass, frequency: 3000, q: 0.7, gainDB: 0), .compressor(Self.ducker(key: 1))],
                                       on: busNumber(2))
            })
        }
        let reference = try run(64)
        XCTAssertLessThan(Self.musicLevel(reference, 30000..<40000), -10, "the music ducks")
        XCTAssertEqual(Self.musicLevel(reference, 78000..<96000), 0, accuracy: 0.01, "no longer once keyed by silence")
        for block in [512, 1000] {
            let mix = try run(block)
            let i = (0..<Self.frames).first {
                mix.left[$0].bitPattern != reference.left[$0].bitPattern || mix.right[$0].bitPattern != reference.right[$0].bitPattern
            }
            XCTAssertNil(i, "block \(block) differs from block 64 at frame \(i ?? -1)")
        }
    }

    /// The master's compressor may be keyed by any bus (the master runs last): the music, straight on the master,
    /// ducks under the voice.
    func testMasterCompressorKeyedByABus() throws {
        let mix = try Self.scene(music: 0, voice: 4)
        XCTAssertEqual(Self.musicLevel(mix, 30000..<48000), -15, accuracy: 0.05)
        XCTAssertEqual(Self.musicLevel(mix, 66000..<72000), 0, accuracy: 0.05)
    }

    /// Sidechains that cannot be are refused with the documented error, naming the effect, changing nothing.
    func testImpossibleSidechainsAreRefused() throws {
        let engine = try makeEngine()
        for b in 1...3 { try engine.setBus(busNumber(b), settings: BusSettings()) }
        let filter = EffectSpec.filter(.lowpass, frequency: 1000, q: 0.7, gainDB: 0)
        let before: [EffectSpec] = [filter]
        try engine.setEffects(before, on: busNumber(1))
        let live = engine.liveEffectChains
        func refused(_ key: Int, on bus: Int) -> EngineError? {
            do {
                try engine.setEffects([filter, .compressor(Self.ducker(key: key))], on: busNumber(bus))
                return nil
            } catch {
                return error
            }
        }
        func assertSidechainRefused(_ error: EngineError?, key: Int, line: UInt = #line) {
            guard case let .invalidParameter(name, value, _)? = error else {
                return XCTFail("expected invalidParameter, got \(String(describing: error))", line: line)
            }
            XCTAssertEqual(name, "effects[1].sidechain", line: line)
            XCTAssertEqual(value, Double(key), line: line)
        }
        assertSidechainRefused(refused(1, on: 1), key: 1)                  // itself
        assertSidechainRefused(refused(0, on: 1), key: 0)                  // the master
        assertSidechainRefused(refused(0, on: 0), key: 0)                  // the master keyed by itself
        XCTAssertEqual(refused(7, on: 1), .unknownBus(index: 7))           // not set up
        // 2 keys 1; then 1 keyed by 2 closes a circle.
        try engine.setEffects([.compressor(Self.ducker(key: 2))], on: busNumber(1))
        let keyed: [EffectSpec] = [.compressor(Self.ducker(key: 2))]
        assertSidechainRefused(refused(1, on: 2), key: 1)
        // 3 keys 2 keys 1; then 1 keying 3 closes a circle of three.
        try engine.setEffects([.compressor(Self.ducker(key: 3))], on: busNumber(2))
        assertSidechainRefused(refused(1, on: 3), key: 1)
        // Nothing changed: the chains are still those set, and no chain was made for a refused call.
        XCTAssertEqual(engine.effects(on: busNumber(1)), keyed)
        XCTAssertEqual(engine.effects(on: busNumber(2)), [.compressor(Self.ducker(key: 3))])
        XCTAssertEqual(engine.effects(on: busNumber(3)), [])
        XCTAssertEqual(engine.effects(on: .master), [])
        XCTAssertFalse(engine.isSetUp(busNumber(7)))
        XCTAssertEqual(engine.liveEffectChains, live + 2)
        // Allowed: the master keyed by any bus, and a bus keyed by one that does not depend on it.
        XCTAssertNoThrow(try engine.setEffects([.compressor(Self.ducker(key: 1))], on: .master))
        try engine.setBus(busNumber(4), settings: BusSettings())
        XCTAssertNoThrow(try engine.setEffects([.compressor(Self.ducker(key: 4))], on: busNumber(3)))
    }

    /// Changing chains (sidechains on and off, across buses) and muting the key bus while rendering allocates
    /// nothing on the render thread.
    func testSidechainChangesWhileRenderingAllocateNothing() throws {
        let engine = try makeEngine(maxBlockFrames: 512)
        for b in 1...3 { try engine.setBus(busNumber(b), settings: BusSettings()) }
        try engine.setEffects([.compressor(Self.ducker(key: 2, lookahead: 0.002))], on: busNumber(1))
        let s = try stereoSound(3000, left: { 0.5 * sin(Double($0) * 0.04) }, right: { 0.3 * sin(Double($0) * 0.03) })
        let tracks = try (1...3).map { b in
            let t = try engine.makeTrack(s)
            try t.setNumberOfLoops(-1)
            try t.setBus(busNumber(b))
            return t
        }
        let block = 256
        let left = UnsafeMutablePointer<Float>.allocate(capacity: block)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
        defer { left.deallocate(); right.deallocate() }
        try engine.play(tracks, at: engine.time(frame: 3))
        for _ in 0..<8 { engine.render(left: left, right: right, frames: block) }
        var total: UInt64 = 0
        for k in 0..<60 {
            switch k % 4 {
            case 0: try engine.setEffects([.compressor(Self.ducker(key: k % 8 == 0 ? 2 : 3, lookahead: 0.001 * Double(k % 3)))],
                                          on: busNumber(1))
            case 1: try engine.setBus(busNumber(2), settings: BusSettings(volume: 0.8, mute: k % 8 == 1))
            case 2: try engine.setEffects(k % 8 == 2 ? [] : [.compressor(Self.ducker(key: 3))], on: busNumber(2))
            default: try engine.setEffects([.compressor(CompressorSettings(thresholdDB: -20, sidechain: busNumber(1 + k % 3)))],
                                           on: .master)
            }
            total += renderCountingAllocations(engine, k, left: left, right: right, frames: block)
        }
        XCTAssertEqual(total, 0, "render allocated \(total) times")
        engine.updateMeters()
        XCTAssertGreaterThan(try engine.peakPower(forChannel: 0), -160, "the scene must be sounding")
        withExtendedLifetime(tracks) {}
    }

    /// 5.1: the music bus's compressor, keyed by a bus sounding on all six channels, hears the key bus's loudest
    /// channel (the back right, 3× the front right's level), not only the front pair.
    func testSurroundKeyIsTheWholeKeyBus() throws {
        var c = Engine.Configuration()
        c.maxBlockFrames = 1024
        c.speakerLayout = .surround51
        // Sawtooths on all six channels of bus 2, channel c peaking at 0.5·(c + 1)/8 (−12 dB on the front right,
        // −8.5 dB on the back right), periods 101 + 7c frames.
        c.planeTestSignal = PlaneTestSignal(lane: 0, bus: 2, amplitude: 0.5, period: 101)
        let engine = try Engine(configuration: c)
        try engine.setBus(busNumber(2), settings: BusSettings())
        // Fast attack, slow release: the detector holds each sawtooth's peak.
        try engine.setEffects([.compressor(CompressorSettings(thresholdDB: -40, ratio: 2, kneeDB: 0, attack: 0.0002,
                                                              release: 1, sidechain: busNumber(2)))], on: busNumber(1))
        let m = try engine.makeTrack(try stereoSound(24000, left: { Double(Self.music($0)) }, right: { _ in 0 }))
        try m.setBus(busNumber(1))
        try m.play(at: engine.time(frame: 0))
        let out = withExtendedLifetime(m) { engine.renderOffline(frames: 24000, blockFrames: 1000) }
        // Front left is the music plus the key bus's own front left (a sawtooth); remove the latter.
        let signal = PlaneTestSignal(lane: 0, bus: 2, amplitude: 0.5, period: 101)
        let music = (12000..<24000).map { out[6 * $0] - signal.sample(channel: 0, frame: Int64($0)) }
        let level = 20 * log10(Double(music.map { abs($0) }.max()!) / Self.musicAmplitude)
        let loudest = 20 * log10(0.5 * 6 / 8.0)
        XCTAssertEqual(level, -(loudest + 40) / 2, accuracy: 0.3, "the reduction follows the back right channel")
    }
}
