// Benchmark thread (the program's main thread is control and render thread at once): OpenAL Soft's Effects
// Extension (EFX: auxiliary effect slots, reverb, source filters and sends) as the peer of section 11.
import COpenAL
import Ensemble
import Foundation

/// OpenAL Soft's EFX through ALC_SOFT_loopback (48 kHz stereo float, 1024-frame blocks, only the render loop
/// timed), the peer of section 11. The EFX entry points are loaded with `alGetProcAddress`, as the
/// Effects Extension Guide prescribes (efx.h, which alext.h includes, declares their function-pointer types).
enum OpenALEnvironmentPeer {
    /// The EFX entry points this benchmark calls.
    struct EFX {
        let genEffects: LPALGENEFFECTS
        let deleteEffects: LPALDELETEEFFECTS
        let effecti: LPALEFFECTI
        let effectf: LPALEFFECTF
        let genSlots: LPALGENAUXILIARYEFFECTSLOTS
        let deleteSlots: LPALDELETEAUXILIARYEFFECTSLOTS
        let sloti: LPALAUXILIARYEFFECTSLOTI
        let genFilters: LPALGENFILTERS
        let deleteFilters: LPALDELETEFILTERS
        let filteri: LPALFILTERI
        let filterf: LPALFILTERF
    }

    /// nil when the library lacks an EFX entry point (or the loopback device, `OpenALPeer.functions`). Whether a
    /// device offers ALC_EXT_EFX is asked of the device itself in `run` (OpenAL Soft does not list it without one).
    static let efx: EFX? = {
        guard OpenALPeer.functions != nil else { return nil }
        func load<T>(_ name: String, _: T.Type) -> T? {
            guard let p = alGetProcAddress(name) else { return nil }
            return unsafeBitCast(p, to: T.self)
        }
        guard let genEffects = load("alGenEffects", LPALGENEFFECTS.self),
              let deleteEffects = load("alDeleteEffects", LPALDELETEEFFECTS.self),
              let effecti = load("alEffecti", LPALEFFECTI.self),
              let effectf = load("alEffectf", LPALEFFECTF.self),
              let genSlots = load("alGenAuxiliaryEffectSlots", LPALGENAUXILIARYEFFECTSLOTS.self),
              let deleteSlots = load("alDeleteAuxiliaryEffectSlots", LPALDELETEAUXILIARYEFFECTSLOTS.self),
              let sloti = load("alAuxiliaryEffectSloti", LPALAUXILIARYEFFECTSLOTI.self),
              let genFilters = load("alGenFilters", LPALGENFILTERS.self),
              let deleteFilters = load("alDeleteFilters", LPALDELETEFILTERS.self),
              let filteri = load("alFilteri", LPALFILTERI.self),
              let filterf = load("alFilterf", LPALFILTERF.self) else { return nil }
        return EFX(genEffects: genEffects, deleteEffects: deleteEffects, effecti: effecti, effectf: effectf,
                   genSlots: genSlots, deleteSlots: deleteSlots, sloti: sloti, genFilters: genFilters,
                   deleteFilters: deleteFilters, filteri: filteri, filterf: filterf)
    }()

    /// What the one auxiliary slot holds.
    enum SlotEffect {
        /// `AL_EFFECT_EAXREVERB` (or `AL_EFFECT_REVERB` where EAX reverb is refused) set to these parameters.
        case reverb(ReverbSettings)
        /// `AL_EFFECT_DEDICATED_DIALOGUE` (ALC_EXT_DEDICATED; falls back to the reverb): a slot that costs almost
        /// nothing itself, so that sending into it measures the sends.
        case cheap
    }

    /// One render set-up. Voice i plays `buffers[i % buffers.count]` looping, with `VoiceParams`' gain and pan
    /// when `voiceParams` (else gain 1, centre).
    struct Scene {
        var buffers: [(pcm: [Int16], stereo: Bool)]
        var voices: Int
        var voiceParams = true
        /// An auxiliary slot with this effect (nil: no slot at all).
        var slot: SlotEffect?
        /// Every source sends (send 0, no send filter: level 1) into the slot.
        var send = false
        /// A low-pass filter on every source's direct path with this gainHF (gain 1).
        var directGainHF: Float?
    }

