import Foundation
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput

/// A mix described in a JSON file: tracks that start at given times, loop, pan and fade, one-shot effects fired at
/// given times, buses with effect chains, 3D sound, sends and filters, and a timeline of changes on exact frames.
/// File paths are relative to the scene file's folder.
///
/// ```json
/// { "sampleRate": 48000, "duration": 12.5,
///   "tracks": [ { "name": "drums", "file": "drums.caf", "start": 0.25, "volume": 0.8, "pan": -0.3, "loops": 3 } ],
///   "effects": [ { "name": "coin", "file": "coin.wav", "at": 1.0, "volume": 1.0, "pan": 0.5 } ] }
/// ```
/// Unknown keys, keys given twice and out-of-range values are errors naming the key. Every key, with its default
/// and range: the "Scene files" article (Ensemble.docc/SceneFormat.md).
public struct Scene: Sendable, Equatable {
    /// The description of one scene track (its `Track` is made when the scene is loaded onto an engine).
    public struct TrackEntry: Sendable, Equatable {
        /// The track's name, unique among the scene's tracks (the `name` key; default: the file name without extension).
        public var name: String
        /// Absolute path (resolved against the scene's folder).
        public var file: String
        /// Seconds on the scene's timeline at which the first sample plays.
        public var start = 0.0
        /// Seconds into the file at which the first pass begins.
        public var offset = 0.0
        /// Gain, 0…1 (default 1).
        public var volume: Float = 1
        /// Stereo position, −1 (left) … 1 (right) (default 0, centre).
        public var pan: Float = 0
        /// Playback speed, 1/16…4 (`Track.rateRange`; default 1); see `rateMode` for whether it changes pitch.
        public var rate: Float = 1
        /// 0 = once, n = n extra passes, −1 = until the scene ends.
        public var loops = 0
        /// Linear fade-in from the track's first sample, in seconds (0 = none).
        public var fadeIn = 0.0
        /// Linear fade-out in seconds (0 = none). Ends at the track's last sample, or at the scene's end for a track that loops forever.
        public var fadeOut = 0.0
        /// The name of the bus it plays into; nil for the master.
        public var bus: String?
        /// true: stream the file from disk while playing; false: decode it into memory first; nil (the default):
        /// stream files longer than `Scene.streamingThreshold` whose format streams.
        public var stream: Bool?
        /// Loop region in seconds of the file (see `Track.setLoopRegion`); either may be nil (the file's start /
        /// end, or its `smpl` loop points when it has them). A region keeps the file in memory.
        public var loopStart: Double?
        /// The loop region's end in seconds of the file (exclusive), after `loopStart`; nil for the file's end.
        public var loopEnd: Double?
        /// Stealing priority under `maxVoices`, 0…255.
        public var priority = 128
        /// How `rate` changes the sound (see `Track.rateMode`); preservePitch keeps the file in memory.
        public var rateMode = RateMode.varispeed
        /// How the track is resampled; nil for the scene's `resampler`.
        public var resampler: ResamplerQuality?
        /// Where the track is in 3D (any of the 3D keys `position`, `velocity`, `direction`, `relative`,
        /// `referenceDistance`, … given; OpenAL's defaults for the others); nil for a 2D track heard at its `pan`.
        public var spatial: SpatialSource?
        /// Auxiliary sends besides `bus`, at most `AuxSend.maxCount` (the `sends` key; none by default).
        public var sends: [SendEntry] = []
        /// The filter on the direct path (the `filter` key; nil: none), which the sends follow unless they set
        /// their own.
        public var filter: VoiceFilter?

        /// A track playing `file` (an absolute path) once from its start at time 0, with every other member at its default.
        public init(name: String, file: String) {
            self.name = name
            self.file = file
        }
    }

    /// The description of one firing of a one-shot effect.
    public struct EffectEntry: Sendable, Equatable {
        /// The effect's name (default: the file name without extension); firings with one name share one file.
        public var name: String
        /// Absolute path of the sound fired (resolved against the scene's folder).
        public var file: String
        /// Seconds on the scene's timeline at which it fires.
        public var at = 0.0
        /// Gain, 0…1 (default 1).
        public var volume: Float = 1
        /// Stereo position, −1 (left) … 1 (right) (default 0, centre).
        public var pan: Float = 0
        /// Playback speed, in `Track.rateRange` (default 1); pitch follows.
        public var rate: Float = 1
        /// The name of the bus it plays into; nil for the master.
        public var bus: String?
        /// Stealing priority under `maxVoices`, 0…255.
        public var priority = 128
        /// How the effect is resampled; nil for the scene's `resampler`.
        public var resampler: ResamplerQuality?
        /// Where the firing is heard from in 3D (the same keys as a track's); nil for a 2D firing heard at its `pan`.
        public var spatial: SpatialSource?
        /// Auxiliary sends besides `bus`, at most `AuxSend.maxCount` (the `sends` key; none by default).
        public var sends: [SendEntry] = []
        /// The filter on the direct path (the `filter` key; nil: none).
        public var filter: VoiceFilter?
        /// The effect's instance limits and cooldown (the `maxInstances`, `steal` and `cooldown` keys): they
        /// belong to the effect, so every entry of its name carries the same, whichever of them gave the keys.
        public var limits = EffectLimits()
        /// How each firing's pitch and volume vary (the `pitchVariation` and `volumeVariation` keys): like
        /// `limits`, it belongs to the effect, and every entry of its name carries the same.
        public var variation = EffectVariation()

