// Render thread (or an offline render worker running one lane): a positioned voice's path through one span.
import Synchronization
import EnsembleFormats

/// A positioned voice through one span, after OpenAL Soft's `core/voice.cpp`: in runs that end on the voice's
/// spatial updates (`SpatialUpdate`), read the cursor into mono scratch, downmix a stereo sound ((L + R) / 2, as
/// OpenAL Soft does for 3D sources), run its filter and the high shelf, and add the result into every output
/// channel of its bus and its sends' buses (`SpatialGainStage`), split between two buses while it moves between
/// them. A voice gliding back to 2D that gets there mid-span continues on `VoiceRender`'s path from that frame.
/// On headphones (`binaural`), the head-related filters of `HRTFVoices.mix` take the panning's place, on one path
/// for every voice (the fused speaker kernels do not apply).
///
/// Thread: one lane. Invariant: like `VoiceRender`, it writes only the voice's own state, meter, stream cells and
/// its lane's buffers; the listener (`SpatialScene`) is read-only here. See the "3D sound" article
/// (Ensemble.docc/SpatialAudio.md).
struct SpatialRender {
    let telemetry: VoiceTelemetry
    let reader: SourceReader
    let scene: UnsafePointer<SpatialScene>
    /// The 2D path, for the rest of a span after the voice left the spatial path.
    let flat: VoiceRender
    /// Headphones: each slot's head-related filters (nil: speakers, the panning of `SpatialGainStage`).
    var binaural: HRTFVoices? = nil

    /// Mixes the positioned voice at `voice` (slot `slot`) over the span into lane `lane`'s destinations. Returns
    /// false when the voice stops sounding in the span (it ends or pauses at `voice.stopFrame`).
    @_noLocks
    func render(_ voice: UnsafeMutablePointer<Voice>, slot: Int, _ span: MixSpan, lane: UnsafeMutablePointer<MixLane>,
                _ rack: BusRack, _ accumulators: LaneAccumulators) -> Bool {
        let t0 = span.start, t1 = span.end
        let begin = max(voice.pointee.transport.startFrame, t0)
        if begin >= t1 { return true }
        if let stream = voice.pointee.source.stream {
            StreamFailure.endIfFailed(&voice.pointee, stream, at: begin)
            if stream.live { LiveReader.endIfEnded(&voice.pointee, stream, at: begin) }
        }
        // Grains restart whenever the voice plays unstretched in between (written only when it changes, as in
        // `VoiceRender`).
        if voice.pointee.pitch.stretch.active,
           !voice.pointee.pitch.preservePitch || voice.pointee.spatial.rateStep == voice.pointee.pitch.baseStep {
            voice.pointee.pitch.stretch.active = false
        }
        var meter = MeterAccumulator()
        var t = begin
        var leftSpatial = false
        var plainMono: Bool? = nil
        // Read once: passing the lane's stored tables to each run's kernel call copied them (144 bytes) per run.
        let tables = lane.pointee.tables
        while t < min(voice.pointee.stopFrame, t1) {
            let silentFrom = voice.pointee.virtual.silentFrom
            if t >= voice.pointee.spatial.nextUpdate {
                // A voice starting or becoming positioned starts on its filter (`HRTFVoices.retarget`).
                var fresh = true
                if case .ramp = voice.pointee.spatial.onset { fresh = false }
                if SpatialUpdate.run(&voice.pointee, at: t, scene: scene) {
                    // Still: so is every update until a command for the voice or a listener or settings change
                    // asks for one (`spatialChanged`, `Mixer.spatialSceneChanged`). One run to the span's end,
                    // the same bits as many.
                    voice.pointee.spatial.nextUpdate = untilAsked(t1)
                } else if t >= silentFrom {
                    // Virtual: nothing is heard, so one update per `VirtualVoices` decision is enough (its
                    // audibility, and the doppler step its cursor moves by). Thousands of distant sources then
                    // cost a cursor step and one evaluation per 1024 frames each.
                    voice.pointee.spatial.nextUpdate = VirtualVoices.nextFrame(after: t)
                } else if !scene.pointee.runsEveryUpdateForTesting, SpatialUpdate.isQuiet(&voice.pointee, scene: scene) {
                    // Moved, then nothing more (a game's position for this frame): the updates left before the
                    // span's end would all change nothing (`isQuiet`), so none is run, and one run takes the
                    // ramp and the steady frames after it; nor is any after it, until one is asked for.
                    voice.pointee.spatial.nextUpdate = untilAsked(t1)
                }
                if let binaural, voice.pointee.spatial.isOn, voice.pointee.spatial.rampStart == t,
                   voice.pointee.spatial.rampLength > 0 {
                    // The update started a new ramp: head for the filter of the direction it evaluated.
                    binaural.retarget(slot, direction: HRTFVoices.direction(voice, scene: scene), at: t, fresh: fresh)
                }
                if !voice.pointee.spatial.isOn {
                    leftSpatial = true
                    break
                }
                continue // the update may have moved the natural end
            }
            var end = min(min(voice.pointee.stopFrame, t1), voice.pointee.spatial.nextUpdate)
            if t >= silentFrom {
                // Virtual (`VirtualVoices`): the cursor moves on as mixing would have moved it; nothing is mixed.
                VirtualVoices.advance(voice, frames: Int(end - t), at: t)
                binaural?.skipped(slot)
                t = end
                continue
            }
            end = min(end, silentFrom)
            if binaural != nil {
                // Headphones: one path, the fused speaker kernels do not apply.
                runPart(voice, slot: slot, from: t, to: end, span, lane: lane, rack, accumulators, meter: &meter)
            } else if !mixResampledMono(voice, slot: slot, from: t, to: end, span, lane: lane, rack, accumulators,
                                 tables: tables, plainMono: &plainMono) {
                run(voice, slot: slot, from: t, to: end, span, lane: lane, rack, accumulators, meter: &meter)
            }
            t = end
        }
        if voice.pointee.routing.metering { telemetry.meters[slot].publish(meter) }
        if leftSpatial { return flat.render(voice, slot: slot, from: t, span, lane: lane, rack, accumulators) }
        return voice.pointee.stopFrame > t1
    }

