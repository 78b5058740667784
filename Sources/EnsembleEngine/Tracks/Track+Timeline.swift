// Control side (any thread): a track's timed changes, checked and turned into commands.
import Synchronization
import EnsembleFormats
import EnsembleRender

extension Track {
    /// Throws unless every value in `change` is in the range of the matching setter.
    package func check(_ change: TrackChange) throws(EngineError) {
        _ = try checked(change)
    }

    /// `change` with its volume, pan, rate or send level brought onto its range under the engine's
    /// `ValuePolicy` (clamped, or snapped from within float rounding of a bound); throws for anything else out of
    /// the matching setter's range.
    package func checked(_ change: TrackChange) throws(EngineError) -> TrackChange {
        let policy = engine.configuration.valuePolicy
        switch change {
        case let .volume(v, ramp):
            let fitted = try policy.fit(v, "volume", 0...1)
            try checkRamp(ramp)
            return .volume(fitted, ramp: ramp)
        case let .pan(p, ramp):
            let fitted = try policy.fit(p, "pan", -1...1)
            try checkRamp(ramp)
            return .pan(fitted, ramp: ramp)
        case let .rate(r):
            // A generator writes output frames: there is nothing to resample.
            if sound.generator != nil && r != 1 {
                throw .invalidParameter(name: "rate of generated \(sound.name)", value: Double(r), expected: "1 (a generator writes output frames)")
            }
            return .rate(try policy.fit(r, "rate", Track.rateRange))
        case let .sendLevel(send, level, ramp):
            try checkSend(send)
            let fitted = try policy.fit(level, "level", 0...1)
            try checkRamp(ramp)
            return .sendLevel(send: send, fitted, ramp: ramp)
        default:
            try checkOther(change)
            return change
        }
    }

    /// The ramp of a volume, pan or send-level change: a duration, or nil.
    private func checkRamp(_ ramp: Double?) throws(EngineError) {
        if let ramp { _ = try Engine.frames(ofDuration: ramp, "ramp", sampleRate: engine.sampleRate) }
    }

    /// `send` names one of the track's sends.
    private func checkSend(_ send: Int) throws(EngineError) {
        let count = state.withLock { $0.sends.count }
        guard send >= 0, send < count else {
            throw .invalidParameter(name: "send", value: Double(send),
                                    expected: count == 0 ? "a send (the track has none)" : "0…\(count - 1) (the track's sends)")
        }
    }

    /// The changes without a value policy: loops, seeks, fades, placement, sends, filters.
    private func checkOther(_ change: TrackChange) throws(EngineError) {
        func duration(_ seconds: Double?, _ name: String) throws(EngineError) {
            if let seconds { _ = try Engine.frames(ofDuration: seconds, name, sampleRate: engine.sampleRate) }
        }
        switch change {
        case .volume, .pan, .rate, .sendLevel:
            break // checked(_:)
        case let .loops(n):
            try Track.check(loops: n)
            // A live stream's frames are consumed as they play: it cannot go round again.
            if sound.isLive && n != 0 {
                throw .invalidParameter(name: "numberOfLoops of live \(sound.name)", value: Double(n), expected: "0 (a live stream plays once)")
            }
        case let .seek(seconds):
            if sound.isLive {
                throw .invalidParameter(name: "seek in live \(sound.name)", value: seconds, expected: "no seek (a live stream plays from its start)")
            }
            _ = try sourceFrame(seconds, "seek")
        case let .pause(fade), let .resume(fade), let .stop(fade):
            try duration(fade, "fade")
        case let .spatial(source):
            try source?.check()
        case let .position(p, ramp):
            try p.check("position")
            try duration(ramp, "ramp")
        case let .velocity(v):
            try v.check("velocity")
        case let .motion(p, v, ramp):
            try p.check("position")
            try v.check("velocity")
            try duration(ramp, "ramp")
        case let .direction(d, ramp):
            try d.check("direction")
            try duration(ramp, "ramp")
        case let .sends(sends):
            try engine.check(sends)
        case let .filter(filter, ramp):
            try filter?.check()
            try duration(ramp, "ramp")
        }
    }

    /// The source frame `seconds` into the sound: 0 ≤ seconds ≤ duration (to within half a frame).
    func sourceFrame(_ seconds: Double, _ name: String) throws(EngineError) -> Int {
        let position = (seconds * sound.sampleRate).rounded()
        guard seconds.isFinite, position >= 0, position <= Double(sound.frameCount) else {
            throw .invalidParameter(name: name, value: seconds, expected: "0…\(sound.duration) s (the sound's duration)")
        }
        return Int(position)
    }

