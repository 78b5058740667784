// Control side (any thread): installs a track's insert effect and hands it to the render side.
import EnsembleRender

extension Engine {
    /// `Track.setInsert`: prepares `effect` for one channel pair, registers it among the custom effects (so its
    /// parameters can be changed; `ParameterTargets` keeps it alive while a change is on its way), wraps it in a one-unit
    /// chain and sends it to the track's slot (`MixerCommand.insert`), which retires the chain it replaces.
    ///
    /// The track's state and the command change under the track's lock then the engine's (the order `play` takes
    /// them in), so concurrent calls leave the render side with the insert `Track.insert` reports.
    func setInsert(_ effect: CustomEffect?, of track: Track) throws(EngineError) {
        var chain: UnsafeMutablePointer<EffectChain>? = nil
        if let effect {
            try effect.install(EffectFormat(sampleRate: sampleRate, maxFrames: configuration.maxBlockFrames,
                                            channelPairs: 1), name: "insert")
            let release = parameterReleaseFrame
            busControl.customEffects.withLock { $0.add(effect, rendered: release) }
            chain = EffectChain.make([.custom(effect)], sampleRate: sampleRate, pairs: 1)
            busControl.liveChains.add(1, ordering: .relaxed)
        }
        let queue = mixer.commands, slot = track.slot
        track.state.withLock { s in
            s.insert = effect
            control.withLock { c in
                c.records[Int(slot)].hasInsert = chain != nil
                c.send(.insert(slot: slot, chain: ChainHandle(pointer: chain)), to: queue)
            }
        }
    }
}