    /// The next update of a voice that is still or quiet (`SpatialUpdate.isQuiet`): none until a command or a
    /// listener change asks for one; with the test hook, the first grid frame after the span, where the update
    /// skipped finds it still.
    @inline(__always)
    @_noLocks
    private func untilAsked(_ t1: Int64) -> Int64 {
        scene.pointee.runsEveryUpdateForTesting ? SpatialUpdate.nextGridFrame(after: t1 - 1) : .max
    }

    /// A mono voice of a sound in memory, without sends or filter (`plain`), shelf, meter or bus move at `frame`,
    /// whose doppler applies: its gains can go straight into the fused kernels (`Resampler.mix`, `mixRamped`).
    @inline(__always)
    @_noLocks
    private static func isPlainMono(_ voice: UnsafeMutablePointer<Voice>, from frame: Int64, plain: Bool) -> Bool {
        plain && voice.pointee.source.channelCount == 1 && voice.pointee.source.stream == nil
            && SpatialUpdate.dopplerApplies(voice.pointee) && voice.pointee.spatial.shelf == nil
            && !voice.pointee.routing.metering && !voice.pointee.isRouting(frame)
    }

    /// A voice whose frames are its sound's own (step 1, not pitch-preserving, Float samples): the ramped copy
    /// kernels read them in place.
    @inline(__always)
    @_noLocks
    private static func copiesAtRateOne(_ voice: UnsafeMutablePointer<Voice>) -> Bool {
        voice.pointee.cursor.isPassthrough && !voice.pointee.pitch.preservePitch && voice.pointee.source.packed == nil
    }

    /// A voice the linear or sinc kernel resamples with its gains (`Resampler.rampsInKernel`, not pitch-preserving).
    @inline(__always)
    @_noLocks
    private static func resamplesRamped(_ voice: UnsafeMutablePointer<Voice>) -> Bool {
        !voice.pointee.pitch.preservePitch && Resampler.rampsInKernel(voice.pointee.cursor, voice.pointee.source)
    }