    package static func check(loops: Int) throws(EngineError) {
        guard loops >= -1, loops <= maxLoops else {
            throw .invalidParameter(name: "numberOfLoops", value: Double(loops), expected: "−1 (forever) or 0…\(maxLoops)")
        }
    }

    /// Throws unless `rate` is a playback speed a voice takes: what tracks and fired effects share.
    package static func check(rate: Float, _ name: String = "rate") throws(EngineError) {
        try EngineError.check(rate, name, rateRange)
    }

    /// The largest `numberOfLoops` (the scene format's limit too).
    public static let maxLoops = 1_000_000

    /// The playback speeds a track's or a fired effect's voice takes (`setRate(_:at:)`, `Engine.fire`,
    /// `EffectInstance.setRate`): 1/16…4, four octaves down to two up (the scene key `rate`'s range too). The sinc resampler keeps every image and alias
    /// that would be heard below 20 kHz in its stopband over the whole range, for sources at up to twice the output's
    /// sample rate on 44.1 and 48 kHz engines (the "Mixing rules" article, "Resampling").
    public static let rateRange: ClosedRange<Float> = 0.0625...4

    /// The command carrying a checked `change` to voice `g`.
    package func command(for change: TrackChange, generation g: UInt32) -> MixerCommand {
        .voice(slot: slot, generation: g, voiceChange(for: change))
    }

    /// A checked `change` as the render side applies it.
    func voiceChange(for change: TrackChange) -> VoiceChange {
        switch change {
        case let .volume(v, r): .volume(v, rampFrames: rampFrames(r))
        case let .pan(p, r): .pan(PanMatrix(pan: p, channelCount: sound.channelCount), rampFrames: rampFrames(r))
        case let .rate(r): .rate(step: step(rate: r))
        case let .loops(n): .loops(n)
        case let .seek(seconds): .seek(position: min(Int((seconds * sound.sampleRate).rounded()), sound.frameCount))
        case let .pause(f): .pause(rampFrames: rampFrames(f))
        case let .resume(f): .resume(frame: .min, rampFrames: rampFrames(f))
        case let .stop(f): .stop(frame: .min, rampFrames: rampFrames(f))
        case let .spatial(source): .spatial(source)
        case let .position(p, r): .position(p, rampFrames: rampFrames(r))
        case let .velocity(v): .velocity(v)
        case let .motion(p, v, r): .motion(p, velocity: v, rampFrames: rampFrames(r))
        case let .direction(d, r): .direction(d, rampFrames: rampFrames(r))
        case let .sends(sends): .sends(SendsSetup(sends), rampFrames: engine.smoothingFrames)
        case let .sendLevel(send, level, r): .sendLevel(index: Int32(send), level: level, rampFrames: rampFrames(r))
        case let .filter(filter, r): .filter(FilterSetup(filter), rampFrames: rampFrames(r))
        }
    }

    /// A ramp in seconds as frames (nil: the engine's smoothing time).
    private func rampFrames(_ seconds: Double?) -> Int {
        seconds.map { Int(($0 * engine.sampleRate).rounded()) } ?? engine.smoothingFrames
    }

    /// What `change` taking effect does to the track's state.
    static func take(_ change: TrackChange, into s: inout State) {
        switch change {
        case let .volume(v, _): s.volume = v
        case let .pan(p, _): s.pan = p
        case let .rate(r): s.rate = r
        case let .loops(n): s.loops = n
        case .seek: break
        case .pause: if s.phase == .active { s.phase = .paused }
        case .resume: if s.phase == .paused { s.phase = .active }
        case .stop:
            s.phase = .idle
            s.startPosition = 0
        case let .spatial(source): s.spatial = source
        case let .position(p, _):
            var source = s.spatial ?? SpatialSource()
            source.position = p
            s.spatial = source
        case let .velocity(v):
            var source = s.spatial ?? SpatialSource()
            source.velocity = v
            s.spatial = source
        case let .motion(p, v, _):
            var source = s.spatial ?? SpatialSource()
            source.position = p
            source.velocity = v
            s.spatial = source
        case let .direction(d, _):
            var source = s.spatial ?? SpatialSource()
            source.direction = d
            s.spatial = source
        case let .sends(sends): s.sends = sends
        case let .sendLevel(send, level, _): if send < s.sends.count { s.sends[send].level = level }
        case let .filter(filter, _): s.filter = filter
        }
    }

