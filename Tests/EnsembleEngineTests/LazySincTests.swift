import CAllocationCounter
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// The sinc bank is built only when a voice may resample with sinc (`SincSlot`, `Mixer.mayNeedSinc`): an engine
/// whose voices all choose cubic or linear, or play sinc at step 1, never has it; it is in place (on the control
/// side) before the first voice that uses it renders, and that voice gives the bits of an engine that had the bank
/// from the start, without allocating on the render thread.
final class LazySincTests: XCTestCase {
    private func sound(_ rate: Double = 48000) throws -> Sound {
        let frames = Int(rate / 2)
        let l = (0..<frames).map { Float(sin(Double($0) * 0.05)) * 0.5 }
        return try Sound(DecodedAudio(sampleRate: rate, channels: [l]), name: "tone")
    }

    private func render(_ engine: Engine, frames: Int) -> [Float] {
        var out = [Float](repeating: 0, count: 2 * frames)
        out.withUnsafeMutableBufferPointer { o in
            var done = 0
            while done < frames {
                let n = min(512, frames - done)
                engine.pumpCommands()
                engine.render(interleaved: o.baseAddress! + 2 * done, frames: n)
                done += n
            }
        }
        return out
    }

    func testCubicLinearAndStepOneVoicesNeverBuildTheBank() throws {
        let engine = try Engine(configuration: Engine.Configuration())
        let sound = try sound()
        let cubic = try engine.makeTrack(sound), linear = try engine.makeTrack(sound), plain = try engine.makeTrack(sound)
        cubic.resampler = .cubic
        linear.resampler = .linear
        try cubic.setRate(1.5)
        try linear.setRate(0.7)
        try plain.setRate(1)   // sinc (the default) at step 1: a copy, no table
        try engine.play([cubic, linear, plain], atFrame: 0)
        _ = render(engine, frames: 4096)
        XCTAssertFalse(engine.mixer.hasSinc)
        // A one-shot effect at rate 1 and a rate change to 1 on a playing voice need none either.
        _ = try engine.fire(engine.registerEffect(sound), rate: 1)
        try plain.setRate(1)
        _ = render(engine, frames: 1024)
        XCTAssertFalse(engine.mixer.hasSinc)
    }

    /// `fastSinc` has its own bank and knows its short-table steps from the rate: an engine whose voices all play
    /// fastSinc off step 1 (mono and stereo, pitched down and up) never builds the sinc bank, and gives the bits
    /// of an engine that had it from the start.
    func testFastSincVoicesNeedNoSincBank() throws {
        func run(prepared: Bool) throws -> ([Float], Bool) {
            var c = Engine.Configuration()
            c.resampler = .fastSinc
            let engine = try Engine(configuration: c)
            if prepared { engine.mixer.prepareSinc() }
            let mono = try sound(), stereo = try Sound(DecodedAudio(sampleRate: 44100, channels: [
                (0..<22050).map { Float(sin(Double($0) * 0.03)) * 0.4 }, (0..<22050).map { Float(cos(Double($0) * 0.07)) * 0.4 }]),
                name: "stereo")
            let down = try engine.makeTrack(mono), up = try engine.makeTrack(stereo), step = try engine.makeTrack(mono)
            try down.setRate(0.71)
            try up.setRate(1.9)
            try step.setRate(0.9)   // 0.9: the short table's steps at 48 kHz
            try engine.play([down, up, step], atFrame: 0)
            return (render(engine, frames: 8192), engine.mixer.hasSinc)
        }
        let (lazy, built) = try run(prepared: false)
        let (eager, _) = try run(prepared: true)
        XCTAssertFalse(built, "no sinc bank for fastSinc voices")
        XCTAssertGreaterThan(lazy.map { abs($0) }.max() ?? 0, 0.1, "the voices are heard")
        XCTAssertEqual(lazy.map(\.bitPattern), eager.map(\.bitPattern))
    }

