// Control side: engine-wide pause and resume (an audio-session interruption).
import EnsembleFormats
import EnsembleRender

extension Engine {
    /// Pauses the whole engine, like an audio-session interruption (a phone call): the output ramps down to
    /// silence over the smoothing time (`Configuration.smoothingTime`, 5 ms by default) starting on the first
    /// frame of the next block rendered, then the engine timeline freezes. Every voice, every scheduled start
    /// and every timed command keeps its place on the timeline; `currentFrame` stops on the frame where the
    /// timeline froze, and the output keeps rendering silence (a device stays open and fed). Sample-exact and
    /// deterministic: see `pause(at:)`.
    public func pause() {
        mixer.pauseRequest.store(.min, ordering: .releasing)
    }

    /// Pauses the whole engine with the ramp down starting on `time` (the next block's first frame if that is
    /// already rendered): frame `time + k` is rendered with gain (ramp − k)/ramp, and the timeline freezes on
    /// `time + ramp`, where ramp = round(smoothingTime × sampleRate) frames. Throws for a time at another rate.
    public func pause(at time: EngineTime) throws(EngineError) {
        pause(atFrame: try frame(of: time))
    }

    package func pause(atFrame frame: Int64) {
        mixer.pauseRequest.store(min(frame, .max - 1), ordering: .releasing)
    }

    /// Ends a pause: at the first frame of the next block rendered, the timeline goes on from the frame where it
    /// froze, every track in sync, with the output ramping up over the same length (frame F + k of the timeline
    /// gets gain k/ramp). A resume before the pause took effect cancels it; one during the ramp down lets the
    /// ramp finish and goes on at once from the freeze frame.
    public func resume() {
        mixer.pauseRequest.store(.max, ordering: .releasing)
    }

    /// Whether a pause was asked for and not resumed (the timeline freezes at the end of its ramp).
    public var isPaused: Bool {
        mixer.pauseRequest.load(ordering: .acquiring) != .max
    }
}
