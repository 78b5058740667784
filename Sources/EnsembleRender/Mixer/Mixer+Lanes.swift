// Render thread, except `renderLane`: the lanes may run on other threads between the serial phases (`MixLane`).
import EnsembleFormats

/// The span loop of the block: the serial phase before the lanes, the lanes, the serial phase after them.
extension Mixer {
    /// Renders output frames [t0, t1) of every voice and bus into `output` (every channel, starting at frame
    /// t0): the serial phase before the lanes, the lanes, the serial phase after them (see `MixLane` for the
    /// contract).
    @_noLocks
    func renderSpan(_ output: ChannelPlanes, _ t0: Int64, _ t1: Int64) {
        let span = MixSpan(start: t0, end: t1, output: output)
        activateStarts(before: t1)
        assignLanes()
        buses.beginBlock(span.frames)
        laneAccumulators.beginLanes()
        runLanes(span)
        finishLanes(span)
        buses.finishBlock(output, span.frames, t0)
    }

    /// Runs every lane of the span: on the render worker pool when there is one (`ParallelLanes`) and enough
    /// voices to share, else one after the other on this thread, in lane order. (The one place lanes are run.)
    @_noLocks
    func runLanes(_ span: MixSpan) {
        let sounding = voices.activeCount
        if let parallelRunner, !lanesInReverseForTesting,
           parallelRunner._withUnsafeGuaranteedRef({ $0.run(span, activeVoices: sounding) }) {
            return
        }
        if lanesInReverseForTesting {
            for k in (0..<laneCount).reversed() { renderLane(k, span) }
        } else {
            for k in 0..<laneCount { renderLane(k, span) }
        }
    }

    /// Serial phase: hands every active voice to its lane (`MixLane.lane(of:count:)`), in active order.
    @_noLocks
    func assignLanes() {
        for k in 0..<laneCount { lanes[k].begin() }
        let active = voices.active, pool = voices.slots, lanes = self.lanes, laneCount = self.laneCount
        for i in 0..<voices.activeCount {
            let slot = active[i]
            lanes[MixLane.lane(of: pool[Int(slot)], count: laneCount)].add(slot)
        }
    }

    /// Renders lane `lane`'s voices over `span` into the lane's accumulators (lane 0: the bus rack's inputs),
    /// then, if it is the last lane of its half to finish, sums that half (`LaneAccumulators.laneFinished`).
    /// Safe to call concurrently for different lanes of the same span, between the serial phases (`MixLane`).
    @_noLocks
    func renderLane(_ lane: Int, _ span: MixSpan) {
        let me = lanes + lane
        let pool = voices.slots, rack = buses, accumulators = laneAccumulators
        // Read once per lane rather than per voice: the paths are structs of a few hundred bytes, and reading a
        // class's stored struct to call a method on it copies it.
        let spatialRender = self.spatialRender, voiceRender = self.voiceRender
        for i in 0..<me.pointee.voiceCount {
            let slot = Int(me.pointee.voices[i])
            let voice = pool + slot
            let keep = voice.pointee.spatial.isOn
                ? spatialRender.render(voice, slot: slot, span, lane: me, rack, accumulators)
                : voiceRender.render(voice, slot: slot, from: span.start, span, lane: me, rack, accumulators)
            me.pointee.after[i] = MixLane.After(generation: voice.pointee.generation, ended: !keep,
                                                position: voice.pointee.cursor.position)
            if !keep { me.pointee.recordEnd(slot: slot, frame: voice.pointee.stopFrame) }
        }
        if let signal = testSignal, signal.lane == lane {
            signal.add(into: me.pointee.planes(signal.bus, span, rack, accumulators), span)
        }
        accumulators.laneFinished(lane, lanes, span, rack)
    }

    /// The serial phase after the lanes: finishes the voices that ended, in lane order, drops them from the
    /// active list, and adds the second half of the lanes' sum into the rack's inputs (`LaneAccumulators`).
    @_noLocks
    func finishLanes(_ span: MixSpan) {
        var ended = 0
        for k in 0..<laneCount {
            let lane = lanes + k
            for e in 0..<lane.pointee.endCount { finish(Int(lane.pointee.ends[e].slot), at: lane.pointee.ends[e].frame) }
            ended += lane.pointee.endCount
        }
        if ended > 0 { voices.removeSilenced() }
        laneAccumulators.addSecondHalf(lanes, span, buses)
        publishPositions()
    }

    /// Serial phase: publishes the state and cursor position of every voice still playing after the span (one
    /// thread writing the packed telemetry words, instead of the lanes from several cores), from what each lane
    /// recorded of its voices (`MixLane.after`), without touching the voices themselves.
    @_noLocks
    func publishPositions() {
        let telemetry = self.telemetry
        for k in 0..<laneCount {
            let lane = lanes + k
            for i in 0..<lane.pointee.voiceCount where !lane.pointee.after[i].ended {
                telemetry.publish(slot: Int(lane.pointee.voices[i]), generation: lane.pointee.after[i].generation,
                                  phase: .playing, position: lane.pointee.after[i].position)
            }
        }
    }
}