    /// One run: its time per output frame and the effect the slot held.
    struct Result {
        /// CPU time of the rendering (calling) thread per output frame, ns.
        var nsPerFrame: Double
        /// Wall time of the render loop per output frame, ns.
        var wallNsPerFrame: Double
        /// The effect the slot really holds: "EAX reverb", "reverb", "dedicated dialogue" or nil (no slot).
        var effect: String?
    }

    /// The EAX-reverb parameters `ReverbSettings` has (the others stay at their EFX defaults), and the
    /// standard reverb's parameter of the same meaning.
    static func parameters(_ s: ReverbSettings) -> [(eax: Int32, standard: Int32, value: Double)] {
        [(AL_EAXREVERB_DENSITY, AL_REVERB_DENSITY, s.density), (AL_EAXREVERB_DIFFUSION, AL_REVERB_DIFFUSION, s.diffusion),
         (AL_EAXREVERB_GAIN, AL_REVERB_GAIN, s.gain), (AL_EAXREVERB_GAINHF, AL_REVERB_GAINHF, s.gainHF),
         (AL_EAXREVERB_DECAY_TIME, AL_REVERB_DECAY_TIME, s.decayTime),
         (AL_EAXREVERB_DECAY_HFRATIO, AL_REVERB_DECAY_HFRATIO, s.decayHFRatio),
         (AL_EAXREVERB_REFLECTIONS_GAIN, AL_REVERB_REFLECTIONS_GAIN, s.reflectionsGain),
         (AL_EAXREVERB_REFLECTIONS_DELAY, AL_REVERB_REFLECTIONS_DELAY, s.reflectionsDelay),
         (AL_EAXREVERB_LATE_REVERB_GAIN, AL_REVERB_LATE_REVERB_GAIN, s.lateReverbGain),
         (AL_EAXREVERB_LATE_REVERB_DELAY, AL_REVERB_LATE_REVERB_DELAY, s.lateReverbDelay)]
    }

