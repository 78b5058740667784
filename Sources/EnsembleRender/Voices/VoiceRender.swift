// Render thread (or an offline render worker running one lane): the per-voice path of one span.
import Synchronization
import EnsembleFormats

/// One voice through one span, after OpenAL Soft's `core/voice.cpp`: read the cursor (the sound in memory, the
/// stream's ring, or WSOLA grains), apply the gains and pan (`GainStage`, or fused into the resampler when they are
/// constant and nobody meters the voice), and add the result into the span's destination. A virtual voice is mixed
/// only up to `VirtualState.silentFrom`. A voice with a filter, sends or an insert is filtered and run through its
/// insert (`VoiceInserts`) in the scratch and mixed into its main bus and each send's bus; a voice with none of
/// them takes the plain path, fused kernels included.
///
/// Thread: one lane. Invariant: writes only the voice itself, its filter and sends' state, its meter, its stream's
/// cells and its lane's buffers, so voices of different lanes can run at once; ending the voice is left to the
/// caller (`render` returns false) for the mixer's serial phase. See the "Lanes and render workers" article
/// (Ensemble.docc/LanesAndWorkers.md, "The contract").
struct VoiceRender {
    let telemetry: VoiceTelemetry
    let reader: SourceReader
    /// The voices' filters and sends (`VoiceEnvironments`, the pool's side table).
    let environments: VoiceEnvironments

    /// Mixes the voice at `voice` (slot `slot`) over output frames [t0, t1) into `outL`/`outR` (which start at
    /// frame t0), with the lane's scratch, and its sends into the lane's destinations for their buses (`span`,
    /// `rack`, `accumulators`). Returns false when the voice stops sounding in the span (it ends or pauses at
    /// `voice.stopFrame`), true while it goes on.
    @_noLocks
    func render(_ voice: UnsafeMutablePointer<Voice>, slot: Int, from t0: Int64, to t1: Int64,
                into outL: UnsafeMutablePointer<Float>, _ outR: UnsafeMutablePointer<Float>, lane: UnsafeMutablePointer<MixLane>,
                _ span: MixSpan, _ rack: BusRack, _ accumulators: LaneAccumulators) -> Bool {
        let begin = max(voice.pointee.transport.startFrame, t0)
        if begin >= t1 { return true }
        if let stream = voice.pointee.source.stream {
            StreamFailure.endIfFailed(&voice.pointee, stream, at: begin)
            if stream.live { LiveReader.endIfEnded(&voice.pointee, stream, at: begin) }
        }
        let stop = voice.pointee.stopFrame
        let end = min(stop, t1)
        var meter = MeterAccumulator()
        // Grains restart whenever the voice plays unstretched (rate 1) in between. (Written only when it changes:
        // a store every span would pull the line, which the serial phase reads for `VirtualVoices`, back and
        // forth between the cores of a parallel render.)
        if voice.pointee.pitch.stretch.active, voice.pointee.cursor.step == voice.pointee.pitch.baseStep {
            voice.pointee.pitch.stretch.active = false
        }
        // A virtual voice is not mixed from `silentFrom` on: its cursor only advances (below), exactly.
        let mixEnd = min(end, max(voice.pointee.virtual.silentFrom, begin))
        if mixEnd > begin {
            var count = Int(mixEnd - begin)
            let offset = Int(begin - t0)
            let source = voice.pointee.source
            let tables = lane.pointee.tables
            let scratchLeft = lane.pointee.scratchLeft, scratchRight = lane.pointee.scratchRight, scratchGain = lane.pointee.scratchGain
            // No sends and no filter (almost every voice): the plain path, with the bits of a mix without either.
            let plain = environments.isPlain(slot, usesEnvironment: voice.pointee.routing.usesEnvironment, from: begin)
            let stretching = voice.pointee.pitch.preservePitch
                && voice.pointee.cursor.step != voice.pointee.pitch.baseStep
            if source.stream == nil, !stretching, plain, !voice.pointee.routing.metering,
               let gains = GainStage.constantGains(voice, frame: begin, count: count) {
                // A sound in memory with constant gains and no meter: resample and mix in one pass (same bits as
                // reading into the scratch, then the gain stage).
                Resampler.mix(&voice.pointee.cursor, source, tables: tables, gains: gains,
                              into: outL + offset, outR + offset, count: count)
                return finish(voice, slot: slot, begin: begin, mixEnd: mixEnd, end: end, stop: stop, t1: t1, meter)
            }
            reader.fill(voice, frame: begin, stretching: stretching, lane: lane, scratchLeft, scratchRight, count: count)
            // A generated voice whose generator ended in the span (`GeneratorCall`) mixes only up to its end.
            count = min(count, Int(max(voice.pointee.stopFrame - begin, 0)))
            if plain {
                GainStage.mix(voice, frame: begin, count: count,
                              source: scratchLeft, scratchRight, gainScratch: scratchGain,
                              into: outL + offset, outR + offset, meter: &meter)
            } else {
                mixWithEnvironment(voice, slot: slot, frame: begin, count: count, into: outL + offset, outR + offset,
                                   lane: lane, span, rack, accumulators, meter: &meter)
            }
        }
        return finish(voice, slot: slot, begin: begin, mixEnd: mixEnd, end: end, stop: stop, t1: t1, meter)
    }

