// Runs on the calling thread of a fuzz target, which acts as the engine's control and (offline) render thread.
import Ensemble
import Foundation

/// Parses and validates the input as a scene file in Tests/Fuzz/scene-sounds/; a valid scene whose files are all
/// sounds of that folder is then loaded onto an engine, scheduled (tracks, effects and timeline) and rendered for a
/// few blocks. Scenes naming other files are only parsed, so the fuzzer never decodes whatever file on the machine a
/// mutated path hits. Two of the sounds have headers claiming absurd lengths (see make_seeds.py), so the scene
/// arithmetic meets them.
enum SceneTarget {
    /// The render is only there to apply the scheduled commands; a long scene must not make one input slow.
    static let maxRenderFrames: Int64 = 1024

    /// The sounds' folder, found from this source file (the fuzzer and the tests run in the checkout they were
    /// built from).
    static let soundFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scene-sounds").path

    private static let sounds: Set<String> = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: soundFolder)) ?? []
        guard !names.isEmpty else { fatalError("ensemble-fuzz: no scene sounds in \(soundFolder)") }
        return Set(names.map { (soundFolder as NSString).appendingPathComponent($0) })
    }()

    static func run(_ input: [UInt8]) -> FuzzOutcome {
        let path = (soundFolder as NSString).appendingPathComponent("fuzz-scene.json")
        let scene: Scene
        do {
            scene = try Scene.parse(Data(input), folder: soundFolder, path: path)
        } catch {
            return .rejected(error.description)
        }
        let summary = "\(scene.tracks.count) tracks, \(scene.effects.count) effects, \(scene.timeline.count) timed changes"
        guard (scene.tracks.map(\.file) + scene.effects.map(\.file)).allSatisfy(sounds.contains) else {
            return .accepted(summary + " (parsed only: names files outside scene-sounds)")
        }
        do {
            var c = Engine.Configuration()
            c.sampleRate = scene.sampleRate
            c.maxBlockFrames = 256
            c.maxVoices = scene.tracks.count + scene.effects.count + 8
            c.maxSoundingVoices = scene.maxVoices ?? 0
            c.commandCapacity = 256
            c.eventCapacity = 256
            let engine = try Engine(configuration: c)
            let playback = try ScenePlayback(scene: scene, path: path, engine: engine)
            try playback.schedule()
            _ = engine.renderOffline(frames: min(playback.frameCount, maxRenderFrames), blockFrames: 256)
            return .accepted(summary + ", \(playback.frameCount) frames long")
        } catch {
            return .rejected("\(error)")
        }
    }
}
