import XCTest
import EnsembleTestSupport
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
@testable import EnsembleScene

/// Scene files' values, `--events` lines and the plot's parts print as a person reads them (they printed as the
/// compiler's dump of their fields). The expected text is written by hand.
final class ScenePrintedFormsTests: XCTestCase {
    private let dir = try! TemporaryDirectory()

    func testSceneModelValues() throws {
        var scene = Scene()
        XCTAssertEqual("\(scene)", "Scene(48 kHz stereo, until its sounds end, 0 tracks, 0 effects, 0 buses, 0 timeline entries)")
        var track = Scene.TrackEntry(name: "drums", file: "drums.caf")
        XCTAssertEqual("\(track)", "TrackEntry(\"drums\", \"drums.caf\")")
        track.start = 0.25
        track.volume = 0.8
        track.loops = 3
        track.bus = "music"
        track.sends = [Scene.SendEntry(bus: "verb", level: 0.5)]
        XCTAssertEqual("\(track)", "TrackEntry(\"drums\", \"drums.caf\", start: 0.25 s, volume: 0.8, loops: 3, bus: \"music\", "
                       + "sends: [SendEntry(to \"verb\", level: 0.5)])")
        var effect = Scene.EffectEntry(name: "coin", file: "coin.wav")
        effect.at = 1
        effect.pan = 0.5
        effect.limits = EffectLimits(maxInstances: 2)
        XCTAssertEqual("\(effect)", "EffectEntry(\"coin\", \"coin.wav\", at: 1 s, pan: 0.5, limits: EffectLimits(maxInstances: 2, steal: oldest))")
        var bus = Scene.BusEntry(name: "music")
        bus.settings.volume = 0.8
        bus.effects = [.delay(time: 0.25, feedback: 0.4, mix: 0.3)]
        bus.paused = true
        XCTAssertEqual("\(bus)", "BusEntry(\"music\", settings: BusSettings(volume: 0.8, pan: 0), "
                       + "effects: [delay(time: 0.25 s, feedback: 0.4, mix: 0.3)], paused: true)")
        scene.duration = 16.5
        scene.tracks = [track]
        scene.buses = [bus, Scene.BusEntry(name: "verb")]
        scene.timeline = [Scene.TimedChange(at: 2, target: .track("drums"), action: .stop(fade: nil))]
        XCTAssertEqual("\(scene)", "Scene(48 kHz stereo, 16.5 s, 1 track, 0 effects, 2 buses, 1 timeline entry)")

        XCTAssertEqual("\(Scene.SendEntry(bus: nil, level: 0.5, preFader: true))", "SendEntry(to master, level: 0.5, pre-fader)")
        XCTAssertEqual("\(Scene.SendLevelChange(send: 1, level: 0.5))", "SendLevelChange(send: 1, level: 0.5)")
        XCTAssertEqual("\(Scene.ListenerChange(position: Vector3(0, 0, 5), gain: 0.5))",
                       "ListenerChange(position: (0.0, 0.0, 5.0), gain: 0.5)")
        XCTAssertEqual("\(Scene.TimedChange.Values(volume: 0.2, ramp: 1))", "Values(volume: 0.2, ramp: 1 s)")
        XCTAssertEqual("\(Scene.TimedChange.Target.track("drums"))", "track \"drums\"")
        XCTAssertEqual("\(Scene.TimedChange.Target.bus("music"))", "bus \"music\"")
        XCTAssertEqual("\(Scene.TimedChange.Target.listener)", "listener")
        let actions: [(Scene.TimedChange.Action, String)] = [
            (.set(.init(volume: 0.2, ramp: 1)), "set(volume: 0.2, ramp: 1 s)"),
            (.stop(fade: nil), "stop"),
            (.stop(fade: 0.5), "stop(fade: 0.5 s)"),
            (.pause(fade: nil), "pause"),
            (.resume(fade: 1), "resume(fade: 1 s)"),
            (.seek(12), "seek(to: 12 s)"),
            (.play(offset: nil), "play"),
            (.play(offset: 2), "play(offset: 2 s)"),
            (.listener(Scene.ListenerChange(position: Vector3(1, 0, 0)), ramp: 2), "listener(position: (1.0, 0.0, 0.0), ramp: 2 s)"),
        ]
        for (action, text) in actions { XCTAssertEqual("\(action)", text) }
        XCTAssertEqual("\(Scene.TimedChange(at: 2, target: .track("drums"), action: .set(.init(volume: 0.2, ramp: 1))))",
                       "TimedChange(at: 2 s, track \"drums\", set(volume: 0.2, ramp: 1 s))")
    }

