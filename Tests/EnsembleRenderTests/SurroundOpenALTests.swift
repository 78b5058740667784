import Foundation
import XCTest
import EnsembleTestSupport
@_spi(Testing) import Ensemble
@_spi(Testing) import EnsembleFormats
@_spi(Testing) import EnsembleRender
@_spi(Testing) import EnsembleEngine
@_spi(Testing) import EnsembleOutput
@_spi(Testing) import EnsembleScene

/// 5.1 and 7.1 through OpenAL Soft (`AL_EXT_MCFORMATS` float buffers on a direct-channels source): the loopback
/// device in process, and real time through the wave writer in a child process (OpenAL Soft reads its
/// configuration, `channels=` included, once per process, and this process's is stereo: `OpenALTestConfig`).
final class SurroundOpenALTests: XCTestCase {
    private static let frames = 24000

    /// The scene: 2D tracks (front pair), the plane test signal on every channel through lane 3 into bus 1, and a
    /// positioned source driving past the listener (a timed straight-line ramp, doppler from its velocity) while
    /// the listener turns: every speaker gain and the doppler step change during the render.
    private static func engine(_ layout: SpeakerLayout) throws -> Engine {
        var c = Engine.Configuration()
        c.speakerLayout = layout
        c.maxVoices = 32
        c.planeTestSignal = PlaneTestSignal(lane: 3, bus: 1, amplitude: 0.8, period: 211)
        let engine = try Engine(configuration: c)
        try engine.setBus(try Bus(1), settings: BusSettings(volume: 0.9))
        let a = try engine.makeTrack(try stereoSound(9000, rate: 44100, left: { sin(Double($0) * 0.03) * 0.3 }, right: rampValue))
        try a.setPan(0.25)
        let b = try engine.makeTrack(try monoSound(7000) { cos(Double($0) * 0.07) * 0.2 })
        try b.setRate(0.8)
        try engine.play([a, b], at: engine.time(frame: 100))
        let car = try engine.makeTrack(try monoSound(24000) { sin(Double($0) * 0.05) * 0.4 })
        try car.setSpatial(SpatialSource(position: Vector3(-20, 0, -3), velocity: Vector3(40, 0, 0),
                                         referenceDistance: 2))
        try car.play(at: engine.time(frame: 0))
        try car.setPosition(Vector3(20, 0, -3), at: engine.time(frame: 150), ramp: 0.45)
        try engine.setListener(Listener(at: Vector3(1, 0, -1)), at: engine.time(frame: 12001), ramp: 0.05)
        return engine
    }

    private func channel(_ x: [Float], _ c: Int, of channels: Int) -> [Float] {
        stride(from: c, to: x.count, by: channels).map { x[$0] }
    }

    func testLoopbackEqualsOfflineRenderOnEverySurroundChannel() throws {
        try OpenALTestConfig.install()
        for layout in [SpeakerLayout.surround51, .surround71] {
            let reference = try Self.engine(layout).renderOffline(frames: 20000)
            let engine = try Self.engine(layout)
            let loopback = try OpenALLoopback(engine: engine, bufferCount: 3, bufferFrames: 256)
            XCTAssertEqual(loopback.channelCount, layout.channelCount)
            let out = loopback.render(frames: 20000)
            XCTAssertEqual(loopback.underrunCount, 0)
            loopback.close()
            assertSameBits(out, reference, "\(layout) loopback vs offline")
            for c in 0..<layout.channelCount {
                XCTAssertTrue(channel(out, c, of: layout.channelCount).contains { $0 != 0 }, "\(layout) channel \(c) sounds")
            }
        }
    }