    /// Renders `seconds` of the scene after 4 untimed warm-up blocks; the render loop's time per output frame,
    /// or nil when OpenAL Soft or its EFX is unusable.
    static func run(_ scene: Scene, seconds: Double) -> Result? {
        guard let fn = OpenALPeer.functions, let efx, let device = fn.open(nil) else { return nil }
        defer { alcCloseDevice(device) }
        guard fn.isSupported(device, 48000, ALCenum(ALC_STEREO_SOFT), ALCenum(ALC_FLOAT_SOFT)) != 0,
              alcIsExtensionPresent(device, "ALC_EXT_EFX") != 0 else { return nil }
        let n = scene.voices
        let attributes: [ALCint] = [ALC_FORMAT_CHANNELS_SOFT, ALC_STEREO_SOFT, ALC_FORMAT_TYPE_SOFT, ALC_FLOAT_SOFT,
                                    ALC_FREQUENCY, 48000, ALC_MONO_SOURCES, ALCint(n), ALC_STEREO_SOURCES, ALCint(n),
                                    ALC_MAX_AUXILIARY_SENDS, 1, 0]
        guard let context = alcCreateContext(device, attributes) else { return nil }
        defer { alcDestroyContext(context) }
        alcMakeContextCurrent(context)
        defer { alcMakeContextCurrent(nil) }
        _ = alGetError()

        var buffers = [ALuint](repeating: 0, count: scene.buffers.count)
        alGenBuffers(ALsizei(buffers.count), &buffers)
        defer { alDeleteBuffers(ALsizei(buffers.count), buffers) }
        for (k, b) in scene.buffers.enumerated() {
            b.pcm.withUnsafeBytes { bytes in
                alBufferData(buffers[k], b.stereo ? AL_FORMAT_STEREO16 : AL_FORMAT_MONO16, bytes.baseAddress,
                             ALsizei(bytes.count), 48000)
            }
        }

        // The slot and its effect.
        var effect: ALuint = 0, slot: ALuint = 0, effectName: String?
        if let kind = scene.slot {
            efx.genEffects(1, &effect)
            efx.genSlots(1, &slot)
            guard alGetError() == AL_NO_ERROR else { return nil }
            effectName = configure(effect, kind, efx)
            guard effectName != nil else { return nil }
            efx.sloti(slot, AL_EFFECTSLOT_EFFECT, ALint(effect))
            guard alGetError() == AL_NO_ERROR else { return nil }
        }
        defer {
            if scene.slot != nil {
                var s = slot, e = effect
                efx.deleteSlots(1, &s)
                efx.deleteEffects(1, &e)
            }
        }
        var filter: ALuint = 0
        if let hf = scene.directGainHF {
            efx.genFilters(1, &filter)
            efx.filteri(filter, AL_FILTER_TYPE, AL_FILTER_LOWPASS)
            efx.filterf(filter, AL_LOWPASS_GAIN, 1)
            efx.filterf(filter, AL_LOWPASS_GAINHF, hf)
            guard alGetError() == AL_NO_ERROR else { return nil }
        }
        defer { if scene.directGainHF != nil { var f = filter; efx.deleteFilters(1, &f) } }

        var sources = [ALuint](repeating: 0, count: n)
        alGenSources(ALsizei(n), &sources)
        guard alGetError() == AL_NO_ERROR else { return nil }
        defer {
            alSourceStopv(ALsizei(n), sources)
            alDeleteSources(ALsizei(n), sources)
        }
        for i in 0..<n {
            let s = sources[i]
            alSourcei(s, AL_BUFFER, ALint(buffers[i % buffers.count]))
            alSourcei(s, AL_LOOPING, AL_TRUE)
            alSourcei(s, AL_SOURCE_RELATIVE, AL_TRUE)
            let angle = (scene.voiceParams ? VoiceParams.pan(i) : 0) * Float.pi / 2
            alSource3f(s, AL_POSITION, sin(angle), 0, -cos(angle))
            alSourcef(s, AL_GAIN, scene.voiceParams ? VoiceParams.gain(i) : 1)
            if scene.send { alSource3i(s, AL_AUXILIARY_SEND_FILTER, ALint(slot), 0, AL_FILTER_NULL) }
            if scene.directGainHF != nil { alSourcei(s, AL_DIRECT_FILTER, ALint(filter)) }
        }
        guard alGetError() == AL_NO_ERROR else { return nil }
        alSourcePlayv(ALsizei(n), sources)

        let block = 1024
        let out = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
        defer { out.deallocate() }
        for _ in 0..<4 { fn.render(device, out, ALCsizei(block)) } // properties applied, mixer warm
        let total = max(block, Int(seconds * 48000))
        let t0 = now(), cpu0 = threadCPUSeconds()
        var done = 0
        while done < total {
            let k = min(block, total - done)
            fn.render(device, out, ALCsizei(k)) // OpenAL Soft mixes a loopback device on the calling thread
            done += k
        }
        let cpu = threadCPUSeconds() - cpu0, wall = now() - t0
        return Result(nsPerFrame: cpu * 1e9 / Double(total), wallNsPerFrame: wall * 1e9 / Double(total), effect: effectName)
    }

    /// Sets `effect` up as `kind`; the name of what it became, or nil when the library refused every choice.
    private static func configure(_ effect: ALuint, _ kind: SlotEffect, _ efx: EFX) -> String? {
        if case .cheap = kind {
            efx.effecti(effect, AL_EFFECT_TYPE, AL_EFFECT_DEDICATED_DIALOGUE)
            if alGetError() == AL_NO_ERROR { return "dedicated dialogue" }
        }
        let settings: ReverbSettings
        if case let .reverb(s) = kind { settings = s } else { settings = ReverbSettings() }
        efx.effecti(effect, AL_EFFECT_TYPE, AL_EFFECT_EAXREVERB)
        if alGetError() == AL_NO_ERROR {
            for p in parameters(settings) { efx.effectf(effect, ALenum(p.eax), Float(p.value)) }
            return alGetError() == AL_NO_ERROR ? "EAX reverb" : nil
        }
        efx.effecti(effect, AL_EFFECT_TYPE, AL_EFFECT_REVERB)
        guard alGetError() == AL_NO_ERROR else { return nil }
        for p in parameters(settings) { efx.effectf(effect, ALenum(p.standard), Float(p.value)) }
        return alGetError() == AL_NO_ERROR ? "reverb" : nil
    }
}
