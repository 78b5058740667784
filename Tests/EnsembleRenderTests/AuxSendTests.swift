import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Auxiliary sends (`AuxSend`) on 2D and positioned voices: levels, pre/post fader, automation on exact frames,
/// their own filters, and voices without sends keeping their bits.
///
/// The tracks play on bus 1 and send to buses 2 and 3; a render with only some buses unmuted hears exactly those
/// buses (unity buses are bit-transparent), so the direct path and each send can be read on their own.
final class AuxSendTests: XCTestCase {
    /// Renders the scene `setup` builds (it returns what it must keep alive) with buses 1…3 set up at unity and
    /// every bus not in `audible` muted.
    private func run(audible: Set<Int>, frames: Int = 8000, block: Int = 512,
                     between: (([AnyObject], Int64) -> Void)? = nil,
                     _ setup: (Engine) throws -> [AnyObject]) throws -> Mix {
        let engine = try makeEngine()
        for b in 1...3 { try engine.setBus(busNumber(b), settings: BusSettings(mute: !audible.contains(b))) }
        let keep = try setup(engine)
        return withExtendedLifetime(keep) {
            render(engine, frames: frames, block: block, between: between.map { f in { f(keep, $0) } })
        }
    }

    private func sineSound(_ frames: Int = 12000, amplitude: Double = 0.6, step: Double = 0.01) throws -> Sound {
        try monoSound(frames) { amplitude * sin(Double($0) * step) }
    }

    private func assertBitsEqual(_ a: Mix, _ b: Mix, _ range: Range<Int>, _ label: String,
                                 file: StaticString = #filePath, line: UInt = #line) {
        let i = range.first { a.left[$0].bitPattern != b.left[$0].bitPattern || a.right[$0].bitPattern != b.right[$0].bitPattern }
        XCTAssertNil(i, "\(label): frame \(i ?? -1) differs (\(i.map { "\(a.left[$0]) vs \(b.left[$0])" } ?? ""))",
                     file: file, line: line)
    }

    func testPostFaderSendCarriesTheDirectOutputTimesItsLevel() throws {
        let start = 300
        func scene(_ engine: Engine) throws -> [AnyObject] {
            let t = try engine.makeTrack(try sineSound())
            try t.setVolume(0.5)
            try t.setPan(-0.3)
            try t.setBus(busNumber(1))
            try t.setSends([AuxSend(bus: busNumber(2), level: 0.5)])
            try t.play(at: engine.time(frame: Int64(start)))
            return [t]
        }
        let direct = try run(audible: [1], scene), sent = try run(audible: [2], scene)
        let (pl, pr) = Pan.mono(-0.3)
        for i in 0..<8000 {
            let s = i < start ? 0 : 0.5 * Double(Float(0.6 * sin(Double(i - start) * 0.01)))
            assertClose(direct.left[i], s * pl, "L[\(i)]")
            assertClose(direct.right[i], s * pr, "R[\(i)]")
            // Level 0.5 is a power of two: the send is exactly half the direct output.
            XCTAssertEqual(sent.left[i], direct.left[i] * 0.5, "send L[\(i)]")
            XCTAssertEqual(sent.right[i], direct.right[i] * 0.5, "send R[\(i)]")
        }
    }

    func testPreFaderSendLeavesOutTheVolumeButKeepsTheFade() throws {
        let start = 300, fade = 480
        func scene(_ engine: Engine) throws -> [AnyObject] {
            let t = try engine.makeTrack(try sineSound())
            try t.setVolume(0.25)
            try t.setPan(0.5)
            try t.setFadeIn(frameSeconds(fade))
            try t.setBus(busNumber(1))
            try t.setSends([AuxSend(bus: busNumber(2), level: 1, preFader: true)])
            try t.play(at: engine.time(frame: Int64(start)))
            return [t]
        }
        let direct = try run(audible: [1], scene), sent = try run(audible: [2], scene)
        let (pl, pr) = Pan.mono(0.5)
        for i in 0..<8000 {
            let f = min(max(Double(i - start) / Double(fade), 0), 1)
            let s = i < start ? 0 : Double(Float(0.6 * sin(Double(i - start) * 0.01))) * f
            assertClose(sent.left[i], s * pl, "send L[\(i)]")
            assertClose(sent.right[i], s * pr, "send R[\(i)]")
            assertClose(direct.left[i], 0.25 * s * pl, "L[\(i)]")
            assertClose(direct.right[i], 0.25 * s * pr, "R[\(i)]")
        }
    }