    /// Schedules `change` at `time` on the track's current voice (the one started by the last `play`). Returns
    /// nil when the track has no voice (never played, or stopped): a later `play` starts a new voice that earlier
    /// timed commands do not touch. The track's properties (`volume`, `pan`, `rate`, `numberOfLoops`) take the
    /// new value when the command is applied, not before. `onApplied` runs on the event thread with the time on
    /// which the change took effect; `onDropped` instead when it did not (the voice had ended by then, or the
    /// render side's queue was full), and the track's properties keep their value. Throws (scheduling nothing)
    /// for a value outside its range or a time at another rate.
    @discardableResult
    public func schedule(_ change: TrackChange, at time: EngineTime,
                         onApplied: CommandApplyHandler? = nil,
                         onDropped: CommandDropHandler? = nil) throws(EngineError) -> ScheduledCommandID? {
        let frame = try engine.frame(of: time)
        let change = try checked(change)
        return schedule(change, atFrame: frame, onApplied: onApplied, onDropped: onDropped)
    }

    /// `schedule(_:at:)` for a checked change at output frame `frame`.
    package func schedule(_ change: TrackChange, atFrame frame: Int64,
                  onApplied: CommandApplyHandler? = nil,
                  onDropped: CommandDropHandler? = nil) -> ScheduledCommandID? {
        let made: (MixerCommand, UInt32)? = state.withLock { s in
            guard s.phase != .idle else { return nil }
            return (command(for: change, generation: s.generation), s.generation)
        }
        guard let (command, generation) = made else { return nil }
        return engine.schedule(command, atFrame: frame, dropped: onDropped) { [weak self] applied in
            self?.state.withLock { s in
                if s.generation == generation { Self.take(change, into: &s) }
            }
            onApplied?(applied)
        }
    }

    /// Starts the track afresh at `time`, from `offset` seconds into the sound (nil: `currentTime` as set while
    /// stopped, else 0): a timed `play`. Unlike `play(at:)`, which acts on the track's voice at once, the start
    /// waits on the render side like every timed command, so a voice still sounding (one stopped with a fade by
    /// an earlier timed `stop`, say) plays on until `time`. If it is still sounding at `time` it is cut there
    /// (reason `stopped`, like `play` on a playing track); its end is reported to `onFinish` as usual. Timed
    /// changes scheduled after this call act on the new voice; immediate ones made before `time` (`stop()`,
    /// `pause()`, `setVolume`…) reach it too, applied on `time` right after the start (a `stop()` then means it
    /// never sounds and ends there, `stopped`). Of two timed plays waiting at once, the one called last is the
    /// track's: if the other's time comes later, that one never sounds (dropped, `superseded`, and reported
    /// ended). Cancelling it before it takes effect, or its being dropped for a full queue, leaves the track
    /// without a voice: call `stop()` before playing it again. Throws for an offset outside 0…duration or a time
    /// at another rate.
    @discardableResult
    public func schedulePlay(at time: EngineTime, offset: Double? = nil,
                             onApplied: CommandApplyHandler? = nil,
                             onDropped: CommandDropHandler? = nil) throws(EngineError) -> ScheduledCommandID {
        let frame = try engine.frame(of: time)
        var position: Int?
        if let offset { position = try sourceFrame(offset, "offset") }
        return schedulePlay(atFrame: frame, offsetFrames: position, onApplied: onApplied, onDropped: onDropped)
    }

    /// `schedulePlay(at:offset:)` at output frame `frame`, from source frame `offsetFrames` (checked).
    @discardableResult
    package func schedulePlay(atFrame frame: Int64, offsetFrames: Int? = nil,
                      onApplied: CommandApplyHandler? = nil,
                      onDropped: CommandDropHandler? = nil) -> ScheduledCommandID {
        if let offsetFrames {
            let p = min(max(offsetFrames, 0), sound.frameCount)
            state.withLock { $0.startPosition = p }
        }
        // A fresh start is a `.start` command, then the voice's sends and filter if it has any: those wait on the
        // render side for the start and are applied right after it, on its frame.
        let commands = startCommands(atFrame: frame, fresh: true)
        let id = engine.schedule(commands[0], atFrame: frame, dropped: onDropped) { applied in onApplied?(applied) }
        if commands.count > 1 { engine.send(Array(commands.dropFirst())) }
        return id
    }
}
