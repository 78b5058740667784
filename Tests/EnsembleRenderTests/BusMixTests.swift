import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Bus gain, pan, mute and solo, and the no-bus path staying bit-identical.
final class BusMixTests: XCTestCase {
    private func sounds() throws -> (Sound, Sound, Sound) {
        (try monoSound(3000) { sin(Double($0) * 0.07) * 0.6 },
         try stereoSound(2500, left: { rampValue($0 % 400) }, right: { -rampValue($0 % 300) }),
         try monoSound(4000) { Double(($0 * 13) % 97) / 200 })
    }

    /// Renders three tracks; `bus` chooses where each goes, `configure` sets the engine's buses up first.
    private func mix(buses: [Int], frames: Int = 6000, block: Int = 512,
                     configure: (Engine) throws -> Void = { _ in }) throws -> Mix {
        let engine = try makeEngine()
        try configure(engine)
        let (a, b, c) = try sounds()
        let tracks = try [a, b, c].map { try engine.makeTrack($0) }
        try tracks[0].setPan(-0.4)
        try tracks[1].setVolume(0.8)
        try tracks[2].setPan(0.7)
        for (t, bus) in zip(tracks, buses) { try t.setBus(busNumber(bus)) }
        try tracks[0].play(at: tracks[0].engine.time(frame: 10))
        try tracks[1].play(at: tracks[1].engine.time(frame: 300))
        try tracks[2].play(at: tracks[2].engine.time(frame: 1000))
        return withExtendedLifetime(tracks) { render(engine, frames: frames, block: block) }
    }

    private func assertSame(_ a: Mix, _ b: Mix, _ label: String, file: StaticString = #filePath, line: UInt = #line) {
        let i = (0..<a.count).first { a.left[$0].bitPattern != b.left[$0].bitPattern || a.right[$0].bitPattern != b.right[$0].bitPattern }
        XCTAssertNil(i, "\(label): frame \(i ?? -1) differs", file: file, line: line)
    }

    func testEmptyChainsAndUnusedBusesAreBitIdenticalToNoBuses() throws {
        let plain = try mix(buses: [0, 0, 0])
        XCTAssertNotNil(plain.firstNonZero)
        let withEmpty = try mix(buses: [0, 0, 0]) { engine in
            try engine.setEffects([], on: busNumber(0))
            try engine.setBus(busNumber(3), settings: BusSettings(volume: 0.5))
            try engine.setEffects([], on: busNumber(3))
        }
        assertSame(plain, withEmpty, "empty master chain and an unused bus")
    }

    func testOneTrackOnAUnityBusIsBitIdenticalToMaster() throws {
        func single(_ bus: Int) throws -> Mix {
            let engine = try makeEngine()
            try engine.setBus(busNumber(1), settings: BusSettings())
            let t = try engine.makeTrack(try sounds().1)
            try t.setPan(0.25)
            try t.setBus(busNumber(bus))
            try t.play(at: t.engine.time(frame: 5))
            return withExtendedLifetime(t) { render(engine, frames: 3000, block: 700) }
        }
        assertSame(try single(0), try single(1), "unity bus")
    }

    func testBusVolumeHalfGivesExactlyHalfOfEachRoutedTrack() throws {
        for track in 0..<3 {
            var routed = [0, 0, 0]
            routed[track] = 2
            let alone = try mix(buses: routed) { try $0.setBus(busNumber(2), settings: BusSettings(volume: 1, mute: false)) }
            let half = try mix(buses: routed) { try $0.setBus(busNumber(2), settings: BusSettings(volume: 0.5)) }
            let withoutIt = try mix(buses: routed) { try $0.setBus(busNumber(2), settings: BusSettings(volume: 0)) }
            for i in 0..<alone.count {
                // Each routed contribution c = alone − withoutIt; with 0.5 the output is withoutIt + c/2.
                let cl = Double(alone.left[i]) - Double(withoutIt.left[i])
                let cr = Double(alone.right[i]) - Double(withoutIt.right[i])
                XCTAssertEqual(Double(half.left[i]), Double(withoutIt.left[i]) + cl / 2, accuracy: 1e-6)
                XCTAssertEqual(Double(half.right[i]), Double(withoutIt.right[i]) + cr / 2, accuracy: 1e-6)
            }
        }
        // A lone track on a half bus: exactly half, bit for bit.
        let full = try mix(buses: [1, 1, 1]) { try $0.setBus(busNumber(1), settings: BusSettings()) }
        let half = try mix(buses: [1, 1, 1]) { try $0.setBus(busNumber(1), settings: BusSettings(volume: 0.5)) }
        XCTAssertNotNil(full.firstNonZero)
        for i in 0..<full.count {
            XCTAssertEqual(half.left[i], full.left[i] * 0.5)
            XCTAssertEqual(half.right[i], full.right[i] * 0.5)
        }
    }

