// Threads: control side (any thread).
import EnsembleFormats
import EnsembleRender

extension Track {
    /// Test hook: the generation of the track's current voice. It changes exactly when a call starts a new voice
    /// (rather than resuming or ignoring a `play`), which is how the soak driver counts voices.
    @_spi(Testing)
    public var voiceGeneration: UInt32 { state.withLock { $0.generation } }
}
