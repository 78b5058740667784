// Runs on the calling thread of a fuzz target, which acts as the engine's control and (offline) render thread.
import Ensemble
import Foundation

/// Parses and validates the input as a scene file; a valid scene whose files are all among `soundFiles` is then
/// loaded onto an engine, scheduled (tracks, effects and timeline) and rendered for a few blocks. Scenes naming
/// other files are only parsed, so the fuzzer never decodes whatever file on the machine a mutated path hits.
enum SceneTarget {
    /// The render is only there to apply the scheduled commands; a long scene must not make one input slow.
    static let maxRenderFrames: Int64 = 1024

    /// Tiny sounds the seed scenes name (relative to the scratch folder): a WAV for memory tracks and effects, an
    /// IMA4 CAF for streamed ones.
    static let soundFiles = ["mono.wav", "stereo.caf"]

    static func run(_ input: [UInt8]) -> FuzzOutcome {
        let folder = soundFolder
        let path = (folder as NSString).appendingPathComponent("scene.json")
        let scene: Scene
        do {
            scene = try Scene.parse(Data(input), folder: folder, path: path)
        } catch {
            return .rejected(error.description)
        }
        let known = Set(soundFiles.map { (folder as NSString).appendingPathComponent($0) })
        let summary = "\(scene.tracks.count) tracks, \(scene.effects.count) effects, \(scene.timeline.count) timed changes"
        guard (scene.tracks.map(\.file) + scene.effects.map(\.file)).allSatisfy(known.contains) else {
            return .accepted(summary + " (parsed only: names files the fuzzer does not provide)")
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
            _ = OfflineRenderer.render(engine, frames: Int(min(playback.frameCount, maxRenderFrames)), blockFrames: 256)
            return .accepted(summary + ", \(playback.frameCount) frames long")
        } catch {
            return .rejected("\(error)")
        }
    }

    /// The scratch folder, with `soundFiles` written into it on first use.
    private static let soundFolder: String = {
        let folder = FuzzScratch.folder
        let tone = (0..<480).map { Float(sin(Double($0) * 2 * .pi * 440 / 48000)) * 0.5 }
        let files: [(String, DecodedAudio, OutputFormat)] = [
            ("mono.wav", DecodedAudio(sampleRate: 48000, channels: [tone]), OutputFormat(container: .wav, codec: .pcm16)),
            ("stereo.caf", DecodedAudio(sampleRate: 44100, channels: [tone, tone.reversed()]),
             OutputFormat(container: .caf, codec: .ima4)),
        ]
        for (name, audio, format) in files {
            do {
                try AudioFileWriter.write(audio, format: format, to: (folder as NSString).appendingPathComponent(name))
            } catch {
                fatalError("ensemble-fuzz: cannot write the scene target's sound \(name): \(error)")
            }
        }
        return folder
    }()
}
