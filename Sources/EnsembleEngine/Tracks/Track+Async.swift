// Any thread (an async task) waits; the event thread resumes it when the end is reported.
import EnsembleFormats
import EnsembleRender

extension Track {
    /// The end of the track's current play, awaited: `let end = try await track.finished`.
    ///
    /// Waits for the voice started by the last `play` (or `schedulePlay`) to stop sounding, and returns the same
    /// `TrackEnd` that `onFinish` receives (natural end `.finished`, `.stopped`, `.stolen`, `.failed`); both
    /// fire for the same end. If that voice has already ended, returns its end at once; if the track was never
    /// played, waits for the end of its first play. A pause is not an end. A timed play cancelled or dropped
    /// before it sounds never ends: cancel the waiting task.
    ///
    /// - Throws: `CancellationError` when the waiting task is cancelled (it stops waiting at once; nothing is
    ///   left behind).
    public var finished: TrackEnd {
        get async throws {
            try await endWaiters.wait { last in
                let generation = state.withLock { $0.generation }
                if generation == 0 { return .wait(nil) }
                if let last, last.key == generation { return .now(last.value) }
                return .wait(generation)
            }
        }
    }
}

extension EffectInstance {
    /// The end of this firing, awaited: `let done = await instance.completed`. The same `EffectCompletion` the
    /// `fire` completion callback receives (both fire); returns at once if the firing has already ended.
    ///
    /// A cancelled waiting task stops waiting at once and gets nil (nothing is left behind).
    public var completed: EffectCompletion? {
        get async {
            try? await outcome.wait { last in
                if let last { return .now(last.value) }
                return .wait(nil)
            }
        }
    }
}
