import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput

/// The scene's `timeline`: changes to named tracks and buses, and the listener, at exact times.
///
/// ```json
/// "timeline": [
///   { "at": 3.5, "track": "drums", "set": { "volume": 0.2, "pan": -0.5 }, "ramp": 0.5 },
///   { "at": 8.0, "track": "music", "stop": { "fade": 1.0 } },
///   { "at": 1.0, "listener": { "position": [0, 0, 4], "at": [1, 0, 0] }, "ramp": 2.0 } ]
/// ```
/// Every action and key: the "Scene files" article (Ensemble.docc/SceneFormat.md, "Timeline").
extension Scene {
    /// One entry of the scene's `timeline`: an action on a named track or bus at a time on the scene's timeline.
    public struct TimedChange: Sendable, Equatable {
        /// What the change acts on, by its name in the scene.
        public enum Target: Sendable, Equatable {
            /// The scene track with this name.
            case track(String)
            /// The bus with this name; only `set` with a volume, `pause` and `resume` apply to a bus.
            case bus(String)
            /// The listener of positioned sources; only the `listener` action applies to it.
            case listener
        }

        /// What the change does; each case is one key of a timeline entry (`set`, `stop`, `pause`, …).
        public enum Action: Sendable, Equatable {
            /// The values given change, on the same frame, in `Values`' order.
            case set(Values)
            /// Moves or turns the listener: the members given change, the others keep the values they have then;
            /// position and orientation glide over `ramp` seconds (nil: the smoothing time, 0: a jump).
            case listener(ListenerChange, ramp: Double?)
            /// Fade (seconds) starting at `at`; nil: the track's `fadeOut`, or the smoothing time without one.
            case stop(fade: Double?)
            /// Fade (seconds) starting at `at`; nil: the smoothing time. On a bus: pauses every voice on it.
            case pause(fade: Double?)
            /// Continues a paused track (or every voice a bus's pause holds), fading in over `fade` seconds starting at `at`; nil: the smoothing time.
            case resume(fade: Double?)
            /// Seconds into the file.
            case seek(Double)
            /// Starts the track afresh at `at`, from `offset` seconds into the file (nil: 0).
            case play(offset: Double?)
        }

        /// What a timeline `set` changes: each value given changes, nil leaves it as it is. They are applied on
        /// the same frame in the order of the members. `ramp` (seconds) smooths volume, pan, position, direction,
        /// the send level and the filter's gains (nil: the engine's smoothing time, 0: a step).
        public struct Values: Sendable, Equatable {
            /// Gain, 0…1.
            public var volume: Float?
            /// Stereo position, −1…1 (a 2D track's).
            public var pan: Float?
            /// Playback speed.
            public var rate: Float?
            /// Extra passes after the first (−1: until the scene ends).
            public var loops: Int?
            /// Where a positioned track moves (along a straight line over `ramp`).
            public var position: Vector3?
            /// A positioned track's velocity, for doppler.
            public var velocity: Vector3?
            /// Where a positioned track's cone points.
            public var direction: Vector3?
            /// One send's level.
            public var sendLevel: SendLevelChange?
            /// The direct-path filter.
            public var filter: VoiceFilter?
            /// Seconds the ramped values glide over (nil: the smoothing time, 0: a step).
            public var ramp: Double?

            /// The values given; the others stay as they are.
            public init(volume: Float? = nil, pan: Float? = nil, rate: Float? = nil, loops: Int? = nil,
                        position: Vector3? = nil, velocity: Vector3? = nil, direction: Vector3? = nil,
                        sendLevel: SendLevelChange? = nil, filter: VoiceFilter? = nil, ramp: Double? = nil) {
                self.volume = volume
                self.pan = pan
                self.rate = rate
                self.loops = loops
                self.position = position
                self.velocity = velocity
                self.direction = direction
                self.sendLevel = sendLevel
                self.filter = filter
                self.ramp = ramp
            }
        }

        /// Seconds on the scene's timeline.
        public var at: Double
        /// The track or bus it acts on.
        public var target: Target
        /// What it does.
        public var action: Action

        /// A change as given; values are checked when a scene file is loaded, not here.
        public init(at: Double, target: Target, action: Action) {
            self.at = at
            self.target = target
            self.action = action
        }

        /// The action's name, as `--events` shows it.
        public var actionName: String {
            switch action {
            case .set: "set"
            case .stop: "stop"
            case .pause: "pause"
            case .resume: "resume"
            case .seek: "seek"
            case .play: "play"
            case .listener: "listener"
            }
        }
    }
}