    func testEventLinesPrintWhatHappenedToWhichNameAndWhen() {
        XCTAssertEqual("\(SceneEvent.Kind.busPaused)", "busPaused")
        XCTAssertEqual("\(SceneEvent(event: .trackStarted, name: "drums", frame: 0))", "trackStarted \"drums\" at frame 0")
        XCTAssertEqual("\(SceneEvent(event: .trackFinished, name: "drums", frame: 1100, reason: .finished))",
                       "trackFinished \"drums\" at frame 1100: finished")
        XCTAssertEqual("\(SceneEvent(event: .commandDropped, name: "drums", frame: 96000, command: "set volume", timeline: 3, cause: .voiceEnded))",
                       "commandDropped \"drums\" at frame 96000: set volume (timeline[3]), voiceEnded")
    }

    func testPlotParts() throws {
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.5, count: 4800), rate: 48000).bytes, to: "a.wav")
        let path = try dir.write(Array(#"{ "duration": 0.05, "tracks": [{"name": "t", "file": "a.wav"}] }"#.utf8), to: "scene.json")
        let playback = try ScenePlayback(scene: try Scene.load(path: path), path: path, engine: try makeEngine())
        try playback.schedule()
        let plot = MixPlot(playback: playback, waveform: WaveformOverview(columns: 10, frameCount: 2400), title: "scene.json")
        XCTAssertEqual("\(plot)", "MixPlot(\"scene.json\", 48 kHz 0.050 s, 1 lane)")

        XCTAssertEqual("\(MixPlot.Lane.Kind.listener)", "listener")
        let finished = MixPlot.Span(start: 0, end: 48000, reason: .finished)
        XCTAssertEqual("\(finished)", "Span(frames 0..<48000, finished)")
        var envelope = MixPlot.Envelope(constant: 1)
        XCTAssertEqual("\(envelope)", "Envelope(constant 1)")
        envelope.ramp(to: 0.2, at: 48000, length: 4800)
        XCTAssertEqual("\(envelope)", "Envelope(1 at frame 0, 1 at frame 48000, 0.2 at frame 52800)")
        XCTAssertEqual("\(MixPlot.Envelope.Point(frame: 48000, value: 0.2))", "Point(0.2 at frame 48000)")
        let open = MixPlot.Span(start: 1200, fadeIn: 480, passStarts: [24000, 48000], volume: envelope, bus: "music")
        XCTAssertEqual("\(open)", "Span(frames 1200..., still sounding, fadeIn: 480 frames, 2 passes, "
                       + "volume: Envelope(1 at frame 0, 1 at frame 48000, 0.2 at frame 52800), bus \"music\")")
        let mark = MixPlot.Mark(frame: 96000, label: "set volume", dropped: false)
        XCTAssertEqual("\(mark)", "Mark(set volume at frame 96000)")
        XCTAssertEqual("\(MixPlot.Mark(frame: 48000, label: "stop", dropped: true))", "Mark(stop at frame 48000, dropped)")
        let lane = MixPlot.Lane(kind: .track, name: "drums", detail: "loops 3", spans: [finished, open], marks: [mark])
        XCTAssertEqual("\(lane)", "Lane(track \"drums\", \"loops 3\", 2 spans, 1 mark)")
        XCTAssertEqual("\(MixPlot.PausedSpan(start: 48000, end: 96000, bus: "music"))", "PausedSpan(bus \"music\", frames 48000..<96000)")
        XCTAssertEqual("\(MixPlot.PausedSpan(start: 48000, bus: "music"))", "PausedSpan(bus \"music\", frames 48000...)")
        XCTAssertEqual("\(MixPlot.OutlinePoint(frame: 1200, gain: 0.5))", "OutlinePoint(gain 0.5 at frame 1200)")
    }
}
