import Ensemble

/// The one way `render` and `play` turn a scene file into a scheduled engine, so a bad scene fails
/// identically in both (exit 1, one line naming the scene and the key).
struct PreparedScene {
    let scene: Scene
    let engine: Engine
    let playback: ScenePlayback

    /// Loads and validates `path`, builds an engine at the scene's rate (or `sampleRate`), decodes every file
    /// and creates tracks and effects. Call `playback.schedule(origin:)` to put them on the timeline.
    /// `renderThreads` > 1 mixes each block on that many threads (offline rendering; same output). `channels`
    /// (2, 6 or 8, from `--channels`) overrides the scene's `channels`.
    init(path: String, sampleRate: Int? = nil, channels: Int? = nil, renderThreads: Int = 1) throws {
        var description = try Scene.load(path: path)
        if let sampleRate {
            guard (8000...384_000).contains(sampleRate) else {
                throw SceneError(path: path, "--sample-rate \(sampleRate): expected 8000…384000")
            }
            description.sampleRate = Double(sampleRate)
        }
        if let channels {
            guard let layout = SpeakerLayout(channelCount: channels) else {
                throw SceneError(path: path, "--channels \(channels): expected 2 (stereo), 6 (5.1) or 8 (7.1)")
            }
            description.speakerLayout = layout
        }
        var configuration = Engine.Configuration()
        configuration.sampleRate = description.sampleRate
        configuration.maxVoices = max(4096, description.tracks.count + description.effects.count + 64)
        configuration.maxSoundingVoices = description.maxVoices ?? 0
        configuration.renderThreads = renderThreads
        configuration.speakerLayout = description.speakerLayout
        // Every timeline command waits on the render side from the start: room for all of them (up to seven per
        // `set`, plus the end of a restarted `loops: -1` track), so none is ever dropped for a full queue.
        configuration.commandCapacity = max(configuration.commandCapacity, 8 * description.timeline.count + 64)
        let engine: Engine
        do { engine = try Engine(configuration: configuration) } catch { throw SceneError(path: path, "\(error)") }
        scene = description
        self.engine = engine
        playback = try ScenePlayback(scene: description, path: path, engine: engine)
    }
}
