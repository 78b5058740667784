// Control side: the soak driver reads what the render side received (`CommandLog`).
@_spi(Testing) import EnsembleRender

extension Engine {
    /// Moves the commands the render side has received since the last call into `log` (see `CommandLog`).
    /// Call from one thread at a time. Does nothing unless `Configuration.commandLogCapacity` > 0.
    @_spi(Testing)
    public func drainCommandLog(into log: inout [LoggedCommand]) {
        mixer.commandLog.drain(into: &log)
    }

    /// Log entries lost because the log ring was full when the render side received them (should be 0).
    @_spi(Testing)
    public var lostCommandLogEntries: Int { mixer.commandLog.lost }
}
