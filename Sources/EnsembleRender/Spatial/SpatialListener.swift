// Render thread: the listener as the spatial update hands it to `SpatialMath`.
import EnsembleFormats

extension Listener {
    /// A listener with every property given (the public initialiser is not `@_noLocks`).
    @_noLocks
    package init(renderPosition position: Vector3, velocity: Vector3, at: Vector3, up: Vector3, gain: Float) {
        self.position = position
        self.velocity = velocity
        self.at = at
        self.up = up
        self.gain = gain
    }
}
