// Control side (any thread): auxiliary sends and per-voice filters.
import EnsembleFormats
import EnsembleRender

extension Engine {
    /// Throws unless `sends` can be given to a voice: at most `AuxSend.maxCount`, each level 0…1, each bus the
    /// master or set up, each own filter's gains 0…1.
    package func check(_ sends: [AuxSend]) throws(EngineError) {
        guard sends.count <= AuxSend.maxCount else {
            throw .invalidParameter(name: "sends", value: Double(sends.count), expected: "at most \(AuxSend.maxCount) sends")
        }
        for (i, send) in sends.enumerated() {
            try EngineError.check(send.level, "sends[\(i)].level", 0...1)
            try checkRoutable(send.bus)
            try send.filter?.check("sends[\(i)].filter")
        }
    }

    /// The commands that give a voice just started its sends and filter (none for a voice with neither: the
    /// start resets both).
    func environmentCommands(slot: Int32, generation: UInt32, sends: [AuxSend], filter: VoiceFilter?) -> [MixerCommand] {
        var commands: [MixerCommand] = []
        if !sends.isEmpty {
            commands.append(.voice(slot: slot, generation: generation, .sends(SendsSetup(sends), rampFrames: 0)))
        }
        if filter != nil {
            commands.append(.voice(slot: slot, generation: generation, .filter(FilterSetup(filter), rampFrames: 0)))
        }
        return commands
    }

    /// `instance.setFilter(filter, at: time, ramp: ramp)`: the same checks and rules (`EffectInstance`).
    @discardableResult
    public func setFilter(_ filter: VoiceFilter?, of instance: EffectInstance, at time: EngineTime? = nil,
                          ramp: Double? = nil) throws(EngineError) -> ScheduledCommandID? {
        try instance.setFilter(filter, at: time, ramp: ramp)
    }

    /// `instance.setSendLevel(level, send: send, at: time, ramp: ramp)`: the same checks and rules, the value
    /// policy included (`EffectInstance`).
    @discardableResult
    public func setSendLevel(_ level: Float, send: Int, of instance: EffectInstance, at time: EngineTime? = nil,
                             ramp: Double? = nil) throws(EngineError) -> ScheduledCommandID? {
        try instance.setSendLevel(level, send: send, at: time, ramp: ramp)
    }

    /// Sends `change` to voice `slot` of `generation` now (nil `frame`), or schedules it on `frame` and returns the
    /// timed command's id; the instance controls (`EffectInstance+Controls`) use it too.
    func sendOrSchedule(_ change: VoiceChange, slot: Int32, generation: UInt32, atFrame frame: Int64?)
        -> ScheduledCommandID? {
        guard let frame else {
            send(change, slot: slot, generation: generation)
            return nil
        }
        return schedule(.voice(slot: slot, generation: generation, change), atFrame: frame, dropped: nil) { _ in }
    }
}
