// Render thread: part of every `Voice`; written by the serial phases (`VirtualVoices`), read by the lanes.

/// A voice's virtual-voice state (after FMOD's and Wwise's virtual voices): a virtual voice stays in the active
/// list, its cursor advances exactly as if it were mixed (in its lane, `VoiceRender`), its natural end, stop and
/// pause happen on the same frames as for a mixed voice, but nothing is resampled or mixed from `silentFrom` on.
struct VirtualState: BitwiseCopyable {
    /// Virtual from the frame it was decided on (for the cap, events and `Track.isVirtual`), even while the
    /// short fade-out before `silentFrom` still plays.
    var isVirtual = false
    /// Why: the cap (waiting for a place) rather than inaudibility.
    var heldByCap = false
    /// Set during an update (`VirtualVoices.update`) for a virtual voice loud enough to come back.
    var wantsBack = false
    /// First output frame not mixed: the end of the fade-out into virtual (`Int64.max` while mixed).
    var silentFrom: Int64 = .max

    /// Mixed (not virtual).
    @_noLocks
    init() {}

    /// Virtual for `heldByCap` (else inaudibility), silent from `silentFrom`.
    @_noLocks
    init(heldByCap: Bool, silentFrom: Int64) {
        isVirtual = true
        self.heldByCap = heldByCap
        self.silentFrom = silentFrom
    }

    /// The reason the events report.
    var reason: VirtualReason { @_noLocks get { heldByCap ? .voiceCap : .inaudible } }
}

extension Voice {
    /// What the virtual-voice rules compare with `Engine.Configuration.virtualThreshold` and the cap ranks voices
    /// by: the scalar gain the voice is meant to have — volume × fade-in × fade-out × release, without `attack`
    /// (the short fade of a late start, a resume or a virtual change, which says nothing of how loud the voice
    /// is meant to be: a voice fading back in must not look inaudible) — times the 3D audibility of a positioned
    /// voice (`spatialAudibility`, 1 for a 2D voice).
    @inline(__always)
    @_noLocks
    func audibility(at frame: Int64) -> Float {
        volume.value(at: frame) * fadeIn.value(at: frame) * fadeOut.value(at: frame) * release(at: frame)
            * spatialAudibility
    }
}
