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

    /// Sets the direct-path filter of a fired effect (nil: none), its gains ramping over `ramp` seconds (nil: the
    /// smoothing time); at `time` when given (returning the timed command's id). Nothing happens once the effect
    /// has ended. Throws for a gain outside 0…1, a bad ramp or a time at another rate.
    @discardableResult
    public func setFilter(_ filter: VoiceFilter?, of instance: EffectInstance, at time: EngineTime? = nil,
                          ramp: Double? = nil) throws(EngineError) -> ScheduledCommandID? {
        try filter?.check()
        let frames = try self.frames(ofDuration: ramp, "ramp")
        return try sendOrSchedule(.filter(FilterSetup(filter), rampFrames: frames), to: instance, at: time)
    }

    /// Sets the level (0…1) of send `send` of a fired effect (`send` indexing the sends given to `fire`), ramped
    /// over `ramp` seconds; at `time` when given. Nothing happens once the effect has ended.
    @discardableResult
    public func setSendLevel(_ level: Float, send: Int, of instance: EffectInstance, at time: EngineTime? = nil,
                             ramp: Double? = nil) throws(EngineError) -> ScheduledCommandID? {
        guard send >= 0, send < AuxSend.maxCount else {
            throw .invalidParameter(name: "send", value: Double(send), expected: "0…\(AuxSend.maxCount - 1)")
        }
        try EngineError.check(level, "level", 0...1)
        let frames = try self.frames(ofDuration: ramp, "ramp")
        return try sendOrSchedule(.sendLevel(index: Int32(send), level: level, rampFrames: frames), to: instance, at: time)
    }

    /// Sends `change` to a fired effect's voice now, or schedules it at `time` (returning its id): what
    /// `setPosition(_:of:at:ramp:)`, `setFilter(_:of:at:ramp:)` and `setSendLevel(_:send:of:at:ramp:)` share.
    func sendOrSchedule(_ change: VoiceChange, to instance: EffectInstance, at time: EngineTime?)
        throws(EngineError) -> ScheduledCommandID? {
        var frame: Int64?
        if let time { frame = try self.frame(of: time) }
        return sendOrSchedule(change, slot: instance.slot, generation: instance.generation, atFrame: frame)
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