    /// Output frames [a, b) of a plain mono voice (`isPlainMono`) that the linear or sinc kernel resamples with
    /// its gains: a moving voice with doppler, whose gliding pitch ends a run at every grid frame (three or four
    /// runs a game frame). The kernel and gains `run` and `runPart` would pick for that run, reached without
    /// their checks; false, with nothing mixed, for any other run. `plainMono` keeps, for the rest of the span,
    /// what cannot change within it: the voice's setup, and its environment and bus move, which commands change
    /// only between spans and which stay plain once plain (`isIdentity(from:)`, `isRouting` are monotone in time).
    @inline(__always)
    @_noLocks
    private func mixResampledMono(_ voice: UnsafeMutablePointer<Voice>, slot: Int, from a: Int64, to b: Int64,
                                  _ span: MixSpan, lane: UnsafeMutablePointer<MixLane>, _ rack: BusRack,
                                  _ accumulators: LaneAccumulators, tables: ResamplerTables,
                                  plainMono: inout Bool?) -> Bool {
        if plainMono == nil {
            plainMono = Self.isPlainMono(voice, from: a, plain: flat.environments.isPlain(
                slot, usesEnvironment: voice.pointee.routing.usesEnvironment, from: a))
        }
        // The shelf and the step change at updates (the HF gain's and the pitch's glides).
        guard plainMono == true, voice.pointee.spatial.shelf == nil, Self.resamplesRamped(voice) else { return false }
        let n = Int(b - a), channels = lane.pointee.channelCount
        let rampEnd = voice.pointee.spatial.rampStart + Int64(voice.pointee.spatial.rampLength)
        var ramp = Resampler.RampGains(left0: 0, dLeft: 0, right0: 0, dRight: 0, g: 0, length: 1, first: 0)
        var rampFrames = 0, steady = Resampler.Gains(a: 0, b: 0, c: 0, d: 0)
        if rampEnd > a && rampEnd < b {
            // Across the gains' ramp's end: one pass, the bits of the two runs either side of it.
            guard let gains = SpatialGainStage.rampThenSteady(voice, frame: a, count: n, channels: channels) else {
                return false
            }
            (ramp, rampFrames, steady) = (gains.ramp, gains.rampFrames, gains.steady)
        } else if let gains = SpatialGainStage.constantPair(voice, frame: a, count: n, channels: channels) {
            steady = gains
        } else if let gains = SpatialGainStage.rampPair(voice, frame: a, count: n, channels: channels) {
            (ramp, rampFrames) = (gains, .max)
        } else {
            return false
        }
        let planes = lane.pointee.planes(voice.pointee.routing.bus, span, rack, accumulators)
            .advanced(by: Int(a - span.start))
        if rampFrames == 0 {
            Resampler.mix(&voice.pointee.cursor, voice.pointee.source, tables: tables, gains: steady,
                          into: planes[0], planes[1], count: n)
        } else {
            Resampler.mixRamped(&voice.pointee.cursor, voice.pointee.source, tables: tables, gains: ramp,
                                rampFrames: rampFrames, steady: steady, into: planes[0], planes[1], count: n)
        }
        return true
    }

    /// Output frames [a, b), all between two updates, of a run `mixResampledMono` did not take. A run that
    /// crosses the end of the gains' ramp (a quiet voice's run after its update, `SpatialUpdate.isQuiet`) is one
    /// pass of the fused copy kernels when it can be, else two runs split there.
    @_noLocks
    private func run(_ voice: UnsafeMutablePointer<Voice>, slot: Int, from a: Int64, to b: Int64, _ span: MixSpan,
                     lane: UnsafeMutablePointer<MixLane>, _ rack: BusRack, _ accumulators: LaneAccumulators,
                     meter: inout MeterAccumulator) {
        let rampEnd = voice.pointee.spatial.rampStart + Int64(voice.pointee.spatial.rampLength)
        if rampEnd <= a || rampEnd >= b {
            runPart(voice, slot: slot, from: a, to: b, span, lane: lane, rack, accumulators, meter: &meter)
            return
        }
        let plainMono = Self.isPlainMono(voice, from: a, plain: flat.environments.isPlain(
            slot, usesEnvironment: voice.pointee.routing.usesEnvironment, from: a))
        let offset = Int(a - span.start), n = Int(b - a)
        // (A voice the linear or sinc kernel resamples took `mixResampledMono` when it could.)
        if plainMono, Self.copiesAtRateOne(voice) {
            if let gains = SpatialGainStage.rampThenSteady(voice, frame: a, count: n,
                                                           channels: lane.pointee.channelCount) {
                // A moving mono voice at rate 1 (no doppler) after its update: the ramp, then the steady gains,
                // the same products as the two runs; the first voice of its lane on the bus assigns them rather
                // than clearing the lane's planes and adding.
                let (planes, fresh) = lane.pointee.planesToAssign(voice.pointee.routing.bus, span, rack, accumulators,
                                                                  offset: offset, count: n)
                let to = planes.advanced(by: offset), source = voice.pointee.source
                Resampler.mixRampThenSteady(&voice.pointee.cursor, source, ramp: gains.ramp,
                                            rampFrames: gains.rampFrames, steady: gains.steady, into: to[0], to[1],
                                            count: n, assign: fresh)
                return
            }
        }
        runPart(voice, slot: slot, from: a, to: rampEnd, span, lane: lane, rack, accumulators, meter: &meter)
        runPart(voice, slot: slot, from: rampEnd, to: b, span, lane: lane, rack, accumulators, meter: &meter)
    }

