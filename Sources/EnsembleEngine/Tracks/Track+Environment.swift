// Control side (any thread): a track's auxiliary sends and direct-path filter.
import Synchronization
import EnsembleFormats
import EnsembleRender

extension Track {
    /// The track's auxiliary sends (none by default). Change them with `setSends(_:at:)` and
    /// `setSendLevel(_:send:at:ramp:)`.
    public var sends: [AuxSend] { state.withLock { $0.sends } }

    /// Replaces the auxiliary sends (at most `AuxSend.maxCount`; see `AuxSend`); `time` as for
    /// `setVolume(_:at:ramp:)`. Levels ramp over the smoothing time. Throws for too many sends, a level outside
    /// 0…1, a bus not set up (`EngineError.unknownBus`) or a filter gain outside 0…1.
    @discardableResult
    public func setSends(_ sends: [AuxSend], at time: EngineTime? = nil) throws(EngineError) -> ScheduledCommandID? {
        try change(.sends(sends), at: time)
    }

    /// Sets send `send`'s level (0…1; `send` indexes `sends`) over `ramp` seconds; `time` and `ramp` as for
    /// `setVolume(_:at:ramp:)`.
    @discardableResult
    public func setSendLevel(_ level: Float, send: Int, at time: EngineTime? = nil, ramp: Double? = nil)
        throws(EngineError) -> ScheduledCommandID? {
        try change(.sendLevel(send: send, level, ramp: ramp), at: time)
    }

    /// The filter on the track's direct path (nil, the default: none; see `VoiceFilter`).
    public var filter: VoiceFilter? { state.withLock { $0.filter } }

    /// Sets the direct-path filter (nil: none), its gains ramping over `ramp` seconds; `time` and `ramp` as for
    /// `setVolume(_:at:ramp:)`. Throws for a gain outside 0…1.
    @discardableResult
    public func setFilter(_ filter: VoiceFilter?, at time: EngineTime? = nil, ramp: Double? = nil) throws(EngineError)
        -> ScheduledCommandID? {
        try change(.filter(filter, ramp: ramp), at: time)
    }
}
