// Control side: plain values describing a scene's auxiliary sends and timed send changes.
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput

/// The environment keys of a scene: a track's or effect's `sends` and `filter`, bus chain entries of type `reverb`
/// and `compressor`, and timeline `set` entries that change a send's level or a filter. Keys and an example: the
/// "Scene files" article (Ensemble.docc/SceneFormat.md, "Sends and filters"); what they do: the "Environment"
/// article (Ensemble.docc/Environment.md).
extension Scene {
    /// An auxiliary send of a scene track or effect (`AuxSend`, its bus named as in the scene).
    public struct SendEntry: Sendable, Equatable {
        /// The bus it feeds by its scene name; nil for the master (the `bus` key `"master"`).
        public var bus: String?
        /// Send level, 0…1 (default 1).
        public var level: Float = 1
        /// Leaves out the voice's volume (true) or follows it (false, the default); see `AuxSend.preFader`.
        public var preFader = false
        /// The send's own filter; nil: the voice's direct-path filter, if it has one.
        public var filter: VoiceFilter?

        /// A send into the bus named `bus` (nil: the master).
        public init(bus: String?, level: Float = 1, preFader: Bool = false, filter: VoiceFilter? = nil) {
            self.bus = bus
            self.level = level
            self.preFader = preFader
            self.filter = filter
        }
    }

    /// A timeline `set` of one send's level: `"set": {"send": 0, "level": 0.5}` (the send by its index in the
    /// track's `sends`, or by the name of the bus it feeds).
    public struct SendLevelChange: Sendable, Equatable {
        /// The send's index in the track's `sends`.
        public var send: Int
        /// The new level, 0…1, reached over the entry's `ramp`.
        public var level: Float

        /// A change of send `send` to `level`.
        public init(send: Int, level: Float) {
            self.send = send
            self.level = level
        }
    }
}
