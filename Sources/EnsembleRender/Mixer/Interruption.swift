// Render thread: the state and ramps of an engine-wide pause (the request is `Mixer.pauseRequest`).
import EnsembleFormats

/// The render side of an engine-wide interruption: the engine timeline freezes and resumes with short linear
/// ramps on the master output, so no voice, start or timed command is touched.
///
/// A pause asked for frame A (or the next block's first frame) ramps the output from 1 down to 0 over the
/// `ramp` frames A…A+ramp−1 (gain (A+ramp−t)/ramp on frame t), and the timeline freezes at F = A + ramp: every
/// later rendered frame is silence and the engine clock stays on F. A resume seen at the start of a later block
/// restarts the timeline on F with the ramp up: frame F+k gets gain k/ramp. The rendered output is therefore the
/// uninterrupted render with its frames from F on moved later by the time spent frozen, and the two ramps on
/// top. A resume asked for during the pause ramp lets it finish and restarts at once on F (a dip to silence);
/// a pause asked for during the resume ramp starts when that ramp has ended.
struct Interruption: BitwiseCopyable {
    /// Ramp length in frames (0: hard cut).
    let ramp: Int64
    /// The timeline frame the pause ramp starts on (.max: no pause under way).
    private(set) var fadeOutStart: Int64 = .max
    /// The timeline frame the last resume ramp started on.
    private var fadeInStart: Int64 = .min
    /// Whether the timeline stands still.
    private(set) var frozen = false

    init(ramp: Int) { self.ramp = Int64(max(ramp, 0)) }

    /// The timeline frame the freeze falls on (.max when no pause is under way).
    var freezeFrame: Int64 {
        @_noLocks get { fadeOutStart == .max ? .max : fadeOutStart + ramp }
    }

    /// Takes the control side's wish at the start of a block whose first timeline frame is `now`.
    @_noLocks
    mutating func update(request: Int64, now: Int64) {
        if request == .max {
            // Run: a frozen timeline restarts here with the resume ramp (a pause ramp under way finishes first).
            if frozen {
                frozen = false
                fadeOutStart = .max
                fadeInStart = now
            }
        } else if !frozen && fadeOutStart == .max {
            let resumeEnd = fadeInStart == .min ? Int64.min : fadeInStart + ramp
            fadeOutStart = max(max(request, now), resumeEnd)
        }
    }

    /// Called when the timeline reaches `freezeFrame`: freezes it, unless running was asked for meanwhile, in
    /// which case the resume ramp starts right there. Returns whether the timeline is now frozen.
    @_noLocks
    mutating func reachFreeze(at frame: Int64, runRequested: Bool) -> Bool {
        fadeOutStart = .max
        if runRequested {
            fadeInStart = frame
            return false
        }
        frozen = true
        return true
    }

    /// Whether either ramp touches timeline frames [t0, t1).
    @_noLocks
    func ramps(_ t0: Int64, _ t1: Int64) -> Bool {
        (fadeOutStart != .max && fadeOutStart < t1) || (fadeInStart != .min && fadeInStart + ramp > t0)
    }

    /// The master gain on timeline frame `t`.
    @_noLocks
    func gain(at t: Int64) -> Float {
        if fadeOutStart != .max && t >= fadeOutStart { return Float(fadeOutStart + ramp - t) / Float(ramp) }
        if fadeInStart != .min && t >= fadeInStart && t < fadeInStart + ramp { return Float(t - fadeInStart) / Float(ramp) }
        return 1
    }
}
