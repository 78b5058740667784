// Control side (any thread); completions run on the event thread (`Engine+Events`).
import EnsembleFormats
import EnsembleRender

/// One-shot effects, in the manner of System Sound Services: register a short sound once, fire it any number
/// of times (instances overlap), get a completion callback per firing, dispose of it when done.
extension Engine {
    /// Registers `sound` (at most `Configuration.maxEffectDuration` seconds) for `fire`, under `limits`: at most
    /// `maxInstances` instances sounding at once (a firing beyond that steals one, or is refused, by
    /// `limits.steal`) and no firing within `limits.cooldown` seconds of the last accepted one. Each firing's
    /// pitch and volume vary by `variation` (see `EffectVariation`; by default not at all). Throws for limits or
    /// a variation out of range, or when `Configuration.maxLimitedEffects` effects with limits are registered
    /// already.
    public func registerEffect(_ sound: Sound, limits: EffectLimits = EffectLimits(),
                               variation: EffectVariation = EffectVariation()) throws(EngineError) -> SoundEffect {
        try limits.check()
        try variation.check()
        guard !sound.isStreamed else {
            throw .invalidParameter(name: "effect sound \(sound.name) (streamed)", value: sound.duration,
                                    expected: "a sound decoded into memory")
        }
        guard sound.duration <= Configuration.maxEffectDuration else {
            throw .effectTooLong(sound: sound.name, duration: sound.duration, limit: Configuration.maxEffectDuration)
        }
        let rate = sampleRate, capacity = configuration.maxLimitedEffects
        return try control.withLock { state throws(EngineError) in
            var setup = EffectLimitSetup()
            if !limits.isUnlimited {
                guard let entry = state.freeLimitEntries.popLast() else { throw .limitedEffectsExhausted(capacity: capacity) }
                state.limitGenerations[Int(entry)] &+= 1
                setup = EffectLimitSetup(entry: entry, generation: state.limitGenerations[Int(entry)], limits: limits,
                                         sampleRate: rate)
            }
            let effect = SoundEffect(id: state.nextEffectID, name: sound.name, duration: sound.duration, limits: limits,
                                     variation: variation)
            state.nextEffectID += 1
            state.effects[effect.id] = (effect, sound, setup)
            return effect
        }
    }

    /// Forgets `effect`. Instances already fired keep playing to their end and still report completion; firings
    /// still waiting for their start frame are no longer held to the effect's limits once another effect with
    /// limits is registered.
    public func dispose(_ effect: SoundEffect) {
        control.withLock { state in
            guard let removed = state.effects.removeValue(forKey: effect.id) else { return }
            if removed.limits.entry >= 0 { state.freeLimitEntries.append(removed.limits.entry) }
        }
    }

