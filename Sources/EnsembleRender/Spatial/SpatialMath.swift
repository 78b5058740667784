// Render thread: once per positioned voice per spatial update (every `SpatialUpdate.interval` frames and when
// a voice starts); the tests call it directly.
import EnsembleFormats

/// What one spatial update decides for one positioned voice.
package struct SpatialOutcome: BitwiseCopyable, Sendable {
    /// Per output channel: pan law × distance gain × cone gain, clamped to the source's minGain…maxGain as
    /// OpenAL Soft clamps, × listener gain. Excludes the voice's own volume and fades.
    package var gains: ChannelGains
    /// Cone outer HF gain × air absorption, 0…1 (1: no filtering needed); the gain of a `HighShelf` at 5 kHz.
    package var gainHF: Float
    /// The doppler factor on the voice's rate (1: none), `Doppler.minimumPitch`…`Doppler.maximumPitch`.
    package var pitch: Float
    /// The largest of `gains` (for virtual voices).
    package var audibility: Float

    @inline(__always) @_noLocks
    package init(gains: ChannelGains, gainHF: Float, pitch: Float, audibility: Float) {
        self.gains = gains
        self.gainHF = gainHF
        self.pitch = pitch
        self.audibility = audibility
    }
}

/// The 3D model of OpenAL 1.1 with EFX's cone HF gain and air absorption, as OpenAL Soft 1.19.1 evaluates it
/// in `CalcAttnSourceParams` (`Alc/ALu.c`), for one source and one listener. In order: listener coordinates
/// (`ListenerSpace`), distance attenuation (`DistanceModel.attenuation`), the cone (`SoundCone`), the min/max clamp
/// and the listener's gain, the HF gain (`AirAbsorption`), the doppler pitch (`Doppler`), the speaker gains
/// (`SpeakerPanner`). Where it differs from Soft by design (volume outside the clamp, panning, a source on the
/// listener): the "3D sound" article (Ensemble.docc/SpatialAudio.md, "What differs from OpenAL Soft").
package enum SpatialMath {
    /// The outcome for `source` at `position`, facing `direction`, moving at `velocity` (these three take
    /// precedence over the ones in `source`; they are in listener coordinates when `source.relative`).
    @_noLocks
    package static func evaluate(source: SpatialSource, position: Vector3, direction: Vector3, velocity: Vector3,
                         listener: Listener, settings: SpatialSettings, layout: SpeakerLayout,
                         binaural: Bool = false) -> SpatialOutcome {
        evaluate(source: source, position: position, direction: direction, velocity: velocity, listener: listener,
                 space: ListenerSpace(listener), settings: settings, layout: layout, binaural: binaural)
    }

    /// `evaluate` with the listener's coordinate frame made already (`ListenerSpace(listener)`): the mixer makes
    /// it once per listener change, not once per voice.
    @_noLocks
    package static func evaluate(source: SpatialSource, position: Vector3, direction: Vector3, velocity: Vector3,
                         listener: Listener, space: ListenerSpace, settings: SpatialSettings,
                         layout: SpeakerLayout, binaural: Bool = false) -> SpatialOutcome {
        let listenerVelocity = space.vector(listener.velocity)
        let here: Vector3
        let facing: Vector3
        let moving: Vector3
        if source.relative {
            here = position
            facing = direction
            // OpenAL Soft 1.19: a relative source's velocity is relative to the listener's, so a source carried
            // along with a moving listener has no doppler shift.
            moving = velocity + listenerVelocity
        } else {
            here = space.point(position)
            facing = space.vector(direction)
            moving = space.vector(velocity)
        }

        let distance = here.length
        // The unit vector from the listener to the source (zero when they coincide) and its opposite.
        let toSource = distance > 0 ? here * (1 / distance) : .zero
        let sourceToListener = Vector3.zero - toSource

        let model = source.distanceModel ?? settings.distanceModel
        let attenuation = model.attenuation(distance: distance, reference: source.referenceDistance,
                                            max: source.maxDistance, rolloff: source.rolloff)
        let cone = SoundCone.attenuation(direction: facing, sourceToListener: sourceToListener,
                                         innerAngle: source.coneInnerAngle, outerAngle: source.coneOuterAngle,
                                         outerGain: source.coneOuterGain, outerGainHF: source.coneOuterGainHF)
        let clamped = Swift.min(Swift.max(attenuation.gain * cone.gain, source.minGain), source.maxGain)
        let gain = clamped * listener.gain

        let air = AirAbsorption.gainHF(modelDistance: attenuation.distance, reference: source.referenceDistance,
                                       rolloff: source.rolloff, factor: source.airAbsorption)
        let pitch = Doppler.pitch(sourceVelocity: moving, listenerVelocity: listenerVelocity,
                                  sourceToListener: sourceToListener, factor: settings.dopplerFactor,
                                  speedOfSound: settings.speedOfSound)

        // Headphones (`binaural`): no panning; the whole gain goes to slot 2, the input of the head-related
        // filters (`HRTFVoices.mix`), the speaker slots 0 and 1 staying 0.
        var gains = ChannelGains()
        if binaural { gains[2] = 1 } else { gains = SpeakerPanner.gains(direction: toSource, layout: layout) }
        var loudest: Float = 0
        // All eight: channels past the layout's count are 0 and stay 0 (and `channelCount` is not `@_noLocks`).
        for channel in 0..<ChannelGains.capacity {
            let g = gains[channel] * gain
            gains[channel] = g
            loudest = Swift.max(loudest, g)
        }
        return SpatialOutcome(gains: gains, gainHF: cone.gainHF * air, pitch: pitch, audibility: loudest)
    }
}
