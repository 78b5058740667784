// Control side (any thread): a track's insert effect, an application's `CustomEffect` on its voices' own signal.
import EnsembleRender

extension Track {
    /// The application's effect on the track's insert (nil, the default: none). Change it with `setInsert(_:)`.
    public var insert: CustomEffect? { state.withLock { $0.insert } }

    /// Puts `effect` on the track's insert (nil: removes it), at once, whether the track is playing or not.
    ///
    /// Every voice of the track then runs its signal through the effect in place on the render thread: after the
    /// direct-path filter (`setFilter`), before the volume, fades, pan (or 3D gains) and sends, so the track's bus
    /// and the sends that follow the direct path hear the processed signal (a send with a filter of its own,
    /// `AuxSend.ownFilter`, taps the signal before the direct filter, and so before the insert). The effect is
    /// prepared here, on the calling thread, with `EffectFormat(sampleRate: engine.sampleRate, maxFrames:
    /// engine.configuration.maxBlockFrames, channelPairs: 1)`; its parameters change as on a bus, with
    /// `Engine.setParameter(_:to:of:)` and, on an exact frame, `Engine.scheduleParameter(_:to:of:at:onApplied:onDropped:)`.
    ///
    /// A stereo sound's two channels are the block's `left` and `right`. A mono sound's block has its signal in
    /// both (`right` a copy of `left`), and the voice goes on from `left`: what the effect writes to `right` is not
    /// heard. A positioned track (`setSpatial`) is mono at this point (a stereo sound is downmixed first), so the
    /// same rule applies.
    ///
    /// Each new voice of the track (`play` after a stop or an end, `play(at:)`) calls the effect's `reset()`
    /// before its first block; loops and `pause`/`play` continue the same voice and do not. A track has one voice at
    /// a time (a new voice cuts the old one: on its frame with `schedulePlay(at:)`, in the block the command reaches
    /// with `play(at:)`), so the instance is never run by two voices.
    /// Changing the insert while playing takes effect from the next block: the new effect starts from its prepared
    /// state (no crossfade). The render thread never calls an effect that has been freed, and never frees one: the
    /// replaced insert goes back to the control side to be released, as a replaced bus chain does.
    ///
    /// Inserts are a track feature: a fired `SoundEffect` instance has none (an effect instance would be needed per
    /// firing). A released track's voice plays on to its end with its insert, which is then removed.
    ///
    /// Throws `EngineError.invalidParameter` named `insert` for a handle installed before (on a bus chain or
    /// another insert, including this track's earlier one: make a new `CustomEffect`), or the error the effect's
    /// `prepare` throws; nothing changes then. Setting the handle that is already the track's insert does nothing.
    public func setInsert(_ effect: CustomEffect?) throws(EngineError) {
        if let effect, insert === effect { return }
        try engine.setInsert(effect, of: self)
    }
}
