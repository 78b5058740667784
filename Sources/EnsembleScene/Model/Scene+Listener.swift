// Control side: a change of the listener, as a scene's `listener` key or timeline entry gives it.
import EnsembleRender

extension Scene {
    /// What a timeline `listener` entry changes (nil: kept as it was), or the top-level `listener` key's values.
    public struct ListenerChange: Sendable, Equatable {
        /// The listener's new position; nil keeps it.
        public var position: Vector3?
        /// The direction it faces; nil keeps it.
        public var at: Vector3?
        /// Its up direction; nil keeps it.
        public var up: Vector3?
        /// Its velocity (for doppler); nil keeps it.
        public var velocity: Vector3?
        /// Its gain, 0…1; nil keeps it.
        public var gain: Float?

        /// A change of the members given.
        public init(position: Vector3? = nil, at: Vector3? = nil, up: Vector3? = nil, velocity: Vector3? = nil,
                    gain: Float? = nil) {
            self.position = position
            self.at = at
            self.up = up
            self.velocity = velocity
            self.gain = gain
        }

        /// True when no member is given.
        public var isEmpty: Bool { position == nil && at == nil && up == nil && velocity == nil && gain == nil }

        /// `listener` with the members given replaced.
        public func applied(to listener: Listener) -> Listener {
            var l = listener
            if let position { l.position = position }
            if let at { l.at = at }
            if let up { l.up = up }
            if let velocity { l.velocity = velocity }
            if let gain { l.gain = gain }
            return l
        }
    }
}
