import Foundation
import EnsembleFormats

// Render thread: written by the listener and settings commands between spans (the serial phase), read by the
// lanes' spatial updates; made on the control thread with the mixer.

/// The mixer-wide half of the 3D model: the listener (its position and orientation on straight-line ramps over
/// absolute frames, its velocity and gain), the engine's `SpatialSettings`, the output's `SpeakerLayout`, and the
/// constants of the spatial update (the glide of doppler pitch and HF gain, a fresh `HighShelf` to copy).
///
/// Only commands change it, and only between spans, so every spatial update of a span reads the listener the
/// commands applied so far made, whichever lane or thread runs it.
///
/// Its queries are inlined: the update reads the scene through a pointer, and a method that is not would be
/// handed a copy of all of it (264 bytes) at each call.
package struct SpatialScene {
    package var listenerPosition = SpatialRamp(constant: .zero)
    package var listenerAt = SpatialRamp(constant: Vector3(0, 0, -1))
    var listenerUp = SpatialRamp(constant: Vector3(0, 1, 0))
    package var listenerVelocity = Vector3.zero
    package var listenerGain: Float = 1
    package var settings = SpatialSettings()
    package let layout: SpeakerLayout
    /// Headphones: positioned voices are heard through head-related filters rather than panned (`SpatialMath`).
    package let binaural: Bool
    /// Counts listener and settings commands: a voice whose last update saw the same count, with every ramp
    /// finished, would compute the same outcome again (`SpatialUpdate`'s shortcut for still scenes).
    package var epoch: UInt64 = 0
    /// The smoothing ramp (`Engine.Configuration.smoothingTime` in frames) for a fade-out moved by doppler.
    package let smoothingFrames: Int
    /// The one-pole coefficient that glides the applied doppler pitch and HF gain towards their targets once per
    /// update: 1 − exp(−interval / smoothing frames), a time constant of the smoothing time (1: no glide).
    package let glide: Float
    /// A shelf in its rest state at the output rate, copied into a voice when it starts filtering.
    package let shelf: HighShelf
    /// The listener's coordinate frame once its ramps are over, made once per listener command rather than once
    /// per voice and update (`space(at:)`).
    var restingSpace = ListenerSpace(Listener())
    /// Test hook: runs every update on the grid, even those a quiet voice skips (`SpatialUpdate.isQuiet`), to
    /// show that skipping them changes no bit.
    package var runsEveryUpdateForTesting = false

    package init(sampleRate: Double, smoothingFrames: Int, layout: SpeakerLayout, binaural: Bool = false) {
        self.layout = layout
        self.binaural = binaural
        self.smoothingFrames = smoothingFrames
        glide = smoothingFrames > 0
            ? Float(1 - exp(-Double(SpatialUpdate.interval) / Double(smoothingFrames))) : 1
        shelf = HighShelf(sampleRate: sampleRate)
    }

    /// The listener as the spatial update sees it at `frame`: position and orientation on their ramps. An
    /// orientation vector that passes through zero on its way (a half turn) is taken at its target there.
    @inline(__always)
    @_noLocks
    package func listener(at frame: Int64) -> Listener {
        var at = listenerAt.value(at: frame), up = listenerUp.value(at: frame)
        if at.dot(at) < 1e-12 { at = listenerAt.to }
        if up.dot(up) < 1e-12 { up = listenerUp.to }
        return Listener(renderPosition: listenerPosition.value(at: frame), velocity: listenerVelocity, at: at, up: up,
                        gain: listenerGain)
    }

    /// The listener's coordinate frame at `frame`: the resting one once its ramps are over.
    @inline(__always)
    @_noLocks
    package func space(at frame: Int64) -> ListenerSpace {
        isStill(from: frame) ? restingSpace : ListenerSpace(listener(at: frame))
    }

    /// True when the listener stays where it is from `frame` on.
    @inline(__always)
    @_noLocks
    func isStill(from frame: Int64) -> Bool {
        listenerPosition.isStill(from: frame) && listenerAt.isStill(from: frame) && listenerUp.isStill(from: frame)
    }

    /// `.listener`: position and orientation head for the new ones over `rampFrames` from `now`; velocity and
    /// gain apply at once (a gain change still glides: the voices' gains ramp between updates).
    @_noLocks
    package mutating func apply(_ listener: Listener, rampFrames: Int, now: Int64) {
        listenerPosition.retarget(listener.position, at: now, rampFrames: rampFrames)
        listenerAt.retarget(listener.at, at: now, rampFrames: rampFrames)
        listenerUp.retarget(listener.up, at: now, rampFrames: rampFrames)
        listenerVelocity = listener.velocity
        listenerGain = listener.gain
        restingSpace = ListenerSpace(listener)
        epoch &+= 1
    }

    /// `.spatialSettings`: from `now` on.
    @_noLocks
    package mutating func apply(_ settings: SpatialSettings) {
        self.settings = settings
        epoch &+= 1
    }
}