    /// Output frames [a, b), all between two updates and on one side of the gains' ramp's end: fill, downmix,
    /// shelf, mix (and meter).
    @_noLocks
    private func runPart(_ voice: UnsafeMutablePointer<Voice>, slot: Int, from a: Int64, to b: Int64, _ span: MixSpan,
                         lane: UnsafeMutablePointer<MixLane>, _ rack: BusRack, _ accumulators: LaneAccumulators,
                         meter: inout MeterAccumulator) {
        let n = Int(b - a)
        let mono = lane.pointee.scratchLeft, right = lane.pointee.scratchRight
        let source = voice.pointee.source
        let tables = lane.pointee.tables
        let offset = Int(a - span.start)
        let bus = voice.pointee.routing.bus
        // No sends and no filter (almost every voice): the plain path, with the bits of a mix without either.
        let plain = flat.environments.isPlain(slot, usesEnvironment: voice.pointee.routing.usesEnvironment, from: a)
        if binaural == nil, Self.isPlainMono(voice, from: a, plain: plain) {
            // A still mono source: resample and mix in one pass into the front pair, the other channels' gains
            // being 0 (the same bits as the scratch path: L += (G0·g)·s, R += (G1·g)·s, adding ±0 changes nothing).
            let planes = lane.pointee.planes(bus, span, rack, accumulators).advanced(by: offset)
            if let gains = SpatialGainStage.constantPair(voice, frame: a, count: n, channels: planes.count) {
                Resampler.mix(&voice.pointee.cursor, source, tables: tables, gains: gains, into: planes[0], planes[1],
                              count: n)
                return
            }
            // Moving at rate 1 (no doppler): copy and ramp in one pass.
            if Self.copiesAtRateOne(voice),
               let gains = SpatialGainStage.rampPair(voice, frame: a, count: n, channels: planes.count) {
                Resampler.mixRamped(&voice.pointee.cursor, source, gains: gains, into: planes[0], planes[1], count: n)
                return
            }
            // Moving with doppler through the linear or sinc kernel: resample and ramp in one pass.
            if Self.resamplesRamped(voice),
               let gains = SpatialGainStage.rampPair(voice, frame: a, count: n, channels: planes.count) {
                Resampler.mixRamped(&voice.pointee.cursor, source, tables: tables, gains: gains, into: planes[0],
                                    planes[1], count: n)
                return
            }
        }
        let stretching = voice.pointee.pitch.preservePitch
            && voice.pointee.spatial.rateStep != voice.pointee.pitch.baseStep
        reader.fill(voice, frame: a, stretching: stretching, lane: lane, mono, right, count: n)
        if source.channelCount == 2 {
            for j in 0..<n { mono[j] = (mono[j] + right[j]) * 0.5 }
        }
        if var shelf = voice.pointee.spatial.shelf {
            shelf.process(mono, count: n)
            voice.pointee.spatial.shelf = shelf
        }
        // The voice's own filter acts on the mono signal before the distance gains, after the 3D shelf (cone and
        // air absorption belong to the 3D gains, which sends carry too), and its insert after the filter (on the
        // mono signal, `VoiceInserts.run`). A send with a filter of its own takes the signal from before both (`dry`).
        let keepDry = !plain && flat.environments.needsDry(slot, from: a)
        if !plain {
            if keepDry { MixLane.copy(mono, to: lane.pointee.dryLeft, n) }
            flat.environments.filter(slot).pointee.process(mono, mono, channels: 1, frame: a, count: n)
            if let insert = flat.environments.inserts.chain(slot) {
                let resets = VoiceInserts.run(insert, mono, right, channels: 1, frame: a, count: n)
                if resets > 0 { rack.effectResets.pointee.add(resets, ordering: .relaxed) }
            }
        }
        let gains = lane.pointee.scratchGain, fractions = right
        if let binaural {
            // Headphones: the head-related filters, plus the speaker gains while the voice glides between 2D and
            // 3D (0 otherwise, and skipped).
            let to = lane.pointee.planes(bus, span, rack, accumulators).advanced(by: offset)
            let from = voice.pointee.isRouting(a)
                ? lane.pointee.planes(voice.pointee.routing.previousBus, span, rack, accumulators).advanced(by: offset)
                : nil
            binaural.mix(voice, slot: slot, frame: a, count: n, mono: mono, lane: lane.pointee.index, into: to,
                         from: from, metering: voice.pointee.routing.metering, meter: &meter)
        }
        if binaural != nil && voice.pointee.spatial.gainsFrom[0] == 0 && voice.pointee.spatial.gainsFrom[1] == 0
            && voice.pointee.spatial.gainsTo[0] == 0 && voice.pointee.spatial.gainsTo[1] == 0 {
            // No speaker part.
        } else if voice.pointee.isRouting(a) {
            let fade = voice.pointee.routing.busFade
            let from = lane.pointee.planes(voice.pointee.routing.previousBus, span, rack, accumulators)
                .advanced(by: offset)
            SpatialGainStage.mix(voice, frame: a, count: n, mono: mono, gainScratch: gains,
                                 fractionScratch: fractions, into: from, share: .leaving(fade))
            let to = lane.pointee.planes(bus, span, rack, accumulators).advanced(by: offset)
            SpatialGainStage.mix(voice, frame: a, count: n, mono: mono, gainScratch: gains,
                                 fractionScratch: fractions, into: to, share: .arriving(fade))
        } else {
            let to = lane.pointee.planes(bus, span, rack, accumulators).advanced(by: offset)
            if let ramp = SpatialGainStage.rampPair(voice, frame: a, count: n, channels: to.count) {
                // Inside one ramp at a steady volume (a resampled moving voice, most of its frames): the C kernel.
                Resampler.mixRamped(mono, gains: ramp, into: to[0], to[1], count: n)
            } else {
                SpatialGainStage.mix(voice, frame: a, count: n, mono: mono, gainScratch: gains,
                                     fractionScratch: fractions, into: to, share: .whole)
            }
        }
        if voice.pointee.routing.metering, binaural == nil {
            SpatialGainStage.meter(voice, frame: a, count: n, mono: mono, into: &meter)
        }
        if plain || !flat.environments.hasSends(slot) { return }
        for i in 0..<SendsSetup.count {
            let send = flat.environments.send(slot, i)
            let sendBus = send.pointee.bus
            // Unused, or its bus since removed (silent rather than poured into the master).
            guard send.pointee.isOn, sendBus == 0 || rack.isConfigured(sendBus) else { continue }
            var from = mono
            if send.pointee.ownFilter {
                from = lane.pointee.sendLeft
                MixLane.copy(keepDry ? lane.pointee.dryLeft : mono, to: from, n)
                send.pointee.filter.process(from, from, channels: 1, frame: a, count: n)
            }
            let to = lane.pointee.planes(sendBus, span, rack, accumulators).advanced(by: offset)
            SpatialGainStage.mix(voice, frame: a, count: n, mono: from, gainScratch: gains, fractionScratch: fractions,
                                 into: to, share: .send(level: send.pointee.level, preFader: send.pointee.preFader))
            if binaural != nil {
                HRTFVoices.mixCentred(voice, frame: a, count: n, mono: from, into: to,
                                      share: .send(level: send.pointee.level, preFader: send.pointee.preFader))
            }
        }
    }
}
