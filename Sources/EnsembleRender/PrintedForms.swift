// Any thread: how the render stage's values print, for a game's logs and a debugger's `po`.
import EnsembleFormats

private typealias P = PrintedText

extension ValuePolicy: CustomStringConvertible {
    /// `clamp`: the raw value, as scene files and the CLI spell it.
    public var description: String { rawValue }
}

extension ResamplerQuality: CustomStringConvertible {
    /// `sinc`: the raw value, as scene files and the CLI spell it.
    public var description: String { rawValue }
}

extension VirtualReason: CustomStringConvertible {
    /// `voiceCap`: the raw value, as `--events` spells it.
    public var description: String { rawValue }
}

extension EndReason: CustomStringConvertible {
    /// `finished`: the raw value, as `--events` spells it.
    public var description: String { rawValue }
}

extension CommandDropReason: CustomStringConvertible {
    /// `voiceEnded`: the raw value, as `--events` spells it.
    public var description: String { rawValue }
}

extension RateMode: CustomStringConvertible {
    /// `preservePitch`: the raw value, as scene files spell it.
    public var description: String { rawValue }
}

extension SpeakerLayout: CustomStringConvertible {
    /// `surround51`: the raw value, as scene files spell it.
    public var description: String { rawValue }
}

extension DistanceModel: CustomStringConvertible {
    /// `inverseClamped`: the raw value, as scene files spell it.
    public var description: String { rawValue }
}

extension BiquadShape: CustomStringConvertible {
    /// `lowshelf`: the raw value, as scene files spell it.
    public var description: String { rawValue }
}

extension EffectLimits.StealPolicy: CustomStringConvertible {
    /// `oldest`, `quietest`, `none`: the raw value, as scene files spell it.
    public var description: String { rawValue }
}

extension VoiceFilter.Kind: CustomStringConvertible {
    /// `lowpass`: the raw value, as scene files spell it.
    public var description: String { rawValue }
}

extension EffectLimits: CustomStringConvertible {
    /// `EffectLimits(maxInstances: 2, steal: oldest, cooldown: 0.25 s)`: the steal policy only with a maximum (or
    /// when it is not the default), the cooldown only when there is one; `EffectLimits(unlimited)` for none.
    public var description: String {
        var parts: [String] = []
        if let maxInstances { parts.append("maxInstances: \(maxInstances)") }
        if maxInstances != nil || steal != .oldest { parts.append("steal: \(steal)") }
        if cooldown != 0 { parts.append("cooldown: \(P.seconds(cooldown))") }
        return "EffectLimits(\(parts.isEmpty ? "unlimited" : parts.joined(separator: ", ")))"
    }
}

extension VoiceFilter: CustomStringConvertible {
    /// `VoiceFilter(lowpass, gain: 0.5, gainHF: 0.1)`: the kind, its gain and the shelves it uses (`gainHF` for
    /// a low-pass, `gainLF` for a high-pass, both for a band-pass).
    public var description: String {
        var parts = ["\(kind)", "gain: \(P.number(gain))"]
        if kind != .lowpass { parts.append("gainLF: \(P.number(gainLF))") }
        if kind != .highpass { parts.append("gainHF: \(P.number(gainHF))") }
        return "VoiceFilter(\(parts.joined(separator: ", ")))"
    }
}

extension AuxSend: CustomStringConvertible {
    /// `AuxSend(to bus 3, level: 0.5, pre-fader)`; a send's own filter follows (`filter: VoiceFilter(…)`), a
    /// post-fader send says nothing of it.
    public var description: String {
        var parts = ["to \(bus)", "level: \(P.number(level))"]
        if preFader { parts.append("pre-fader") }
        if let filter { parts.append("filter: \(filter)") }
        return "AuxSend(\(parts.joined(separator: ", ")))"
    }
}

extension CompressorSettings: CustomStringConvertible {
    /// `CompressorSettings(thresholdDB: -20, ratio: 8, attack: 0.001 s, sidechain: bus 2)`: threshold and ratio,
    /// then the members that are not at their defaults.
    public var description: String { "CompressorSettings" + fieldList }

    /// The members in parentheses, as `description` and `EffectSpec.compressor` print them.
    var fieldList: String {
        P.fieldList(self, defaults: CompressorSettings(), units: ["attack": " s", "release": " s", "lookahead": " s"],
                    always: ["thresholdDB", "ratio"])
    }
}

extension ReverbSettings: CustomStringConvertible {
    /// `ReverbSettings(preset: "Cave")` for a named preset's settings; otherwise `ReverbSettings(decayTime: 2.5 s,
    /// gain: 0.5)`: the decay time, then the members that are not at the "generic" defaults.
    public var description: String { "ReverbSettings" + fieldList }

