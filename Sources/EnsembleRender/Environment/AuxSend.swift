// Control side: a plain value, made and compared on any thread.
import EnsembleFormats

/// An auxiliary send: besides its main bus, a track or effect may feed up to `AuxSend.maxCount` other buses (a
/// reverb bus, say), each at its own level, like EFX's auxiliary sends into effect slots or a mixing desk's aux
/// sends.
///
/// A post-fader send (the default) carries the voice as it reaches its main bus: volume, fades, pan (or 3D gains)
/// and filter, times `level`. A pre-fader send leaves out the voice's volume (the fader), keeping its fades, stops
/// and 3D gains, so a sound can be faded out of the dry mix while its reverb stays. The send carries the voice's
/// direct-path filter and its insert effect (`Track.setInsert`) unless it sets a `filter` of its own (then that one,
/// on the voice before its direct filter and its insert).
///
/// Levels are automatable on exact frames (`Track.setSendLevel(_:send:at:ramp:)`, `TrackChange.sendLevel`). A
/// send whose bus changes fades in on the new bus over the smoothing time and is cut from the old one: ramp its
/// level to 0 first to move it silently.
public struct AuxSend: Sendable, Equatable, Hashable {
    /// The most sends a voice has.
    public static let maxCount = 4

    /// Where the send goes: the master or a bus set up on the engine (the voice's main bus is allowed too).
    public var bus: Bus
    /// Send level, 0…1.
    public var level: Float
    /// Leaves out the voice's volume (true) or follows it (false, the default).
    public var preFader: Bool
    /// The send's own filter; nil: the voice's direct-path filter (if any).
    public var filter: VoiceFilter?

    /// A send into `bus` (nothing is checked here; the setters refuse a level outside 0…1 or a bus not set up).
    public init(bus: Bus, level: Float = 1, preFader: Bool = false, filter: VoiceFilter? = nil) {
        self.bus = bus
        self.level = level
        self.preFader = preFader
        self.filter = filter
    }
}