    /// Plays `effect` once, as soon as possible (`time` nil) or starting exactly on `time` (at or after
    /// `earliestStartTime`; a time already past plays it whole, from its first frame, as soon as possible, and its
    /// start event and completion report `lateBy`), at `volume` (0…1), `pan` (−1…1) and `rate` (`Track.rateRange`;
    /// pitch follows, as a varispeed track's; out of range, each is clamped or refused by
    /// `Configuration.valuePolicy`), each firing varied by the effect's `EffectVariation`, into `bus` (the master by default; a submix must be set up), resampled (when its sample
    /// rate differs from the engine's) with `resampler`, or the configuration's. `priority` (0…255) decides which
    /// voice gives way first under `Configuration.maxSoundingVoices` (0 first; an effect is then stolen). `completion` runs on the event
    /// thread when the firing ends. With `spatial`, the effect is heard from that 3D placement instead of `pan`
    /// (move it with `setPosition(_:of:at:ramp:)`). `sends` feed other buses besides `bus` (see `AuxSend`) and `filter` shapes the direct path (see `VoiceFilter`; change them with `setSendLevel(_:send:of:at:ramp:)` and `setFilter(_:of:at:ramp:)`). Throws (firing nothing) for an out-of-range or non-finite value, a time at
    /// another rate, a bus not set up, an unregistered effect, or when every voice slot is taken. A firing the
    /// effect's `EffectLimits` refuse is no error: the render side refuses it when its frame comes, and its
    /// completion reports `.refused`.
    @discardableResult
    public func fire(_ effect: SoundEffect, volume: Float = 1, pan: Float = 0, rate: Float = 1, at time: EngineTime? = nil,
                     bus: Bus = .master, priority: Int = 128, resampler: ResamplerQuality? = nil,
                     spatial: SpatialSource? = nil, sends: [AuxSend] = [], filter: VoiceFilter? = nil,
                     completion: (@Sendable (EffectCompletion) -> Void)? = nil) throws(EngineError) -> EffectInstance {
        var frame: Int64?
        if let time { frame = try self.frame(of: time) }
        let volume = try configuration.valuePolicy.fit(volume, "volume", 0...1)
        let pan = try configuration.valuePolicy.fit(pan, "pan", -1...1)
        let rate = try configuration.valuePolicy.fit(rate, "rate", Track.rateRange)
        try checkRoutable(bus)
        try spatial?.check()
        try check(sends)
        try filter?.check()
        guard priority >= 0, priority <= 255 else {
            throw .invalidParameter(name: "priority", value: Double(priority), expected: "0…255")
        }
        let claimed: (slot: Int32, generation: UInt32, sound: Sound, sequence: UInt64, instance: EffectInstance,
                      limits: EffectLimitSetup)? = try control.withLock {
            state throws(EngineError) in
            guard let registered = state.effects[effect.id] else { throw .unknownEffect(id: effect.id) }
            guard let c = state.claim(sound: registered.sound, owner: .none) else { return nil }
            // Drawn under the lock, so concurrent firings take the generator's values in the order they lock.
            var (firedRate, firedVolume) = (rate, volume)
            let variation = registered.effect.variation
            if !variation.isNone {
                let pitchDraw = state.variation.unit() * 2 - 1, volumeDraw = state.variation.unit()
                firedRate = min(max(rate * variation.rateFactor(pitchDraw), Track.rateRange.lowerBound),
                                Track.rateRange.upperBound)
                firedVolume = volume * variation.gainFactor(volumeDraw)
            }
            let instance = EffectInstance(slot: c.slot, generation: c.generation, effect: effect, engine: self,
                                          sourceRate: registered.sound.sampleRate,
                                          channelCount: registered.sound.channelCount,
                                          firedRate: firedRate, firedVolume: firedVolume)
            state.records[Int(c.slot)].owner = .effect(ControlState.FiredEffect(
                effect: registered.effect, completion: completion, instance: instance))
            return (c.slot, c.generation, registered.sound, state.nextSequence(), instance, registered.limits)
        }
        guard let claimed else { throw .voicePoolExhausted(capacity: configuration.maxVoices) }
        let sound = claimed.sound
        var setup = VoiceSetup(
            source: sound.voiceSource, isEffect: true, startFrame: frame ?? .min, startPosition: 0, startPass: 0,
            loops: 0, volume: claimed.instance.firedVolume, pan: PanMatrix(pan: pan, channelCount: sound.channelCount),
            step: SourceCursor.step(rate: claimed.instance.firedRate, sourceRate: sound.sampleRate,
                                    outputRate: sampleRate),
            fadeInFrames: 0, fadeOutFrames: 0, attackFrames: 0, metering: false, sequence: claimed.sequence)
        setup.bus = Int32(bus.index)
        setup.priority = UInt8(priority)
        setup.resampler = resampler ?? configuration.resampler
        if setup.resampler == .fastSinc { FastSincBank.prepare(outputRate: sampleRate) }
        setup.spatial = spatial
        setup.limits = claimed.limits
        send([.start(slot: claimed.slot, generation: claimed.generation, setup)]
            + environmentCommands(slot: claimed.slot, generation: claimed.generation, sends: sends, filter: filter))
        return claimed.instance
    }

    /// Stops a fired effect early, fading over the smoothing time (its completion reports `.stopped`):
    /// `instance.stop()`.
    public func stop(_ instance: EffectInstance) {
        _ = try? instance.stop()
    }

    /// Frees a released track's slot now, or once its voices have ended.
    /// A playing voice plays on to its end (`onFinish` still runs); a paused one, which nothing can resume any
    /// more, is stopped. `live`: the generations whose end has not been reported (the current one first).
    func releaseTrackSlot(_ slot: Int32, live: [UInt32], paused: Bool, onFinish: (@Sendable (TrackEnd) -> Void)?) {
        guard let current = live.first else {
            let queue = mixer.commands
            control.withLock { state in state.release(slot, queue: queue) }
            return
        }
        control.withLock { state in
            state.records[Int(slot)].owner = .released(ControlState.ReleasedTrack(generations: live, onFinish: onFinish))
        }
        if paused {
            send([.voice(slot: slot, generation: current, .stop(frame: .min, rampFrames: smoothingFrames))])
        }
    }
}