    /// The end of `render`: the virtual stretch, the meter, whether the voice goes on.
    @inline(__always)
    @_noLocks
    private func finish(_ voice: UnsafeMutablePointer<Voice>, slot: Int, begin: Int64, mixEnd: Int64, end: Int64,
                        stop: Int64, t1: Int64, _ meter: MeterAccumulator) -> Bool {
        if end > mixEnd {
            // Virtual (`VirtualVoices`): the cursor moves on as mixing would have moved it, and nothing is mixed.
            // (A positioned voice's spatial update must still run on its grid frames, for `spatialAudibility`.)
            VirtualVoices.advance(voice, frames: Int(end - mixEnd), at: mixEnd)
        }
        if voice.pointee.routing.metering { telemetry.meters[slot].publish(meter) }
        // A voice that goes on has its position published by the serial phase after the lanes
        // (`Mixer.publishPositions`): the telemetry words of neighbouring slots share cache lines, and lanes on
        // different cores writing them every block would fight over those lines.
        // (`stopFrame` is read again: a generated voice may have ended during the span.)
        return stop > t1 && voice.pointee.stopFrame > t1
    }

    /// The path of a voice with a filter, sends or an insert, after its source signal is in the lane's scratch
    /// (`count` frames from output frame `frame`): the direct filter on the scratch (a copy kept first if a send
    /// filters the unfiltered signal its own way), the insert in place (`VoiceInserts.run`), the gain stage into
    /// `outL`/`outR` (the main bus, or the route buffers while it moves), metered as ever; then each send, in
    /// order, into its bus's lane destination: a send that follows the direct path carries the insert's output, one
    /// with a filter of its own the copy taken before the direct filter (and so before the insert).
    @_noLocks
    private func mixWithEnvironment(_ voice: UnsafeMutablePointer<Voice>, slot: Int, frame: Int64, count: Int,
                                    into outL: UnsafeMutablePointer<Float>, _ outR: UnsafeMutablePointer<Float>,
                                    lane: UnsafeMutablePointer<MixLane>, _ span: MixSpan, _ rack: BusRack, _ accumulators: LaneAccumulators,
                                    meter: inout MeterAccumulator) {
        let left = lane.pointee.scratchLeft, right = lane.pointee.scratchRight
        let channels = voice.pointee.source.channelCount == 2 ? 2 : 1
        let keepDry = environments.needsDry(slot, from: frame)
        if keepDry {
            MixLane.copy(left, to: lane.pointee.dryLeft, count)
            if channels == 2 { MixLane.copy(right, to: lane.pointee.dryRight, count) }
        }
        environments.filter(slot).pointee.process(left, right, channels: channels, frame: frame, count: count)
        if let insert = environments.inserts.chain(slot) {
            let resets = VoiceInserts.run(insert, left, right, channels: channels, frame: frame, count: count)
            if resets > 0 { rack.effectResets.pointee.add(resets, ordering: .relaxed) }
        }
        GainStage.mix(voice, frame: frame, count: count, source: left, right, gainScratch: lane.pointee.scratchGain,
                      into: outL, outR, meter: &meter)
        guard environments.hasSends(slot) else { return }
        let offset = Int(frame - span.start)
        for i in 0..<SendsSetup.count {
            let send = environments.send(slot, i)
            let bus = send.pointee.bus
            guard send.pointee.isOn else { continue }
            // A send whose bus has since been removed is silent (its voices' main path falls back to the master;
            // an effect send must not).
            guard bus == 0 || rack.isConfigured(bus) else { continue }
            var fromL = left, fromR = right
            if send.pointee.ownFilter {
                let dryL = keepDry ? lane.pointee.dryLeft : left, dryR = keepDry ? lane.pointee.dryRight : right
                MixLane.copy(dryL, to: lane.pointee.sendLeft, count)
                if channels == 2 { MixLane.copy(dryR, to: lane.pointee.sendRight, count) }
                send.pointee.filter.process(lane.pointee.sendLeft, lane.pointee.sendRight, channels: channels, frame: frame,
                                            count: count)
                (fromL, fromR) = (lane.pointee.sendLeft, lane.pointee.sendRight)
            }
            let (toL, toR) = lane.pointee.destination(bus, span, rack, accumulators)
            var unmetered = MeterAccumulator()
            GainStage.mix(voice, frame: frame, count: count, source: fromL, fromR, gainScratch: lane.pointee.scratchGain,
                          into: toL + offset, toR + offset,
                          share: .send(level: send.pointee.level, preFader: send.pointee.preFader), meter: &unmetered)
        }
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
                              lane: lane, span, rack, accumulators)
            lane.pointee.split(voice.pointee, span, rack, accumulators)
            return keep
        }
        let (toL, toR) = lane.pointee.destination(voice.pointee.routing.bus, span, rack, accumulators)
        return render(voice, slot: slot, from: frame, to: span.end, into: toL + offset, toR + offset,
                      lane: lane, span, rack, accumulators)
    }
}