        /// A firing of `file` (an absolute path) at time 0, with every other member at its default.
        public init(name: String, file: String) {
            self.name = name
            self.file = file
        }
    }

    /// A bus: tracks and effects routed to it by name are summed, run through `effects`, and mixed into the master
    /// with its volume, pan, mute and solo (the "Buses and effects" article, Ensemble.docc/BusesAndEffects.md).
    public struct BusEntry: Sendable, Equatable {
        /// The bus's name, unique among the scene's buses; tracks and effects name it in their `bus` key.
        public var name: String
        /// Volume, pan, mute and solo (default: unity gain, centred).
        public var settings = BusSettings()
        /// The bus's effect chain, run in order on the bus's sum (default: none).
        public var effects: [EffectSpec] = []
        /// Starts paused (`Engine.pause(_:fade:)`): its tracks and effects wait for a timeline `resume`.
        public var paused = false

        /// A bus with default settings and no effects.
        public init(name: String) { self.name = name }
    }

    /// Buses in the order given; the first is engine bus 1 (`try Bus(1)`).
    public var buses: [BusEntry] = []
    /// The master bus's chain, run on the final mix.
    public var masterEffects: [EffectSpec] = []
    /// Tracks without a `stream` key stream their file when it is longer than this (seconds).
    public static let streamingThreshold = 30.0

    /// The output sample rate in Hz, 8000…384000, a whole number (default 48000): the rate `ensemble render` and
    /// `ensemble play` make their engine at.
    public var sampleRate = 48000.0
    /// Length of the mix in seconds; nil means "until the last track or effect ends".
    public var duration: Double?
    /// The scene's tracks, in the order given.
    public var tracks: [TrackEntry] = []
    /// The scene's effect firings, in the order given.
    public var effects: [EffectEntry] = []
    /// Timed changes to tracks and buses, in the order given (see `Scene.TimedChange`).
    public var timeline: [TimedChange] = []
    /// Most voices sounding at once (`Engine.Configuration.maxSoundingVoices`); nil for no cap.
    public var maxVoices: Int?
    /// How tracks and effects without their own `resampler` are resampled.
    public var resampler = ResamplerQuality.sinc
    /// The listener at the scene's start (the `listener` key; OpenAL's default listener without it). The
    /// timeline moves it with `listener` entries.
    public var listener = Listener()
    /// The distance model, doppler factor and speed of sound (the `distanceModel`, `dopplerFactor` and
    /// `speedOfSound` keys; OpenAL's defaults without them).
    public var spatialSettings = SpatialSettings()
    /// The output's channels (the `channels` key: 2, 6 or 8; stereo without it). `ensemble render` and
    /// `ensemble play` make their engine with it unless `--channels` says otherwise.
    public var speakerLayout = SpeakerLayout.stereo
    /// Headphones: the HRTF data set positioned sources are rendered through (the `hrtf` key: `true` for the
    /// installed default, or a file); nil renders for speakers. `ensemble render|play --hrtf [PATH]` sets it. Like
    /// `speakerLayout`, it is the engine's to apply: `configuration.rendering = .headphones(try
    /// hrtf.load(sampleRate: sampleRate))` before `Engine(configuration:)`.
    public var hrtf: SceneHRTF?

    /// An empty scene at 48 kHz: no tracks, effects, buses or timeline.
    public init() {}

    /// The `file` that stands for standard input (`"file": "-"`): read once, to its end, into memory.
    public static let standardInput = "-"

    /// Reads and validates the scene at `path`.
    public static func load(path: String) throws(SceneError) -> Scene {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw SceneError(path: path, "no such file")
        }
        guard !isDirectory.boolValue else { throw SceneError(path: path, "is a directory, not a scene file") }
        // Through a descriptor, read once to its end: a FIFO or /dev/stdin works like a file.
        var bytes: [UInt8] = []
        do {
            bytes = try FileDescriptorReader(path: path).readToEnd(name: path, limit: maximumFileSize)
        } catch where error.kind == .empty {
            // Parsed as it is: an empty scene is "not valid JSON".
        } catch {
            throw SceneError(path: path, error.kind == .tooLarge
                             ? "a scene file holds at most \(ByteCountText.describe(maximumFileSize))" : error.detail)
        }
        return try parse(bytes, path: path)
    }

    /// Parses scene bytes read from `path` (a file, a FIFO, a device), relative files resolved against its folder.
    static func parse(_ bytes: [UInt8], path: String) throws(SceneError) -> Scene {
        let folder = (path as NSString).deletingLastPathComponent
        return try parse(Data(bytes), folder: folder.isEmpty ? "." : folder, path: path)
    }

    /// The largest scene file read: far beyond any hand-written scene, small enough to hold twice in memory.
    public static let maximumFileSize = 256_000_000

    /// Parses and validates scene JSON; `folder` resolves relative file paths, `path` names the scene in errors.
    /// UTF-8 is expected; UTF-16 and UTF-32 (with or without a byte-order mark) are read too.
    public static func parse(_ data: Data, folder: String, path: String) throws(SceneError) -> Scene {
        let data = try SceneTextEncoding.utf8(data, path: path)
        if let key = DuplicateKeyScanner.firstDuplicate(in: [UInt8](data)) {
            throw SceneError(path: path, "\(key): key given twice in one object")
        }
        return try SceneDocument.decode(data, folder: folder, path: path)
    }
}