    /// Compact sounds that go through the window at step 1 (IMA4, 24-bit) read no table there; a streamed sound
    /// sizes its window by the kernel, so its start brings the bank.
    func testCompactVoicesAtStepOneNeedNoBankAndStreamedOnesBringIt() throws {
        let dir = try TemporaryDirectory()
        let ima4 = try TestFiles.makeFile(dir, "i", container: "caf", codec: .ima4, seconds: 0.3, rate: 48000, channels: 2)
        let pcm24 = try TestFiles.makeFile(dir, "p", container: "wav", codec: .pcm24, seconds: 0.3, rate: 48000, channels: 1)
        let sounds = [try Sound(contentsOf: ima4), try Sound(contentsOf: pcm24)]
        XCTAssertEqual(sounds.map(\.storage), [.ima4, .int24])
        func start(_ engine: Engine) throws -> [Track] {
            let tracks = try sounds.map { try engine.makeTrack($0) }
            try engine.play(tracks, atFrame: 100)
            return tracks
        }
        let lazy = try Engine(configuration: Engine.Configuration())
        let eager = try Engine(configuration: Engine.Configuration())
        eager.mixer.prepareSinc()
        let a = try start(lazy), b = try start(eager)
        let outA = render(lazy, frames: 8000), outB = render(eager, frames: 8000)
        withExtendedLifetime((a, b)) {}
        XCTAssertFalse(lazy.mixer.hasSinc)
        XCTAssertGreaterThan(outA.map(abs).max() ?? 0, 0.01)
        assertSameBits(outA, outB, "compact voices at step 1")

        let streaming = try Engine(configuration: Engine.Configuration())
        let streamed = try streaming.makeTrack(try Sound(streamingContentsOf: pcm24))
        try streamed.play(at: streaming.time(frame: 0))
        XCTAssertTrue(streaming.mixer.hasSinc)
        _ = render(streaming, frames: 2048)
    }

    func testTheBankIsThereBeforeTheFirstSincVoiceAndGivesTheEagerBits() throws {
        // Each way a voice comes to resample with sinc: started off step 1, a rate change, a sound at another
        // rate, pitch preservation, a position (doppler), a fired effect at another rate.
        let ways: [(String, (Engine, Sound, Sound) throws -> Void)] = [
            ("start", { e, s, _ in let t = try e.makeTrack(s); try t.setRate(1.3); try t.play(at: e.time(frame: 600)) }),
            ("rate", { e, s, _ in
                let t = try e.makeTrack(s)
                try t.play(at: e.time(frame: 0))
                try t.setRate(0.8)
            }),
            ("sample rate", { e, _, s44 in try e.makeTrack(s44).play(at: e.time(frame: 0)) }),
            ("preserve pitch", { e, s, _ in
                let t = try e.makeTrack(s)
                t.rateMode = .preservePitch
                try t.setRate(1.25)
                try t.play(at: e.time(frame: 0))
            }),
            ("position", { e, s, _ in
                let t = try e.makeTrack(s)
                try t.setSpatial(SpatialSource(position: Vector3(2, 0, -1), velocity: Vector3(8, 0, 0)))
                try t.play(at: e.time(frame: 0))
            }),
            ("effect", { e, _, s44 in _ = try e.fire(e.registerEffect(s44), rate: 1.1) }),
        ]
        let s48 = try sound(), s44 = try sound(44100)
        for (name, start) in ways {
            let lazy = try Engine(configuration: Engine.Configuration())
            XCTAssertFalse(lazy.mixer.hasSinc, name)
            try start(lazy, s48, s44)
            XCTAssertTrue(lazy.mixer.hasSinc, "\(name): built when the command was sent, before any render")
            let eager = try Engine(configuration: Engine.Configuration())
            eager.mixer.prepareSinc()
            try start(eager, s48, s44)
            let a = render(lazy, frames: 6000), b = render(eager, frames: 6000)
            XCTAssertGreaterThan(a.map(abs).max() ?? 0, 0.01, name)
            assertSameBits(a, b, name)
        }
    }

    func testVoicesThatBringTheBankAllocateNothingOnTheRenderThread() throws {
        let engine = try Engine(configuration: Engine.Configuration())
        let track = try engine.makeTrack(try sound())
        try track.setNumberOfLoops(-1)
        try track.play(at: engine.time(frame: 0))
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 512)
        defer { buffer.deallocate() }
        engine.pumpCommands()
        engine.render(interleaved: buffer, frames: 512)
        XCTAssertFalse(engine.mixer.hasSinc)
        try track.setRate(1.7)   // the bank is built here, on this (control) thread
        XCTAssertTrue(engine.mixer.hasSinc)
        var total: UInt64 = 0
        for _ in 0..<50 {
            engine.pumpCommands()
            allocation_counter_start()
            engine.render(interleaved: buffer, frames: 512)
            total += allocation_counter_stop()
        }
        XCTAssertEqual(total, 0)
    }
}
