// Render thread: the serial phase between spans, where the mixer chooses where its next span ends.
import EnsembleFormats

/// Update frames that can be passed without ending a span there: when no voice is virtual, the update at frame `v`
/// (`VirtualVoices.update`) can only send voices below the threshold into virtual; if every voice is provably above
/// it at `v`, the update would change nothing, so the span need not end there. Why: a game rendering 800-frame
/// blocks would otherwise have most blocks split at the 1024-frame grid, each split costing every voice a second
/// pass through its lane. Invariant: the proof is conservative (a voice that may be evaluated again before `v`
/// counts at most `audibilityFloor`; one that starts before `v` keeps the update), so passing or not gives the same
/// bytes and events. Design: the "Virtual voices and the voice cap" article (Ensemble.docc/VirtualVoices.md).
extension VirtualVoices {
    /// The first update frame in (`t`, `end`) whose update may change something; `.max` when there is none.
    ///
    /// Voice by voice, each voice's update frames in order (rather than frame by frame over every voice): a long
    /// span, such as an offline render's 8192-frame block, passes eight update frames, and each voice is then
    /// read once instead of eight times, in a serial phase no worker thread shares. The frame found is the
    /// same: the least over the voices of each one's first frame that may change something.
    @_noLocks
    func nextNeededUpdate(after t: Int64, before end: Int64, pool: VoicePool, scene: UnsafePointer<SpatialScene>,
                          firstStart: Int64) -> Int64 {
        guard isEnabled else { return .max }
        let first = Self.nextFrame(after: t)
        // A voice starting by then has no evaluation yet: the first update frame from `firstStart` on is needed.
        var bound = end
        if firstStart < end { bound = Swift.min(end, Swift.max(first, Self.nextFrame(after: firstStart - 1))) }
        // A margin for the rounding of the bound and of the evaluation it bounds.
        let floor = threshold * 1.001
        for k in 0..<pool.activeCount {
            if bound <= first { break } // nothing earlier to find
            let voice = UnsafePointer(pool.slots + Int(pool.active[k]))
            // A virtual voice may come back, or (held by the cap) stop waiting.
            if voice.pointee.virtual.isVirtual { return first }
            if threshold == 0 { continue }
            var v = first
            while v < bound {
                if audibility(voice, at: v, scene: scene) < floor {
                    bound = v
                    break
                }
                v += Self.interval
            }
        }
        return bound < end ? bound : .max
    }

    /// A lower bound of `voice`'s audibility at update frame `v`, judged between spans before `v`.
    @inline(__always)
    @_noLocks
    private func audibility(_ voice: UnsafePointer<Voice>, at v: Int64, scene: UnsafePointer<SpatialScene>) -> Float {
        var spatial = voice.pointee.spatialAudibility
        if voice.pointee.spatial.isOn, voice.pointee.spatial.nextUpdate <= v {
            guard let source = voice.pointee.spatial.source else { return 0 }
            spatial = Swift.min(spatial, Self.audibilityFloor(source, voice.pointee.spatial.position, scene))
        }
        return voice.pointee.audibility(at: v, spatial: spatial)
    }

    /// The least spatial audibility (`SpatialMath.evaluate`'s largest speaker gain) of `source` anywhere on the
    /// glide `position`, the listener anywhere on its own: the distance gain at the greatest distance (the
    /// models fall with distance; none exceeds its value at distance 0 below 1), the cone's outer gain (1 for
    /// an inner cone of 360°), the
    /// source's gain limits and the listener's gain, and the smallest largest-speaker-gain of the panner,
    /// 1/√channels (a source on the listener, heard evenly on every speaker). 0 where a model does not fall
    /// with distance (unclamped linear with its max distance below its reference).
    @_noLocks
    package static func audibilityFloor(_ source: SpatialSource, _ position: SpatialRamp,
                                _ scene: UnsafePointer<SpatialScene>) -> Float {
        let model = source.distanceModel ?? scene.pointee.settings.distanceModel
        if case .linear = model, source.maxDistance < source.referenceDistance { return 0 }
        if source.rolloff < 0 || source.referenceDistance < 0 { return 0 }
        let a = position.from, b = position.to
        var far: Float
        if source.relative {
            far = Swift.max(a.dot(a), b.dot(b))
        } else {
            let l = scene.pointee.listenerPosition.from, m = scene.pointee.listenerPosition.to
            far = Swift.max(Swift.max((a - l).dot(a - l), (a - m).dot(a - m)),
                            Swift.max((b - l).dot(b - l), (b - m).dot(b - m)))
        }
        let distance = RenderMath.sqrt(far) * 1.0001 + 1e-6
        let gain = model.attenuation(distance: distance, reference: source.referenceDistance,
                                     max: source.maxDistance, rolloff: source.rolloff).gain
        // An inner cone of 360° covers every direction (`SoundCone`); otherwise the gain lies between 1 and the
        // outer gain.
        let cone = source.coneInnerAngle >= 360 ? 1 : Swift.min(1, source.coneOuterGain)
        let clamped = Swift.min(Swift.max(Swift.min(gain, 1) * cone, source.minGain), source.maxGain)
        // Every layout's channel count is at most `ChannelGains.capacity` (and `channelCount` is not `@_noLocks`).
        let channels = Float(ChannelGains.capacity)
        return clamped * scene.pointee.listenerGain / RenderMath.sqrt(channels) * 0.9999
    }
}
