// Built on the control thread, carried by the command ring (`CommandCell`), applied on the render thread.

/// Every change to one playing voice, in the one form it has from `Track` to the voice: the control side makes
/// it from a checked `TrackChange` (or an effect instance's call), the command ring carries it in a field of its
/// own (`CommandCell`), and `VoiceUpdate.apply(_:to:now:starts:)` applies it. A timed change is the same value
/// inside `MixerCommand.voice`, waiting in the pending queue for its frame.
///
/// Frames are output frames; ramps are lengths in frames (0: a step).
package enum VoiceChange: BitwiseCopyable, Sendable {
    case volume(Float, rampFrames: Int)
    case pan(PanMatrix, rampFrames: Int)
    /// The cursor step for the new rate (see `SourceCursor.step`), computed on the control side.
    case rate(step: UInt64)
    /// Extra passes after the first (−1: until stopped); a pass under way is always finished.
    case loops(Int)
    case fades(inFrames: Int, outFrames: Int)
    /// Moves the cursor to source frame `position` (clamped to the pass).
    case seek(position: Int)
    /// Begins the release (a fade to silence over `rampFrames`, 0: a cut) at `frame` (`Int64.min`: at once),
    /// then ends the voice.
    case stop(frame: Int64, rampFrames: Int)
    /// Like `stop`, but the voice keeps its cursor and reports `.paused` instead of ending.
    case pause(rampFrames: Int)
    /// Continues a paused voice from its cursor at `frame` (or cancels a pause still fading out).
    case resume(frame: Int64, rampFrames: Int)
    /// Ends, as stolen on `frame`, an effect instance a newer firing took under its effect's `maxInstances` while
    /// it was fading into a pause that ends before that frame (render side only: `VoiceStealing.limitInstances`).
    case steal(frame: Int64)
    case metering(Bool)
    /// Moves the voice to another bus, crossfading over `rampFrames` if it is sounding.
    case route(bus: Int32, rampFrames: Int)
    /// Replaces the voice's 3D placement (nil: 2D again, its pan applies).
    case spatial(SpatialSource?)
    /// Moves the voice (a 2D one becomes positioned with OpenAL's defaults) along a straight line.
    case position(Vector3, rampFrames: Int)
    case velocity(Vector3)
    /// A position and a velocity at once (`TrackChange.motion`).
    case motion(Vector3, velocity: Vector3, rampFrames: Int)
    case direction(Vector3, rampFrames: Int)
    /// Replaces every auxiliary send: a send on the same bus as before ramps its level (and its own filter's
    /// gains); one on a new bus fades in from 0.
    case sends(SendsSetup, rampFrames: Int)
    /// Send `index`'s level, ramped from its value at the time.
    case sendLevel(index: Int32, level: Float, rampFrames: Int)
    /// The direct-path filter (`kind` none: off), its gains ramping.
    case filter(FilterSetup, rampFrames: Int)
}

/// One position of the command ring: a voice change (`change` set, for voice `generation` in `slot`; `command`
/// unused) or any other command (`change` nil). The render side reads `change` in place first, so a change costs
/// its own bytes, not a copy of the whole cell (a `MixerCommand` is as large as a start's `VoiceSetup`).
package struct CommandCell: BitwiseCopyable {
    package var change: VoiceChange?
    package var slot: Int32
    package var generation: UInt32
    package var command: MixerCommand
}
