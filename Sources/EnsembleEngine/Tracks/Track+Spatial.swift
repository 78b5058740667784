// Control side (any thread): a track's place in 3D.
import Synchronization
import EnsembleFormats
import EnsembleRender

extension Track {
    /// Where the track is in 3D, nil while it is 2D (the default). Change it with `setSpatial(_:at:)`,
    /// `setPosition(_:at:ramp:)`, `setVelocity(_:at:)` (both at once: `setPosition(_:velocity:at:ramp:)`) and
    /// `setDirection(_:at:ramp:)`.
    public var spatial: SpatialSource? { state.withLock { $0.spatial } }

    /// Places the track in 3D (nil: back to 2D, where its `pan` applies again); `time` as for
    /// `setVolume(_:at:ramp:)`. Gains and pans glide to the new placement over the smoothing time. Throws for a
    /// property outside its documented range (see `SpatialSource`).
    @discardableResult
    public func setSpatial(_ spatial: SpatialSource?, at time: EngineTime? = nil) throws(EngineError)
        -> ScheduledCommandID? {
        try change(.spatial(spatial), at: time)
    }

    /// Moves the track to `position` along a straight line over `ramp` seconds (nil: the smoothing time, 0: a
    /// jump whose gains still glide); a 2D track becomes positioned with OpenAL's default properties. `time` as
    /// for `setVolume(_:at:ramp:)`.
    @discardableResult
    public func setPosition(_ position: Vector3, at time: EngineTime? = nil, ramp: Double? = nil) throws(EngineError)
        -> ScheduledCommandID? {
        try change(.position(position, ramp: ramp), at: time)
    }

    /// `setPosition(_:at:ramp:)` and `setVelocity(_:at:)` in one command, for a game that moves a source every
    /// frame: half the control-side cost of the two calls, and the voice is updated once.
    @discardableResult
    public func setPosition(_ position: Vector3, velocity: Vector3, at time: EngineTime? = nil, ramp: Double? = nil)
        throws(EngineError) -> ScheduledCommandID? {
        try change(.motion(position, velocity: velocity, ramp: ramp), at: time)
    }

    /// Sets the velocity used for doppler (units per second); motion itself comes from `setPosition`.
    @discardableResult
    public func setVelocity(_ velocity: Vector3, at time: EngineTime? = nil) throws(EngineError) -> ScheduledCommandID? {
        try change(.velocity(velocity), at: time)
    }

    /// Turns the source's cone to face `direction` (zero: omnidirectional) over `ramp` seconds.
    @discardableResult
    public func setDirection(_ direction: Vector3, at time: EngineTime? = nil, ramp: Double? = nil) throws(EngineError)
        -> ScheduledCommandID? {
        try change(.direction(direction, ramp: ramp), at: time)
    }
}
