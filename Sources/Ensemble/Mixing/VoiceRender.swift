// Render thread (or an offline render worker running one lane): the per-voice path of one span.

/// One voice through one span, after OpenAL Soft's `core/voice.cpp`: read the cursor (the sound in memory, the
/// stream's ring, or WSOLA grains for a pitch-keeping rate), apply the gains and pan (`GainStage`, or fused into
/// the resampler when they are constant and nobody meters the voice), and add the result into the span's
/// destination.
///
/// A virtual voice (`VirtualVoices`) is mixed only up to `VirtualState.silentFrom`; after that its cursor is
/// advanced without resampling or mixing.
///
/// Writes only the voice itself (cursor, grain state, a release after a stream failure), its
/// meter, its stream's cells, the lane's scratch and `outL`/`outR`: voices of different lanes can run at once.
/// Ending the voice is left to the caller (`render` returns false), which defers it to the mixer's serial phase.
struct VoiceRender {
    let telemetry: VoiceTelemetry
    /// WSOLA grain hop (10 ms; grains are twice that) and its Hann window (`TimeStretch`), shared read-only.
    let stretchHop: Int
    let stretchWindow: UnsafePointer<Float>

    /// Mixes the voice at `voice` (slot `slot`) over output frames [t0, t1) into `outL`/`outR` (which start at
    /// frame t0), with the lane's scratch. Returns false when the voice stops sounding in the span (it ends or
    /// pauses at `voice.stopFrame`), true while it goes on.
    @_noLocks
    func render(_ voice: UnsafeMutablePointer<Voice>, slot: Int, from t0: Int64, to t1: Int64,
                into outL: UnsafeMutablePointer<Float>, _ outR: UnsafeMutablePointer<Float>, lane: MixLane) -> Bool {
        let begin = max(voice.pointee.startFrame, t0)
        if begin >= t1 { return true }
        if let stream = voice.pointee.source.stream { StreamFailure.endIfFailed(&voice.pointee, stream, at: begin) }
        let stop = voice.pointee.stopFrame
        let end = min(stop, t1)
        var meter = MeterAccumulator()
        // Grains restart whenever the voice plays unstretched (rate 1) in between.
        if voice.pointee.cursor.step == voice.pointee.baseStep { voice.pointee.stretch.active = false }
        // A virtual voice is not mixed from `silentFrom` on: its cursor only advances (below), exactly.
        let mixEnd = min(end, max(voice.pointee.virtual.silentFrom, begin))
        if mixEnd > begin {
            let count = Int(mixEnd - begin)
            let offset = Int(begin - t0)
            let source = voice.pointee.source
            let tables = lane.tables
            let scratchLeft = lane.scratchLeft, scratchRight = lane.scratchRight, scratchGain = lane.scratchGain
            if let stream = source.stream {
                // Streamed: fill the scratch from the ring, then the same gain stage (same bits as the fused path).
                StreamReader.fill(&voice.pointee.cursor, stream, tables: tables, scratchLeft, scratchRight, count: count,
                                  windowLeft: lane.streamWindowLeft, windowRight: lane.streamWindowRight,
                                  windowCapacity: MixLane.streamWindowFrames)
                GainStage.mix(voice.pointee, frame: begin, count: count,
                              source: scratchLeft, scratchRight, gainScratch: scratchGain,
                              into: outL + offset, outR + offset, meter: &meter)
            } else if voice.pointee.preservePitch, voice.pointee.cursor.step != voice.pointee.baseStep {
                // Pitch-preserving rate: WSOLA grains around the cursor, then the same gain stage.
                let phase = TimeStretch.grainPhase(sequence: voice.pointee.sequence, hop: stretchHop)
                let ratio = Double(voice.pointee.baseStep) * 0x1p-32
                var cursor = voice.pointee.cursor, stretch = voice.pointee.stretch
                TimeStretch.fill(&cursor, &stretch, source, window: stretchWindow, hop: stretchHop, search: stretchHop,
                                 ratio: ratio, phase: phase, frame: begin, tables: tables, scratchLeft, scratchRight,
                                 count: count)
                voice.pointee.cursor = cursor
                voice.pointee.stretch = stretch
                GainStage.mix(voice.pointee, frame: begin, count: count,
                              source: scratchLeft, scratchRight, gainScratch: scratchGain,
                              into: outL + offset, outR + offset, meter: &meter)
            } else if !voice.pointee.metering,
                      let gains = GainStage.constantGains(voice.pointee, frame: begin, count: count) {
                // Constant gains, no meter: resample and mix in one pass (same bits as the two-pass path).
                Resampler.mix(&voice.pointee.cursor, source, tables: tables, gains: gains,
                              into: outL + offset, outR + offset, count: count)
            } else {
                Resampler.fill(&voice.pointee.cursor, source, tables: tables, scratchLeft, scratchRight, count: count)
                GainStage.mix(voice.pointee, frame: begin, count: count,
                              source: scratchLeft, scratchRight, gainScratch: scratchGain,
                              into: outL + offset, outR + offset, meter: &meter)
            }
        }
        if end > mixEnd {
            // Virtual (`VirtualVoices`): the cursor moves on as mixing would have moved it, and nothing is mixed.
            // (A positioned voice's spatial update must still run on its grid frames, for `spatialAudibility`.)
            VirtualVoices.advance(voice, frames: Int(end - mixEnd))
        }
        if voice.pointee.metering { telemetry.meters[slot].publish(meter) }
        // A voice that goes on has its position published by the serial phase after the lanes
        // (`Mixer.publishPositions`): the telemetry words of neighbouring slots share cache lines, and lanes on
        // different cores writing them every block would fight over those lines.
        return stop > t1
    }

    /// The lane's 2D path from output frame `frame` to the span's end: into the lane's destination for the
    /// voice's bus, or, while it moves between buses, through the route buffers split between the two
    /// (`MixLane.split`). `Mixer.renderLane` runs it from the span's start; `SpatialRender` from the frame where a
    /// positioned voice gliding back to 2D got there. Returns what `render(_:slot:from:to:into:_:lane:)` returns.
    @_noLocks
    func render(_ voice: UnsafeMutablePointer<Voice>, slot: Int, from frame: Int64, _ span: MixSpan,
                lane: UnsafeMutablePointer<MixLane>, _ rack: BusRack, _ accumulators: LaneAccumulators) -> Bool {
        let offset = Int(frame - span.start)
        if voice.pointee.isRouting(span.start) {
            let (routeL, routeR) = lane.pointee.beginRoute(span.frames)
            let keep = render(voice, slot: slot, from: frame, to: span.end, into: routeL + offset, routeR + offset,
                              lane: lane.pointee)
            lane.pointee.split(voice.pointee, span, rack, accumulators)
            return keep
        }
        let (toL, toR) = lane.pointee.destination(voice.pointee.bus, span, rack, accumulators)
        return render(voice, slot: slot, from: frame, to: span.end, into: toL + offset, toR + offset,
                      lane: lane.pointee)
    }
}
