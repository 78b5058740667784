// Render thread: part of a `Voice`; commands write it between spans (`VoiceUpdate`), the voice's own lane
// during a span (`SpatialUpdate`, `SpatialRender`).
import EnsembleFormats

/// A positioned voice's 3D state, after OpenAL Soft's split of source properties (what the game set) from voice
/// parameters (what the mixer applies): the `SpatialSource` properties with the position and direction on
/// straight-line ramps over absolute frames, and the smoothing state of what the spatial update derives from them
/// (per-channel gains ramping between updates, the applied HF gain and its shelf, the applied doppler pitch).
///
/// A voice with `isOn` false is 2D: none of this is read and its render path is the stereo pan's, bit for bit.
package struct SpatialVoice: BitwiseCopyable {
    /// How the first update after a change of mode starts its gains.
    package enum Onset: UInt8, BitwiseCopyable {
        /// From wherever the gains' ramp is (the usual update).
        case ramp
        /// At the new target, with no glide: a voice starting or resuming (its attack or fade-in hides the onset).
        case atTarget
        /// From the gains of the voice's stereo pan: a sounding 2D voice that has just become positioned.
        case fromPan
    }

    /// Heard from its position through the spatial path (false: a 2D voice, its pan applies).
    package var isOn = false
    /// Gliding back to its pan after `VoiceChange.spatial(nil)`; leaves the spatial path once the gains got there.
    var isLeaving = false
    var onset = Onset.atTarget
    /// A command changed something the update reads since the last update.
    var isDirty = true
    /// The properties as the game set them (nil until the voice is first positioned: the render side cannot
    /// make a `SpatialSource` of its own); `position` and `direction` are superseded by the ramps below.
    package var source: SpatialSource?
    package var position = SpatialRamp(constant: .zero)
    package var direction = SpatialRamp(constant: .zero)

    /// The per-channel spatial gains: from `gainsFrom` at `rampStart` to `gainsTo` `SpatialUpdate.interval` frames
    /// later (`rampLength`), then `gainsTo`; each update starts a new ramp from where the last one is.
    package var gainsFrom = ChannelGains()
    package var gainsTo = ChannelGains()
    package var rampStart: Int64 = 0
    package var rampLength = 0
    /// The HF gain applied now and the one it glides towards; the shelf runs while either is below 1.
    package var gainHF: Float = 1
    var targetHF: Float = 1
    package var shelf: HighShelf?
    /// The doppler pitch applied now (the cursor's step is `rateStep` × `pitch`) and the one it glides towards.
    package var pitch: Float = 1
    var targetPitch: Float = 1
    /// The cursor's step at the track's rate, before doppler.
    package var rateStep: UInt64 = 0
    /// The largest per-channel gain of the last evaluation (`SpatialOutcome.audibility`).
    package var audibility: Float = 1

    /// The frame of the next update (`Int64.min`: the voice's first rendered frame).
    var nextUpdate = Int64.min
    /// The frame of the last update that evaluated `SpatialMath`, and the scene's epoch it saw.
    var evaluatedAt = Int64.min
    var sceneEpoch: UInt64 = 0

    /// A 2D voice whose rate gives cursor step `rateStep`.
    @_noLocks
    package init(rateStep: UInt64) {
        self.rateStep = rateStep
    }

    /// A voice that starts positioned at `source` (nil: 2D).
    @_noLocks
    package init(_ source: SpatialSource?, rateStep: UInt64) {
        self.rateStep = rateStep
        if let source { enter(source, onset: .atTarget) }
    }

    /// Becomes positioned at `source`, its position and direction jumping there.
    @_noLocks
    package mutating func enter(_ source: SpatialSource, onset: Onset) {
        isOn = true
        isLeaving = false
        self.onset = onset
        self.source = source
        position = SpatialRamp(constant: source.position)
        direction = SpatialRamp(constant: source.direction)
        isDirty = true
    }

    /// The spatial gain of output channel `channel` at `frame` (`ramp(from:to:start:length:at:)`).
    @inline(__always)
    @_noLocks
    package func gain(_ channel: Int, at frame: Int64) -> Float {
        Self.ramp(from: gainsFrom[channel], to: gainsTo[channel], start: rampStart, length: rampLength, at: frame)
    }

    /// A gain ramping from `from` at `start` to `to` `length` frames later: from + (to − from)·q with q the
    /// fraction of the ramp, `fraction(_:length:)` (what `SpatialGainStage` computes per run and frame: the same
    /// bits).
    @inline(__always)
    @_noLocks
    package static func ramp(from: Float, to: Float, start: Int64, length: Int, at frame: Int64) -> Float {
        if frame >= start + Int64(length) { return to }
        if frame <= start { return from }
        return from + (to - from) * fraction(frame - start, length: length)
    }

    /// How far `offset` frames are into a ramp of `length` frames, 0…1: offset × (1 / length), a multiplication
    /// (exact for the power-of-two `SpatialUpdate.interval`, like a division) so the per-frame loop divides nothing.
    @inline(__always)
    @_noLocks
    package static func fraction(_ offset: Int64, length: Int) -> Float {
        Float(offset) * (1 / Float(length))
    }

    /// True when some channel's gain changes inside [start, end). (Inlined: see `Voice.gainVaries`.)
    @inline(__always)
    @_noLocks
    func gainsVary(in start: Int64, _ end: Int64, channels: Int) -> Bool {
        if rampLength == 0 || start >= rampStart + Int64(rampLength) || end <= rampStart { return false }
        for c in 0..<channels where gainsFrom[c] != gainsTo[c] { return true }
        return false
    }
}

extension Voice {
    /// Back on the 2D path (a glide back that got there, or a voice made 2D while not sounding): nothing spatial left
    /// to run, and no 3D audibility weighing on `VirtualVoices`. The caller sets the cursor's step at the track's
    /// rate its own way.
    @inline(__always)
    @_noLocks
    mutating func leaveSpatial() {
        spatial.isOn = false
        spatial.isLeaving = false
        spatial.shelf = nil
        spatialAudibility = 1
    }
}
