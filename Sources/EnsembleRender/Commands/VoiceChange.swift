// Built on the control thread, carried by the command ring (`CommandCell`), applied on the render thread.
import EnsembleFormats

/// The changes sent to one voice many times a second (a game moving its sources every frame, automation):
/// volume, pan, rate, position, velocity (and both at once: motion), direction, each the `MixerCommand` case of the same name, in a form
/// small enough to cross the command ring on its own.
///
/// A `MixerCommand` is as large as its largest case (a start's `VoiceSetup`, about 400 bytes), and Swift copies a
/// large enum whole wherever a `switch` takes its payload apart: between the ring and the voice, a position
/// went through about ten such copies, a quarter of the render time of 256 moving voices. The ring keeps these
/// changes in a small field of their own, and the render side applies one to its live voice straight from there
/// (`Mixer.receive(_:slot:generation:blockStart:)`); anything less simple (a change that must wait for its
/// voice's timed start, or one the command log records) takes the general path as the `MixerCommand` it stands for.
package enum VoiceChange: BitwiseCopyable, Sendable {
    case volume(Float, rampFrames: Int)
    case pan(PanMatrix, rampFrames: Int)
    /// The cursor step for the new rate (see `SourceCursor.step`).
    case rate(step: UInt64)
    case position(Vector3, rampFrames: Int)
    case velocity(Vector3)
    /// A position and a velocity at once (`TrackChange.motion`).
    case motion(Vector3, velocity: Vector3, rampFrames: Int)
    case direction(Vector3, rampFrames: Int)
}

extension MixerCommand {
    /// The command standing for `change` of voice `generation` in `slot`.
    @_noLocks
    package init(_ change: VoiceChange, slot: Int32, generation: UInt32) {
        switch change {
        case let .volume(volume, rampFrames):
            self = .setVolume(slot: slot, generation: generation, volume: volume, rampFrames: rampFrames)
        case let .pan(matrix, rampFrames):
            self = .setPan(slot: slot, generation: generation, matrix: matrix, rampFrames: rampFrames)
        case let .rate(step):
            self = .setRate(slot: slot, generation: generation, step: step)
        case let .position(position, rampFrames):
            self = .setPosition(slot: slot, generation: generation, position, rampFrames: rampFrames)
        case let .velocity(velocity):
            self = .setVelocity(slot: slot, generation: generation, velocity)
        case let .motion(position, velocity, rampFrames):
            self = .setMotion(slot: slot, generation: generation, position, velocity: velocity, rampFrames: rampFrames)
        case let .direction(direction, rampFrames):
            self = .setDirection(slot: slot, generation: generation, direction, rampFrames: rampFrames)
        }
    }

    /// The command as a change of its voice, when it is one of the `VoiceChange` cases.
    package var change: (slot: Int32, generation: UInt32, change: VoiceChange)? {
        @_noLocks get {
            switch self {
            case let .setVolume(slot, generation, volume, rampFrames):
                return (slot, generation, .volume(volume, rampFrames: rampFrames))
            case let .setPan(slot, generation, matrix, rampFrames):
                return (slot, generation, .pan(matrix, rampFrames: rampFrames))
            case let .setRate(slot, generation, step):
                return (slot, generation, .rate(step: step))
            case let .setPosition(slot, generation, position, rampFrames):
                return (slot, generation, .position(position, rampFrames: rampFrames))
            case let .setVelocity(slot, generation, velocity):
                return (slot, generation, .velocity(velocity))
            case let .setMotion(slot, generation, position, velocity, rampFrames):
                return (slot, generation, .motion(position, velocity: velocity, rampFrames: rampFrames))
            case let .setDirection(slot, generation, direction, rampFrames):
                return (slot, generation, .direction(direction, rampFrames: rampFrames))
            default:
                return nil
            }
        }
    }
}

/// One position of the command ring: a voice change (`change` set, for voice `generation` in `slot`; `command`
/// unused) or any other command (`change` nil). The render side reads `change` in place first, so a change costs
/// its few bytes, not a copy of the whole cell.
package struct CommandCell: BitwiseCopyable {
    package var change: VoiceChange?
    package var slot: Int32
    package var generation: UInt32
    package var command: MixerCommand
}
