// Render thread: part of every `Voice`; written by the serial phases (`VirtualVoices`), read by the lanes.
import EnsembleFormats

/// A voice's virtual-voice state (after FMOD's and Wwise's virtual voices): a virtual voice stays in the active
/// list, its cursor advances exactly as if it were mixed (in its lane, `VoiceRender`), its natural end, stop and
/// pause happen on the same frames as for a mixed voice, but nothing is resampled or mixed from `silentFrom` on.
package struct VirtualState: BitwiseCopyable {
    /// Virtual from the frame it was decided on (for the cap, events and `Track.isVirtual`), even while the
    /// short fade-out before `silentFrom` still plays.
    package var isVirtual = false
    /// Why: the cap (waiting for a place) rather than inaudibility.
    var heldByCap = false
    /// First output frame not mixed: the end of the fade-out into virtual (`Int64.max` while mixed).
    package var silentFrom: Int64 = .max

    /// Mixed (not virtual).
    @_noLocks
    package init() {}

    /// Virtual for `heldByCap` (else inaudibility), silent from `silentFrom`.
    @_noLocks
    package init(heldByCap: Bool, silentFrom: Int64) {
        isVirtual = true
        self.heldByCap = heldByCap
        self.silentFrom = silentFrom
    }

    /// The reason the events report.
    package var reason: VirtualReason { @_noLocks get { heldByCap ? .voiceCap : .inaudible } }
}

extension Voice {
    /// What `Engine.Configuration.virtualThreshold` is compared with: the level the voice is set to — its volume
    /// (with its ramps), or the level of its loudest pre-fader send if that is higher (`preFaderSendLevel`: such
    /// a send does not follow the volume), times the 3D audibility of a positioned voice (`spatialAudibility`, 1 for a 2D voice).
    /// Fades are left out: a fade-in, the fade-out to the natural end, a stop, pause or steal release and the
    /// short `attack` fades are passages from or to silence that the voice goes through, not a level it is left
    /// at, and a voice fading in must not start virtual and miss the start of its fade.
    @inline(__always)
    @_noLocks
    package func audibility(at frame: Int64) -> Float {
        audibility(at: frame, spatial: spatialAudibility)
    }

    /// `audibility(at:)` with `spatial` in place of the voice's 3D audibility (`IdleVirtualUpdates` bounds it).
    @inline(__always)
    @_noLocks
    package func audibility(at frame: Int64, spatial: Float) -> Float {
        Swift.max(envelope.volume.value(at: frame), routing.preFaderSendLevel) * spatial
    }

    /// What the cap ranks voices by (`VoiceStealing.yields`): the gain the voice has at `frame` — volume ×
    /// fade-in × fade-out × release, without `attack` (the short fade of a resume or a virtual change: a voice
    /// fading back in, or out into virtual, keeps its rank) — times `spatialAudibility`.
    @inline(__always)
    @_noLocks
    func loudness(at frame: Int64) -> Float {
        envelope.volume.value(at: frame) * envelope.fadeIn.value(at: frame) * fadeOut.value(at: frame)
            * release(at: frame)
            * spatialAudibility
    }
}
