// Render thread (the lanes).
import EnsembleFormats

/// The scalar gain a destination of a voice gets, for `GainStage` (2D) and `SpatialGainStage` (positioned): the
/// voice's own gain (`Voice.gain(at:)`: volume · fades · attack · release), weighted by its share of a bus move, or,
/// for an auxiliary send (`AuxSend`), that gain — without the volume for a pre-fader send
/// (`Voice.preFaderGain(at:)`) — times the send's level ramp. One place forms it, so a post-fader send at level 1
/// adds exactly what the direct path adds, on every path of both gain stages.
package enum GainShare: BitwiseCopyable {
    /// All of the voice: its main bus.
    case whole
    /// The bus a moving voice heads for gets f(t) of it, the one it leaves 1 − f(t).
    case arriving(LinearRamp)
    case leaving(LinearRamp)
    /// An auxiliary send at `level`, leaving out the voice's volume when `preFader`.
    case send(level: LinearRamp, preFader: Bool)

    /// The scalar gain at `frame`.
    @inline(__always)
    @_noLocks
    package func gain(_ voice: UnsafePointer<Voice>, at frame: Int64) -> Float {
        switch self {
        case .whole: voice.pointee.gain(at: frame)
        case let .arriving(fade): voice.pointee.gain(at: frame) * fade.value(at: frame)
        case let .leaving(fade): voice.pointee.gain(at: frame) * (1 - fade.value(at: frame))
        case let .send(level, preFader):
            (preFader ? voice.pointee.preFaderGain(at: frame) : voice.pointee.gain(at: frame)) * level.value(at: frame)
        }
    }

    /// True when the scalar gain changes inside [start, end).
    @inline(__always)
    @_noLocks
    func varies(_ voice: UnsafePointer<Voice>, in start: Int64, _ end: Int64) -> Bool {
        if voice.pointee.gainVaries(in: start, end) { return true }
        switch self {
        case .whole: return false
        case let .arriving(fade), let .leaving(fade): return fade.varies(in: start, end)
        case let .send(level, _): return level.varies(in: start, end)
        }
    }

    /// True for the voice's main bus, the share its meter reports.
    var isWhole: Bool {
        @inline(__always) @_noLocks get { if case .whole = self { true } else { false } }
    }
}