    /// `setSendLevel` at an exact frame with a ramp: the send is the direct output times 1 before the frame, the
    /// linear ramp inside, 0.2 after it, for any block size.
    func testSendLevelAutomationOnExactFrames() throws {
        let at = 3001, ramp = 960
        for block in [64, 1000] {
            func scene(_ engine: Engine) throws -> [AnyObject] {
                let t = try engine.makeTrack(try sineSound())
                try t.setBus(busNumber(1))
                try t.setSends([AuxSend(bus: busNumber(2), level: 1)])
                try t.play(at: engine.time(frame: 100))
                try t.setSendLevel(0.2, send: 0, at: engine.time(frame: Int64(at)), ramp: frameSeconds(ramp))
                return [t]
            }
            let direct = try run(audible: [1], block: block, scene), sent = try run(audible: [2], block: block, scene)
            for i in 0..<8000 {
                let level = i <= at ? 1 : i >= at + ramp ? 0.2 : 1 + (0.2 - 1) * Double(i - at) / Double(ramp)
                assertClose(sent.left[i], Double(direct.left[i]) * level, "block \(block) L[\(i)]")
                assertClose(sent.right[i], Double(direct.right[i]) * level, "block \(block) R[\(i)]")
            }
            XCTAssertEqual(sent.left[at - 1], direct.left[at - 1])
            XCTAssertNotEqual(sent.left[at + 100], direct.left[at + 100])
        }
    }

    /// A send without a filter of its own carries the direct filter's output (bit for bit the direct path at
    /// level 1); one with its own filter carries the unfiltered voice through that filter — bit for bit what the
    /// direct path gives with that filter.
    func testSendFollowsTheDirectFilterUnlessItHasItsOwn() throws {
        let sound = try stereoSound(9000, left: { sin(Double($0) * 0.7) * 0.4 + sin(Double($0) * 0.02) * 0.3 },
                                    right: { sin(Double($0) * 1.9) * 0.3 })
        func scene(direct: VoiceFilter?, sends: [AuxSend]) -> (Engine) throws -> [AnyObject] {
            { engine in
                let t = try engine.makeTrack(sound)
                try t.setPan(-0.2)
                try t.setBus(busNumber(1))
                try t.setFilter(direct)
                try t.setSends(sends)
                try t.play(at: engine.time(frame: 50))
                return [t]
            }
        }
        let own = VoiceFilter.highpass(gain: 0.9, gainLF: 0.1)
        let both = scene(direct: .lowpass(gain: 1, gainHF: 0.1),
                         sends: [AuxSend(bus: busNumber(2)), AuxSend(bus: busNumber(3), filter: own)])
        let direct = try run(audible: [1], both), following = try run(audible: [2], both)
        let ownSend = try run(audible: [3], both)
        let ownDirect = try run(audible: [1], scene(direct: own, sends: []))
        let unfiltered = try run(audible: [1], scene(direct: nil, sends: []))
        assertBitsEqual(following, direct, 0..<8000, "following send")
        assertBitsEqual(ownSend, ownDirect, 0..<8000, "own-filter send")
        XCTAssertGreaterThan(maxAbsDifference(direct.left, unfiltered.left), 0.05, "the direct filter acts")
        XCTAssertGreaterThan(maxAbsDifference(ownSend.left, direct.left), 0.05, "the send's own filter differs")
    }

    /// A positioned voice: the filter acts on its mono signal before the distance gains (an 8 kHz sine loses the
    /// cookbook high shelf's gain there), and a post-fader send at 0.5 carries exactly half of the direct output.
    func testPositionedVoiceWithASendAndAFilter() throws {
        let w = 2 * Double.pi * 8000 / 48000
        let sound = try monoSound(14000) { 0.5 * sin(w * Double($0)) }
        func scene(filter: VoiceFilter?) -> (Engine) throws -> [AnyObject] {
            { engine in
                let t = try engine.makeTrack(sound)
                try t.setSpatial(SpatialSource(position: Vector3(2, 0, -1)))
                try t.setBus(busNumber(1))
                try t.setFilter(filter)
                try t.setSends([AuxSend(bus: busNumber(2), level: 0.5)])
                try t.play(at: engine.time(frame: 0))
                return [t]
            }
        }
        let gainHF: Float = 0.25
        let direct = try run(audible: [1], frames: 12000, scene(filter: .lowpass(gain: 1, gainHF: gainHF)))
        let sent = try run(audible: [2], frames: 12000, scene(filter: .lowpass(gain: 1, gainHF: gainHF)))
        let dry = try run(audible: [1], frames: 12000, scene(filter: nil))
        for i in 0..<12000 {
            XCTAssertEqual(sent.left[i], direct.left[i] * 0.5, "send L[\(i)]")
            XCTAssertEqual(sent.right[i], direct.right[i] * 0.5, "send R[\(i)]")
        }
        func rms(_ x: [Float]) -> Double { (x[6000..<12000].reduce(0) { $0 + Double($1) * Double($1) } / 6000).squareRoot() }
        XCTAssertGreaterThan(rms(dry.left), 0.01)
        let measured = 20 * log10(rms(direct.left) / rms(dry.left))
        let expected = RBJ.decibels(RBJ.coefficients(.highshelf, f: 5000, q: 1 / 2.0.squareRoot(),
                                                     gainDB: 40 * log10(Double(gainHF))), at: 8000)
        XCTAssertEqual(measured, expected, accuracy: 0.1)
    }

