// Render thread: voices live in the `VoicePool`; during the lanes each is written only by its own lane.
import EnsembleFormats

/// One playing instance of a sound, as the render side holds it: a cursor plus the gains that shape it.
///
/// Tracks and one-shot effects are both voices. All fields are plain values; voices live in a preallocated
/// pool and are addressed by slot index.
package struct Voice: BitwiseCopyable {
    package enum State: UInt8, BitwiseCopyable {
        case free, scheduled, playing
        /// Silent and out of the mix, cursor kept for `resume`.
        case paused
    }

    /// Where the voice is in its life: started, ending naturally or by a release (stop, pause, steal).
    package struct Transport: BitwiseCopyable {
        /// First output frame of the voice.
        package var startFrame: Int64 = 0
        /// Output frame after the last sample of the last pass at the current rate, or `Int64.max` when looping
        /// forever.
        var naturalEnd: Int64 = .max
        /// Output frame at which the release (stop/pause/steal fade) starts; `Int64.max` for none.
        var releaseStart: Int64 = .max
        var releaseLength = 0
        var releaseReason = EndReason.stopped
        var releaseIsPause = false
    }

    /// The gains in time: the fader, the fades and the start's attack (the release is the transport's).
    package struct Envelope: BitwiseCopyable {
        package var volume = LinearRamp.constant(1)
        package var fadeIn = EdgeFade(zeroFrame: 0, length: 0, direction: 1)
        package var attack = EdgeFade(zeroFrame: 0, length: 0, direction: 1)
        package var fadeOutFrames = 0
        /// Set when a change moved the natural end during the fade-out: the fade is then a ramp from
        /// `fadeOutLevel` to 0 over the `fadeOutReleaseFrames` before the natural end (`FadeOut`).
        var fadeOutReleaseFrames = 0
        var fadeOutLevel: Float = 1
        var fadeOutReleased = false
    }

    /// Where the voice's samples go: its pan, its bus (and the one it is leaving), its sends and meter.
    package struct Routing: BitwiseCopyable {
        package var pan = PanRamp(constant: PanMatrix(leftFromLeft: 1, leftFromRight: 0, rightFromLeft: 0,
                                                      rightFromRight: 1))
        package var busFade = LinearRamp.constant(1)
        /// The bus the voice is summed into (0: straight into the output), and while moving between buses the
        /// one it leaves, with the crossfade `busFade` (see `MixLane.split`).
        package var bus: Int32 = 0
        package var previousBus: Int32 = 0
        /// The largest level a pre-fader send of the voice is at or heading for (0: none), kept by `VoiceUpdate`:
        /// such a send sounds whatever the voice's volume, so the voice is as audible as that level
        /// (`audibility(at:)`), and a voice turned down to 0 keeps feeding its reverb instead of going virtual.
        var preFaderSendLevel: Float = 0
        package var metering = false
        /// Set once a send, filter or insert command has reached the voice, or when it starts in a slot with an
        /// insert (`VoiceInserts`): until then its entries in `VoiceEnvironments` are the blank ones its start left
        /// there and it has no insert (`VoiceEnvironments.isPlain` then reads nothing).
        var usesEnvironment = false
    }

    /// How the rate is heard: varispeed (the cursor's step alone) or pitch-preserving (WSOLA, `TimeStretch`,
    /// when the cursor's step differs from `baseStep`, rate 1).
    package struct Pitch: BitwiseCopyable {
        package var preservePitch = false
        package var baseStep: UInt64 = 0
        var stretch = StretchState()
    }

    package var state: State = .free
    package var isEffect = false
    /// Stealing priority under the sounding-voice cap (0 first, 255 last).
    package var priority: UInt8 = 128
    /// The per-effect limits the voice is under (`EffectLimitTable`; entry −1 for none, and for tracks).
    package var limitTag = EffectLimitTag()
    package var generation: UInt32 = 0
    package var sequence: UInt64 = 0
    package var source: VoiceSource
    package var cursor = SourceCursor(position: 0, fraction: 0, pass: 0, loops: 0, step: SourceCursor.one, length: 0)
    package var pitch = Pitch()
    package var transport = Transport()
    package var envelope = Envelope()
    package var routing = Routing()
    /// The voice's 3D state (`isOn` false: a 2D voice, and nothing in it is read).
    package var spatial = SpatialVoice(rateStep: 0)

    /// Virtual-voice state (`VirtualState`, decided by `VirtualVoices`).
    package var virtual = VirtualState()
    /// The 3D audibility of a positioned voice (`SpatialOutcome.audibility`: the largest of its speaker gains,
    /// excluding its own volume and fades), written by the spatial update every `SpatialUpdate.interval` frames,
    /// also while the voice is virtual (it must hear its source come closer). A 2D voice leaves it at 1.
    /// `VirtualVoices` reads it at its update frames: the value stored by then is the spatial update before.
    var spatialAudibility: Float = 1
    /// Frames between the start frame asked for and the one the voice started on (0: on time; `LateStart`),
    /// reported with its start and its end; at most `Int32.max` (12 hours at 48 kHz), in 4 bytes. It also fills
    /// the voice out to whole cache lines (896 bytes, 14 lines), so lanes on different cores never write the same
    /// line (`VoicePool` starts on a line; `LaneTests` checks the stride): add padding when a field changes.
    package var lateBy: Int32 = 0

    // Pattern matches rather than `==`: the synthesized Equatable goes through generic code that the
    // render path's @_noLocks check rejects in debug builds.
    var isFree: Bool { @_noLocks get { if case .free = state { true } else { false } } }
    var isScheduled: Bool { @_noLocks get { if case .scheduled = state { true } else { false } } }
    package var isPlaying: Bool { @_noLocks get { if case .playing = state { true } else { false } } }
    package var isPaused: Bool { @_noLocks get { if case .paused = state { true } else { false } } }

    @_noLocks
    package init(source: VoiceSource) {
        self.source = source
    }

    /// Frame at which the release has fully faded out.
    var releaseEnd: Int64 {
        @_noLocks get {
            transport.releaseStart == .max ? .max : transport.releaseStart + Int64(transport.releaseLength)
        }
    }

    /// The frame where the voice stops producing sound for good (natural end or end of release).
    package var stopFrame: Int64 { @_noLocks get { min(transport.naturalEnd, releaseEnd) } }

    /// Started by `frame`, not ended there, and not fading out for a stop, pause or steal: a voice the caps count
    /// (`VoiceStealing`, `VirtualVoices`); the others are left alone.
    @inline(__always)
    @_noLocks
    func isUnderway(at frame: Int64) -> Bool {
        transport.startFrame <= frame && stopFrame > frame && transport.releaseStart > frame
    }

    /// Gain multiplier of the release: 1 before it starts, falling to 0 at its end.
    @inline(__always)
    @_noLocks
    package func release(at frame: Int64) -> Float {
        if frame < transport.releaseStart { return 1 }
        if transport.releaseLength == 0 { return 0 }
        let d = frame - transport.releaseStart
        return d >= Int64(transport.releaseLength) ? 0 : 1 - Float(d) / Float(transport.releaseLength)
    }

    /// The scalar gain at `frame`: volume · fade-in · fade-out · attack · release, always in this order so that
    /// the constant and the per-sample paths give the same bits.
    @inline(__always)
    @_noLocks
    package func gain(at frame: Int64) -> Float {
        envelope.volume.value(at: frame) * envelope.fadeIn.value(at: frame) * fadeOut.value(at: frame)
            * envelope.attack.value(at: frame) * release(at: frame)
    }

    /// The scalar gain without the fader (`volume`): fade-in · fade-out · attack · release, what a pre-fader
    /// send carries (`AuxSend.preFader`).
    @inline(__always)
    @_noLocks
    func preFaderGain(at frame: Int64) -> Float {
        envelope.fadeIn.value(at: frame) * fadeOut.value(at: frame) * envelope.attack.value(at: frame)
            * release(at: frame)
    }

    /// Re-derives the natural end after anything that moves it (start, seek, rate or loop change), seen from
    /// output frame `now` (the frame the cursor is about to produce).
    @_noLocks
    mutating func updateNaturalEnd(now: Int64) {
        let from = max(now, transport.startFrame)
        if let frames = cursor.framesUntilEnd() {
            let (end, overflow) = from.addingReportingOverflow(frames)
            transport.naturalEnd = overflow ? .max : end
        } else {
            transport.naturalEnd = .max
        }
    }

    /// True when some gain or pan changes inside [start, end), so the block needs the per-sample path.
    /// (Inlined, like the voice's other small queries: called on a voice in the pool, a method that is not would
    /// be handed a copy of all its ~900 bytes.)
    @inline(__always)
    @_noLocks
    func gainVaries(in start: Int64, _ end: Int64) -> Bool {
        if envelope.volume.varies(in: start, end) { return true }
        if envelope.fadeIn.varies(in: start, end) { return true }
        if fadeOut.varies(in: start, end) { return true }
        if envelope.attack.varies(in: start, end) { return true }
        return transport.releaseStart < end && releaseEnd > start
    }

}