    /// The members in parentheses, as `description` and `EffectSpec.reverb` print them.
    var fieldList: String {
        if let preset = Self.presets.first(where: { $0.settings == self }) { return "(preset: \(P.quoted(preset.name)))" }
        return P.fieldList(self, defaults: ReverbSettings(),
                           units: ["decayTime": " s", "reflectionsDelay": " s", "lateReverbDelay": " s", "preDelay": " s"],
                           always: ["decayTime"])
    }
}

extension EffectSpec: CustomStringConvertible {
    /// The effect and its parameters, with units: `filter(peaking, 1000 Hz, q: 0.7, gain: 6 dB)`,
    /// `graphicEQ(preset: "Rock")`, `delay(time: 0.25 s, feedback: 0.4, mix: 0.3)`, `limiter(ceiling: -1 dB,
    /// lookahead: 0.005 s, release: 0.1 s)`, `reverb(preset: "Cave")`, `compressor(thresholdDB: -24, ratio: 4)`.
    public var description: String {
        switch self {
        case let .filter(shape, frequency, q, gainDB):
            let usesGain = shape == .peaking || shape == .lowshelf || shape == .highshelf
            return "filter(\(shape), \(P.number(frequency)) Hz, q: \(P.number(q))"
                + (usesGain ? ", gain: \(P.number(gainDB)) dB" : "") + ")"
        case let .graphicEQ(gains):
            if let preset = GraphicEQ.presets.first(where: { $0.gains == gains }) {
                return "graphicEQ(preset: \(P.quoted(preset.name)))"
            }
            return "graphicEQ(gains: \(gains.map(P.number).joined(separator: " ")) dB)"
        case let .delay(time, feedback, mix):
            return "delay(time: \(P.seconds(time)), feedback: \(P.number(feedback)), mix: \(P.number(mix)))"
        case let .limiter(ceilingDB, lookahead, release):
            return "limiter(ceiling: \(P.number(ceilingDB)) dB, lookahead: \(P.seconds(lookahead)), release: \(P.seconds(release)))"
        case let .reverb(settings): return "reverb" + settings.fieldList
        case let .compressor(settings): return "compressor" + settings.fieldList
        case let .custom(effect): return "custom(parameters: \(effect.parameterCount))"
        }
    }
}

extension BiquadCoefficients: CustomStringConvertible {
    /// `BiquadCoefficients(b0: 0.2, b1: 0.4, b2: 0.2, a1: -0.6, a2: 0.3)` (a0 normalised to 1).
    public var description: String {
        "BiquadCoefficients(b0: \(P.number(b0)), b1: \(P.number(b1)), b2: \(P.number(b2)), a1: \(P.number(a1)), a2: \(P.number(a2)))"
    }
}

extension Listener: CustomStringConvertible {
    /// `Listener(position: (0.0, 0.0, 5.0), gain: 0.5)`: the position, then the members that are not OpenAL's
    /// defaults (velocity, `at`, `up`, gain).
    public var description: String { "Listener" + P.fieldList(self, defaults: Listener(), always: ["position"]) }
}

extension SpatialSource: CustomStringConvertible {
    /// `SpatialSource(position: (3.0, 0.0, -2.0), rolloff: 2, distanceModel: linear)`: the position, then the
    /// members that are not OpenAL's defaults (angles in degrees).
    public var description: String {
        "SpatialSource" + P.fieldList(self, defaults: SpatialSource(), units: ["coneInnerAngle": "°", "coneOuterAngle": "°"],
                                      always: ["position"])
    }
}

extension SpatialSettings: CustomStringConvertible {
    /// `SpatialSettings(distanceModel: inverseClamped, dopplerFactor: 1, speedOfSound: 343.3)`: all three.
    public var description: String {
        "SpatialSettings(distanceModel: \(distanceModel), dopplerFactor: \(P.number(dopplerFactor)), speedOfSound: \(P.number(speedOfSound)))"
    }
}

@_spi(Testing)
extension LoggedCommand: CustomStringConvertible {
    /// `voice command at frame 4096`: which kind of command the render side received, and the first frame of the
    /// block that received it.
    public var description: String {
        "\(Mirror(reflecting: command).children.first?.label ?? "\(command)") command at frame \(frame)"
    }
}

@_spi(Testing)
extension PlaneTestSignal: CustomStringConvertible {
    /// `PlaneTestSignal(lane 1 into bus 2, amplitude: 0.5, period: 101 frames)` (`into master` for bus 0).
    public var description: String {
        "PlaneTestSignal(lane \(lane) into \(bus == 0 ? "master" : "bus \(bus)"), amplitude: \(P.number(amplitude)), period: \(period) frames)"
    }
}