    /// Tracks without sends or filters (2D on the fused path, stereo, positioned) keep their exact bits when another
    /// track with sends and a filter plays beside them (on buses muted here).
    func testVoicesWithoutSendsKeepTheirBits() throws {
        let mono = try sineSound(), stereo = try stereoSound(7000, left: rampValue, right: { sin(Double($0) * 0.03) })
        func scene(withOther: Bool) -> (Engine) throws -> [AnyObject] {
            { engine in
                let a = try engine.makeTrack(mono), b = try engine.makeTrack(stereo), d = try engine.makeTrack(mono)
                try a.setPan(-0.4)
                try b.setVolume(0.7)
                try d.setSpatial(SpatialSource(position: Vector3(-1, 0, -2)))
                try a.play(at: engine.time(frame: 10))
                try b.play(at: engine.time(frame: 333))
                try b.setVolume(0.2, at: engine.time(frame: 2000), ramp: frameSeconds(500))
                try d.play(at: engine.time(frame: 700))
                guard withOther else { return [a, b, d] }
                let c = try engine.makeTrack(stereo)
                try c.setBus(busNumber(1))
                try c.setFilter(.bandpass(gain: 0.5, gainLF: 0.3, gainHF: 0.3))
                try c.setSends([AuxSend(bus: busNumber(2), level: 0.7), AuxSend(bus: busNumber(3), preFader: true,
                                                                              filter: .lowpass(gainHF: 0.5))])
                try c.play(at: engine.time(frame: 20))
                return [a, b, d, c]
            }
        }
        let alone = try run(audible: [], scene(withOther: false))
        let beside = try run(audible: [], scene(withOther: true))
        XCTAssertNotNil(alone.firstNonZero)
        assertBitsEqual(alone, beside, 0..<8000, "plain voices beside one with sends")
    }

    /// Filters, sends (pre and post fader, own filter), their automation, a positioned voice with both and an
    /// effect fired with both: the same bits for blocks of 64, 512 and 1000 frames.
    func testSameBitsForAnyBlockSize() throws {
        func scene(_ engine: Engine) throws -> [AnyObject] {
            let t = try engine.makeTrack(try stereoSound(9000, left: { sin(Double($0) * 0.2) * 0.5 },
                                                         right: { sin(Double($0) * 0.013) * 0.5 }))
            try t.setBus(busNumber(1))
            try t.setFilter(.lowpass(gain: 0.9, gainHF: 0.3))
            try t.setSends([AuxSend(bus: busNumber(2), level: 0.4), AuxSend(bus: busNumber(3), level: 0.6, preFader: true,
                                                                           filter: .highpass(gainLF: 0.2))])
            try t.play(at: engine.time(frame: 7))
            try t.setFilter(.bandpass(gain: 0.6, gainLF: 0.5, gainHF: 0.05), at: engine.time(frame: 1111), ramp: 0.02)
            try t.setSendLevel(0.9, send: 0, at: engine.time(frame: 2345), ramp: 0.01)
            try t.setVolume(0.3, at: engine.time(frame: 3000), ramp: 0.01)
            try t.setSends([AuxSend(bus: busNumber(3), level: 0.5), AuxSend(bus: busNumber(2), level: 0.2)],
                           at: engine.time(frame: 5001))
            let p = try engine.makeTrack(try monoSound(9000) { sin(Double($0) * 0.5) * 0.4 })
            try p.setSpatial(SpatialSource(position: Vector3(1, 0, -1)))
            try p.setFilter(.lowpass(gainHF: 0.2))
            try p.setSends([AuxSend(bus: busNumber(2), level: 0.5, filter: .bandpass(gainLF: 0.5, gainHF: 0.5))])
            try p.play(at: engine.time(frame: 100))
            try p.setPosition(Vector3(-2, 0, -1), at: engine.time(frame: 2000), ramp: 0.05)
            try p.setFilter(.highpass(gain: 0.8, gainLF: 0.1), at: engine.time(frame: 4000), ramp: 0.01)
            let fx = try engine.registerEffect(try monoSound(2000) { sin(Double($0) * 0.9) * 0.3 })
            let instance = try engine.fire(fx, pan: 0.4, at: engine.time(frame: 1500), bus: busNumber(1),
                                           sends: [AuxSend(bus: busNumber(3), level: 0.8)], filter: .highpass(gainLF: 0.3))
            try engine.setSendLevel(0.1, send: 0, of: instance, at: engine.time(frame: 2200), ramp: 0.005)
            try engine.setFilter(.lowpass(gainHF: 0.1), of: instance, at: engine.time(frame: 2500), ramp: 0.005)
            return [t, p]
        }
        let reference = try run(audible: [1, 2, 3], frames: 9000, block: 512, scene)
        XCTAssertNotNil(reference.firstNonZero)
        for block in [64, 1000] {
            assertBitsEqual(try run(audible: [1, 2, 3], frames: 9000, block: block, scene), reference, 0..<9000,
                            "block \(block)")
        }
    }