    func testMuteAndSoloLikeAMixingDesk() throws {
        let setup: (Engine, BusSettings, BusSettings) throws -> Void = { e, one, two in
            try e.setBus(busNumber(1), settings: one)
            try e.setBus(busNumber(2), settings: two)
        }
        // References: the other bus at volume 0.
        let onlyOne = try mix(buses: [1, 2, 1]) { try setup($0, BusSettings(), BusSettings(volume: 0)) }
        let onlyTwo = try mix(buses: [1, 2, 1]) { try setup($0, BusSettings(volume: 0), BusSettings()) }
        XCTAssertNotNil(onlyOne.firstNonZero)
        XCTAssertNotNil(onlyTwo.firstNonZero)
        // Track 0 and 2 on bus 1, track 1 on bus 2.
        let soloOne = try mix(buses: [1, 2, 1]) { try setup($0, BusSettings(solo: true), BusSettings()) }
        assertSame(soloOne, onlyOne, "solo bus 1")
        let muteOne = try mix(buses: [1, 2, 1]) { try setup($0, BusSettings(mute: true), BusSettings()) }
        assertSame(muteOne, onlyTwo, "mute bus 1")
        let soloBoth = try mix(buses: [1, 2, 1]) { try setup($0, BusSettings(solo: true), BusSettings(solo: true)) }
        let neither = try mix(buses: [1, 2, 1]) { try setup($0, BusSettings(), BusSettings()) }
        assertSame(soloBoth, neither, "solo on both = no solo")
        let soloMuted = try mix(buses: [1, 2, 1]) { try setup($0, BusSettings(mute: true, solo: true), BusSettings()) }
        XCTAssertNil(soloMuted.firstNonZero, "a soloed bus that is muted stays silent, and solo silences the other")
    }

    /// Muting while playing ramps over the smoothing time (240 frames) instead of cutting.
    func testMuteDuringPlaybackIsSmoothed() throws {
        let engine = try makeEngine()
        try engine.setBus(busNumber(1), settings: BusSettings())
        let t = try engine.makeTrack(try stereoSound(48000, left: { _ in 0.5 }, right: { _ in 0.5 }))
        try t.setBus(busNumber(1))
        try t.play(at: t.engine.time(frame: 0))
        let m = render(engine, frames: 3000, block: 500) { frame in
            if frame == 1000 { try? engine.setBus(busNumber(1), settings: BusSettings(mute: true)) }
        }
        XCTAssertEqual(m.left[999], 0.5)
        XCTAssertEqual(m.left[1000], 0.5)
        XCTAssertEqual(Double(m.left[1120]), 0.25, accuracy: 1e-6)
        XCTAssertEqual(m.left[1240], 0)
        var worst: Float = 0
        for i in 1..<3000 { worst = max(worst, abs(m.left[i] - m.left[i - 1])) }
        XCTAssertLessThanOrEqual(worst, 0.5 / 240 + 1e-6)
    }

    func testBusPanUsesTheStereoLaw() throws {
        let engine = try makeEngine()
        try engine.setBus(busNumber(1), settings: BusSettings(pan: -1))
        let t = try engine.makeTrack(try stereoSound(100, left: { _ in 0.25 }, right: { _ in 0.5 }))
        try t.setBus(busNumber(1))
        try t.play(at: t.engine.time(frame: 0))
        let m = render(engine, frames: 100, block: 64)
        XCTAssertEqual(m.left[10], 0.75) // hard left: L = inL + inR
        XCTAssertEqual(m.right[10], 0)
    }

    func testBusMetersReadTheBus() throws {
        let engine = try makeEngine()
        try engine.setBus(busNumber(4), settings: BusSettings(volume: 0.5))
        let t = try engine.makeTrack(try stereoSound(4000, left: { _ in 1 }, right: { _ in 1 }))
        try t.setBus(busNumber(4))
        try t.play(at: t.engine.time(frame: 0))
        _ = render(engine, frames: 1024, block: 512)
        engine.updateMeters()
        XCTAssertEqual(try engine.peakPower(forChannel: 0, on: busNumber(4)), Float(20 * log10(0.5)), accuracy: 1e-4)
        XCTAssertThrowsError(try engine.peakPower(forChannel: 0, on: busNumber(5)), "bus 5 was never set up") {
            XCTAssertEqual($0 as? EngineError, .unknownBus(index: 5))
        }
    }
}
