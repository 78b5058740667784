// The caller's thread, as the engine's render thread for the call (see `Engine.renderOffline`).

/// Renders an engine's mix faster than real time into a file writer or into memory, block by block: the
/// older spelling of `Engine.renderOffline(frames:blockFrames:to:progress:)`, which it calls.
public enum OfflineRenderer {
    /// Renders `frames` frames in blocks of `blockFrames` into `writer` (stereo, the engine's rate), calling
    /// `progress` with the frames done after each block. Does not finish the writer.
    public static func render(_ engine: Engine, frames: Int64, blockFrames: Int = 1024,
                              to writer: AudioFileSink,
                              progress: ((Int64) -> Void)? = nil) throws(AudioFileError) {
        try engine.renderOffline(frames: frames, blockFrames: blockFrames, to: writer) { progress?($0.framesRendered) }
    }

    /// Renders `frames` frames into memory, interleaved L R L R … (for tools and tests).
    public static func render(_ engine: Engine, frames: Int, blockFrames: Int = 1024) -> [Float] {
        engine.renderOffline(frames: frames, blockFrames: blockFrames)
    }
}
