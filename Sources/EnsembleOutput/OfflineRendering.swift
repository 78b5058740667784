// The caller's thread: it is the engine's render thread for the call, and does the control-side chores
// (commands, events, stream loading) and the writing between blocks.
import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// How far an offline render has got, reported after every block.
public struct OfflineRenderProgress: Sendable, Equatable {
    /// Frames rendered so far by this call; grows with every report and ends at `totalFrames`.
    public let framesRendered: Int64
    /// Frames the call renders in all.
    public let totalFrames: Int64

    /// `framesRendered / totalFrames`, 0…1 (1 for an empty render).
    public var fraction: Double { totalFrames > 0 ? Double(framesRendered) / Double(totalFrames) : 1 }
    /// Whether this is the last report.
    public var isComplete: Bool { framesRendered >= totalFrames }
}

extension Engine {
    /// Renders the next `frames` frames of the mix, faster than real time, handing each block (interleaved,
    /// `speakerLayout.channelCount` samples a frame in `SpeakerLayout`'s order: L R L R … for stereo; at most
    /// `blockFrames` frames) to `consume`: the one call for offline work, like `AVAudioEngine`'s manual rendering.
    ///
    /// The calling thread is the engine's render thread until the call returns. Between blocks it pumps commands,
    /// throttles events and waits for streamed tracks, so an offline render never drops a command or an event and
    /// never underruns; before returning it waits until every event of the rendered frames has been delivered.
    /// `progress` is called after each block, on this thread. An error thrown by `consume` stops the render after
    /// that block. `blockFrames` defaults to `configuration.maxBlockFrames`; the bytes are the same for any block
    /// size. See the "Rendering offline" article (Ensemble.docc/OfflineRendering.md).
    public func renderOffline<E: Error>(frames: Int64, blockFrames: Int? = nil,
                                        progress: ((OfflineRenderProgress) -> Void)? = nil,
                                        into consume: (UnsafeBufferPointer<Float>) throws(E) -> Void) throws(E) {
        let block = offlineBlock(blockFrames)
        let channels = configuration.speakerLayout.channelCount
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: channels * block)
        defer { buffer.deallocate() }
        let total = max(frames, 0)
        var done: Int64 = 0
        while done < total {
            let n = Int(min(Int64(block), total - done))
            renderOfflineBlock(into: buffer, frames: n)
            try consume(UnsafeBufferPointer(start: buffer, count: channels * n))
            done += Int64(n)
            progress?(OfflineRenderProgress(framesRendered: done, totalFrames: total))
        }
        waitForEvents()
    }

    /// `renderOffline(frames:blockFrames:progress:into:)` into a file: appends the next `frames` frames to
    /// `sink` (`speakerLayout.channelCount` channels at the engine's rate: make it with
    /// `AudioFileSink(path:format:sampleRate:layout:)` and `speakerLayout`, which also records the layout in the
    /// file). Does not finish the sink: call `finish()` to put the file in place, or `abort()` after an error.
    /// Throws `.unsupported` (writing nothing) when the sink's channel count or sample rate is not the engine's (a
    /// file labelled with another rate would play at the wrong pitch).
    public func renderOffline(frames: Int64, blockFrames: Int? = nil, to sink: AudioFileSink,
                              progress: ((OfflineRenderProgress) -> Void)? = nil) throws(AudioFileError) {
        let channels = configuration.speakerLayout.channelCount
        guard sink.channelCount == channels else {
            throw AudioFileError(.unsupported, path: sink.path,
                                 "the sink takes \(sink.channelCount) channels; the engine renders \(channels) (\(configuration.speakerLayout))")
        }
        guard sink.sampleRate == sampleRate else {
            throw AudioFileError(.unsupported, path: sink.path,
                                 "the sink writes \(Int(exactly: sink.sampleRate).map(String.init) ?? "\(sink.sampleRate)") Hz; the engine renders at \(Int(sampleRate)) Hz")
        }
        try renderOffline(frames: frames, blockFrames: blockFrames, progress: progress) { (block) throws(AudioFileError) in
            try sink.write(interleaved: block)
        }
    }

    /// The frames of each block of an offline render: `blockFrames`, or the engine's largest block.
    private func offlineBlock(_ blockFrames: Int?) -> Int { max(1, blockFrames ?? configuration.maxBlockFrames) }

    /// `renderOffline(frames:blockFrames:progress:into:)` into memory: the next `frames` frames, interleaved
    /// (`speakerLayout.channelCount` samples a frame: L R L R … for stereo).
    public func renderOffline(frames: Int64, blockFrames: Int? = nil,
                              progress: ((OfflineRenderProgress) -> Void)? = nil) -> [Float] {
        let total = Int(clamping: max(frames, 0))
        let channels = configuration.speakerLayout.channelCount
        var output = [Float](repeating: 0, count: channels * total)
        output.withUnsafeMutableBufferPointer { out in
            guard let base = out.baseAddress else { return }
            let block = offlineBlock(blockFrames)
            var done = 0
            while done < total {
                let n = min(block, total - done)
                renderOfflineBlock(into: base + channels * done, frames: n)
                done += n
                progress?(OfflineRenderProgress(framesRendered: Int64(done), totalFrames: Int64(total)))
            }
        }
        waitForEvents()
        return output
    }

    /// One offline block: the control-side chores, then `frames` frames rendered interleaved into `buffer`.
    func renderOfflineBlock(into buffer: UnsafeMutablePointer<Float>, frames: Int) {
        pumpCommands()
        throttleEvents()
        waitForStreams()
        render(interleaved: buffer, frames: frames)
    }
}