    /// Real time through OpenAL Soft's wave writer equals the offline render, sample for sample, on every channel.
    ///
    /// The device's channels come from its configuration (OpenAL Soft 1.19 takes no channel request for a
    /// playback device). 5.1 plays on `channels=surround51`: OpenAL Soft 1.19 names a 5.1 buffer's last two
    /// channels side left/right, so on `surround51rear` (back left/right) its direct-channels mix drops them;
    /// on `surround51` they land in the device frame's channels 5 and 6, where the buffer had them. The writer
    /// labels that file FL FR FC LFE SL SR (mask 0x60F); 7.1 is FL FR FC LFE BL BR SL SR (0x63F), ours exactly.
    func testRealTimeThroughTheWaveWriterEqualsOfflineRender() throws {
        for (layout, device, mask) in [(SpeakerLayout.surround51, "surround51", 0x60F), (.surround71, "surround71", 0x63F)] {
            let dir = try TemporaryDirectory()
            let recording = dir.file("recording.wav")
            let conf = OpenALTestConfig.wave(recordingTo: recording).replacingOccurrences(of: "channels=stereo", with: "channels=\(device)")
            let confPath = try dir.write(Array(conf.utf8), to: "alsoft.conf")
            let environment = ["ALSOFT_CONF": confPath, "ENSEMBLE_SURROUND_CHILD": layout.rawValue]
            let test = "EnsembleRenderTests.SurroundOpenALTests/testChildPlaysTheSceneInRealTime"
            var result = try runProcess(CommandLine.arguments[0], [test], environment: environment)
            var output = String(decoding: result.stdout, as: UTF8.self)
            for attempt in 2...3 where !output.contains("surround-underruns=0") {
                print("\(layout) real-time run \(attempt - 1) had underruns or failed (machine busy?); repeating")
                result = try runProcess(CommandLine.arguments[0], [test], environment: environment)
                output = String(decoding: result.stdout, as: UTF8.self)
            }
            XCTAssertEqual(result.status, 0, output + result.stderr)
            XCTAssertTrue(output.contains("surround-underruns=0"), "the child played without underruns: \(output)")

            // What the wave writer recorded: WAVE_FORMAT_EXTENSIBLE, the device's channels and mask.
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: recording)))
            let fmtAt = try XCTUnwrap((12..<(bytes.count - 4)).first { Array(bytes[$0..<($0 + 4)]) == Array("fmt ".utf8) })
            let fmt = Array(bytes[(fmtAt + 8)...])
            XCTAssertEqual(Int(fmt[0]) | Int(fmt[1]) << 8, 0xFFFE)
            XCTAssertEqual(Int(fmt[2]) | Int(fmt[3]) << 8, layout.channelCount)
            XCTAssertEqual(Int(fmt[20]) | Int(fmt[21]) << 8 | Int(fmt[22]) << 16, mask)

            let audio = try AudioFile.decode(path: recording)
            XCTAssertEqual(audio.channelCount, layout.channelCount)
            let n = layout.channelCount
            var played = [Float](repeating: 0, count: n * audio.frameCount)
            for c in 0..<n { for i in 0..<audio.frameCount { played[i * n + c] = audio.channels[c][i] } }
            let reference = try Self.engine(layout).renderOffline(frames: Int64(Self.frames))
            // The signal sounds from frame 0 on every channel; the device adds leading silence.
            let lead = try XCTUnwrap((0..<audio.frameCount).first { f in (0..<n).contains { played[f * n + $0] != 0 } })
            XCTAssertGreaterThanOrEqual(audio.frameCount, lead + Self.frames, "the whole scene was recorded")
            let heard = Array(played[(n * lead)..<min(played.count, n * (lead + Self.frames))])
            assertSameBits(heard, reference, "\(layout): recording vs offline render")
        }
    }

    /// The child process's half of the real-time test: plays the scene on the device `ALSOFT_CONF` configures and
    /// prints the underrun count. Skipped unless run by that test.
    func testChildPlaysTheSceneInRealTime() throws {
        guard let name = ProcessInfo.processInfo.environment["ENSEMBLE_SURROUND_CHILD"],
              let layout = SpeakerLayout(rawValue: name) else {
            throw XCTSkip("the child process of testRealTimeThroughTheWaveWriterEqualsOfflineRender")
        }
        let engine = try Self.engine(layout)
        let output = try OpenALOutput(engine: engine, configuration: .init(latency: 100, sampleRate: 48000))
        XCTAssertEqual(output.device.name, "Wave File Writer")
        try output.start()
        let deadline = Date().addingTimeInterval(20)
        while engine.currentFrame < Int64(Self.frames + 4800), Date() < deadline { usleep(20_000) }
        let underruns = output.underrunCount
        output.shutdown()
        print("surround-underruns=\(underruns)")
    }
}