    /// Moving the voice's main bus crossfades its direct path only: the send carries on untouched, bit for bit a
    /// render without the move.
    func testBusMoveLeavesSendsAlone() throws {
        func scene(_ engine: Engine) throws -> [AnyObject] {
            let t = try engine.makeTrack(try self.sineSound())
            try t.setBus(busNumber(1))
            try t.setFilter(.lowpass(gainHF: 0.4))
            try t.setSends([AuxSend(bus: busNumber(2), level: 0.7)])
            try t.play(at: engine.time(frame: 0))
            return [t]
        }
        let move: ([AnyObject], Int64) -> Void = { keep, frame in
            if frame == 2048 { try! (keep[0] as! Track).setBus(busNumber(3)) }
        }
        let moved = try run(audible: [2], between: move, scene), still = try run(audible: [2], scene)
        assertBitsEqual(moved, still, 0..<8000, "send during a bus move")
        XCTAssertNotNil(moved.firstNonZero)
        // The direct path did move: bus 3 alone hears it only after the move (the crossfade's weight is 0 on its
        // first frame).
        let onThree = try run(audible: [3], between: move, scene)
        XCTAssertEqual(onThree.firstNonZero, 2049)
    }

    /// A change given before the voice has started (an effect fired for a later frame) applies from its start
    /// frame: the level ramp begins there, not when the command arrived.
    func testChangeBeforeTheStartAppliesFromTheStartFrame() throws {
        let start = 1000, ramp = 480
        func scene(_ engine: Engine) throws -> [AnyObject] {
            let fx = try engine.registerEffect(try self.sineSound(6000))
            let instance = try engine.fire(fx, at: engine.time(frame: Int64(start)), bus: busNumber(1),
                                           sends: [AuxSend(bus: busNumber(2), level: 1)])
            try engine.setSendLevel(0.5, send: 0, of: instance, ramp: frameSeconds(ramp))
            return []
        }
        let direct = try run(audible: [1], scene), sent = try run(audible: [2], scene)
        XCTAssertEqual(direct.firstNonZero, start + 1, "a sine: 0 on its start frame")
        for i in 0..<8000 {
            let level = i <= start ? 1 : i >= start + ramp ? 0.5 : 1 - 0.5 * Double(i - start) / Double(ramp)
            assertClose(sent.left[i], Double(direct.left[i]) * level, "L[\(i)]")
        }
    }

    /// A virtual voice mixes nothing, into its sends either: held by the cap (`maxSoundingVoices` 1), the first
    /// track's send bus falls silent while a higher-priority track sounds, and comes back after it stops.
    func testVirtualVoiceSendsNothing() throws {
        var c = Engine.Configuration()
        c.maxSoundingVoices = 1
        c.smoothingTime = 0.005
        let engine = try Engine(configuration: c)
        for b in 1...2 { try engine.setBus(busNumber(b), settings: BusSettings(mute: b == 1)) }
        let low = try engine.makeTrack(try monoSound(20000) { _ in 0.5 })
        let high = try engine.makeTrack(try monoSound(20000) { _ in 0.25 })
        try low.setPriority(10)
        try low.setSends([AuxSend(bus: busNumber(2), preFader: true)])
        try high.setPriority(200)
        try high.setBus(busNumber(1))
        try low.play(at: engine.time(frame: 0))
        try high.play(at: engine.time(frame: 1000))
        try high.stop(at: engine.time(frame: 5000))
        let mix = withExtendedLifetime([low, high]) { render(engine, frames: 9000, block: 512) }
        XCTAssertNotEqual(mix.left[500], 0, "the send sounds before the cap takes the voice")
        let silent = (0..<9000).filter { mix.left[$0] == 0 && mix.right[$0] == 0 }
        XCTAssertGreaterThan(silent.count, 2000, "the virtual voice sends nothing")
        XCTAssertTrue(silent.allSatisfy { $0 > 1000 && $0 < 6500 }, "silent only while held")
        XCTAssertNotEqual(mix.left[8999], 0, "the send is back once the voice is")
    }
}
