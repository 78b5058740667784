/// Renders an engine's mix faster than real time into a file writer, block by block.
///
/// The loop is the render thread for its duration: it calls `Engine.render` (which never allocates or locks)
/// and, between blocks, does the control-side chores a real-time output leaves to other threads (moving
/// queued commands into the ring, waiting for the event thread when events pile up, waiting for streamed tracks'
/// loader so that an offline mix never underruns) and the file I/O.
public enum OfflineRenderer {
    /// Renders `frames` frames in blocks of `blockFrames` into `writer` (stereo, the engine's rate), calling
    /// `progress` with the frames done after each block, and `observe` with each block's interleaved samples
    /// (valid only during the call; a `WaveformOverview` gathers them for `--plot`). Does not finish the writer.
    public static func render(_ engine: Engine, frames: Int64, blockFrames: Int = 1024,
                              to writer: StreamingFileWriter,
                              progress: ((Int64) -> Void)? = nil,
                              observe: ((UnsafeBufferPointer<Float>) -> Void)? = nil) throws(AudioFileError) {
        let block = max(1, blockFrames)
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
        defer { buffer.deallocate() }
        var done: Int64 = 0
        while done < frames {
            let n = Int(min(Int64(block), frames - done))
            engine.pumpCommands()
            engine.throttleEvents()
            engine.waitForStreams()
            engine.render(interleaved: buffer, frames: n)
            try writer.write(interleaved: UnsafeBufferPointer(start: buffer, count: 2 * n))
            observe?(UnsafeBufferPointer(start: buffer, count: 2 * n))
            done += Int64(n)
            progress?(done)
        }
    }

    /// Renders `frames` frames into memory, interleaved L R L R … (for tools and tests).
    public static func render(_ engine: Engine, frames: Int, blockFrames: Int = 1024) -> [Float] {
        var output = [Float](repeating: 0, count: 2 * frames)
        output.withUnsafeMutableBufferPointer { out in
            guard let base = out.baseAddress else { return }
            var done = 0
            while done < frames {
                let n = min(max(1, blockFrames), frames - done)
                engine.pumpCommands()
                engine.throttleEvents()
                engine.waitForStreams()
                engine.render(interleaved: base + 2 * done, frames: n)
                done += n
            }
        }
        return output
    }
}
