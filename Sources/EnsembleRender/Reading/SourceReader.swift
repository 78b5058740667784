// Render thread (or an offline render worker running one lane): reading a voice's source, for both paths.
import EnsembleFormats

/// Reads a voice's source at its cursor into scratch planes, whichever kind of source it is: a live stream (what
/// has arrived, then silence while it is dry), a streamed file (the loader's ring), WSOLA grains for a
/// pitch-preserving rate, or a sound in memory through the voice's resampler. The 2D path (`VoiceRender`) and the
/// 3D path (`SpatialRender`) both read through `fill`, so a source reads the same whichever path mixes it.
///
/// Thread: one lane; it writes only the voice's cursor and grain state and the lane's stream windows.
struct SourceReader {
    /// WSOLA grain hop (10 ms; grains are twice that) and its Hann window (`TimeStretch`), shared read-only.
    let stretchHop: Int
    let stretchWindow: UnsafePointer<Float>

    /// Reads `count` frames of `voice`'s source for output frames from `frame` into `left`/`right` (a mono
    /// source fills `left` only), advancing its cursor. `stretching`: the rate is pitch-preserving and differs
    /// from 1, so the frames come from WSOLA grains (the caller knows which step that compares: the 2D path the
    /// cursor's, the 3D path the rate's without doppler).
    @inline(__always)
    @_noLocks
    func fill(_ voice: UnsafeMutablePointer<Voice>, frame: Int64, stretching: Bool, lane: UnsafeMutablePointer<MixLane>,
              _ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, count: Int) {
        let source = voice.pointee.source
        let tables = lane.pointee.tables
        if let stream = source.stream, stream.capacity == 0 {
            // A generated voice (`GeneratedSource.voiceSource`): the application's generator writes the frames.
            GeneratorCall.fill(&voice.pointee, stream, frame: frame, left, right, count: count)
        } else if let stream = source.stream, stream.live {
            LiveReader.fill(&voice.pointee.cursor, stream, frame: frame, tables: tables, left, right, count: count,
                            windowLeft: lane.pointee.streamWindowLeft, windowRight: lane.pointee.streamWindowRight,
                            windowCapacity: MixLane.streamWindowFrames)
        } else if let stream = source.stream {
            StreamReader.fill(&voice.pointee.cursor, stream, tables: tables, left, right, count: count,
                              windowLeft: lane.pointee.streamWindowLeft, windowRight: lane.pointee.streamWindowRight,
                              windowCapacity: MixLane.streamWindowFrames)
        } else if stretching {
            let phase = TimeStretch.grainPhase(sequence: voice.pointee.sequence, hop: stretchHop)
            let ratio = Double(voice.pointee.pitch.baseStep) * 0x1p-32
            var cursor = voice.pointee.cursor, stretch = voice.pointee.pitch.stretch
            TimeStretch.fill(&cursor, &stretch, source, window: stretchWindow, hop: stretchHop, search: stretchHop,
                             ratio: ratio, phase: phase, frame: frame, tables: tables, left, right, count: count)
            voice.pointee.cursor = cursor
            voice.pointee.pitch.stretch = stretch
        } else {
            Resampler.fill(&voice.pointee.cursor, source, tables: tables, left, right, count: count)
        }
    }
}
