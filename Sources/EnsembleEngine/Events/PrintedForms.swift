// Any thread: how the engine's handles and reports print, for a game's logs and a debugger's `po`.
import Foundation
import EnsembleFormats
import EnsembleRender

/// The name a sound is printed with: the last part of its path (or the name it was given).
private func shortName(_ sound: String) -> String {
    sound.split(separator: "/").last.map(String.init) ?? sound
}

extension Track: CustomStringConvertible {
    /// `Track "drums.wav"`.
    public var description: String { "Track \"\(shortName(sound.name))\"" }
}

extension SoundEffect: CustomStringConvertible {
    /// `SoundEffect "coin.wav"`.
    public var description: String { "SoundEffect \"\(shortName(name))\"" }
}

extension EffectInstance: CustomStringConvertible {
    /// `"coin.wav" firing 7.3`: the effect and the firing (voice slot and generation, unique while it sounds).
    public var description: String { "\"\(shortName(effect.name))\" firing \(slot).\(generation)" }
}

extension TrackEnd: CustomStringConvertible {
    /// `finished at frame 1100 (…)`, with `, 12 frames late` when its start was late.
    public var description: String {
        "\(reason.rawValue) at \(time)" + (lateBy > 0 ? ", started \(lateBy) frames late" : "")
    }
}

extension EffectCompletion: CustomStringConvertible {
    /// `"coin.wav" finished at frame 1100 (…)`.
    public var description: String {
        "\"\(shortName(effect.name))\" \(reason.rawValue) at \(time)" + (lateBy > 0 ? ", started \(lateBy) frames late" : "")
    }
}

extension EngineEvent: CustomStringConvertible {
    /// One line naming what happened to what, and when: `trackEnded Track "drums.wav" at frame 1100 (…): finished`.
    public var description: String {
        let kind = Mirror(reflecting: self).children.first?.label ?? "event"
        let late = { (frames: Int64) in frames > 0 ? ", \(frames) frames late" : "" }
        switch self {
        case let .trackStarted(track, at, lateBy): return "\(kind) \(track) at \(at)" + late(lateBy)
        case let .effectStarted(instance, at, lateBy): return "\(kind) \(instance) at \(at)" + late(lateBy)
        case let .trackEnded(track, at, reason, lateBy): return "\(kind) \(track) at \(at): \(reason.rawValue)" + late(lateBy)
        case let .effectEnded(instance, at, reason, lateBy):
            return "\(kind) \(instance) at \(at): \(reason.rawValue)" + late(lateBy)
        case let .trackVirtual(track, at, reason): return "\(kind) \(track) at \(at): \(reason.rawValue)"
        case let .effectVirtual(instance, at, reason): return "\(kind) \(instance) at \(at): \(reason.rawValue)"
        case let .trackPaused(track, at), let .trackAudible(track, at), let .trackStarved(track, at),
             let .trackBuffered(track, at):
            return "\(kind) \(track) at \(at)"
        case let .effectAudible(instance, at): return "\(kind) \(instance) at \(at)"
        case let .busPaused(bus, at), let .busResumed(bus, at): return "\(kind) \(bus) at \(at)"
        case let .commandApplied(id, at): return "\(kind) \(id) at \(at)"
        case let .commandDropped(id, at, reason): return "\(kind) \(id) at \(at): \(reason.rawValue)"
        case let .streamStarved(underruns, missing, at):
            return "\(kind) at \(at): \(underruns) underruns, \(missing) frames missing"
        case let .deviceLost(name, at), let .deviceReopened(name, at): return "\(kind) \"\(name)\" at \(at)"
        case let .outputLatencyIncreased(latency, at):
            return "\(kind) to \(String(format: "%.1f", latency * 1000)) ms at \(at)"
        case let .missed(count): return "\(kind) \(count) events"
        }
    }
}

private typealias P = PrintedText

extension StreamStatistics: CustomStringConvertible {
    /// `2 streams, 2 files open, 3 underruns (480 frames missing), 1.5 MB in rings`, then `, 1 error` and
    /// `, 2 files with non-finite samples` when there are any.
    public var description: String {
        func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
        return "\(count(openStreams, "stream")), \(count(openFiles, "file")) open, \(count(underruns, "underrun")) "
            + "(\(missingFrames) frames missing), \(ByteCountText.describe(ringBytes)) in rings"
            + (errors.isEmpty ? "" : ", \(count(errors.count, "error"))")
            + (nonFiniteSamples.isEmpty ? "" : ", \(count(nonFiniteSamples.count, "file")) with non-finite samples")
    }
}

extension PCMSource: CustomStringConvertible {
    /// `PCMSource "synth": 48 kHz 1 ch 2.000 s`.
    public var description: String {
        "PCMSource \(P.quoted(name)): \(P.rate(sampleRate)) \(channelCount) ch \(P.duration(Double(frameCount) / sampleRate))"
    }
}

extension StreamFile: CustomStringConvertible {
    /// `StreamFile "music.ogg": 44.1 kHz 2 ch 180.000 s (sndfile)`: the file's last path component, its format
    /// and length, and the codec family that decodes it.
    public var description: String {
        "StreamFile \(P.quoted(shortName(path))): \(P.rate(sampleRate)) \(channelCount) ch \(P.duration(duration)) (\(codec))"
    }
}

extension BusSettings: CustomStringConvertible {
    /// `BusSettings(volume: 0.8, pan: -0.5, muted, soloed)`: volume and pan, then `muted` and `soloed` when set.
    public var description: String {
        "BusSettings(volume: \(P.number(volume)), pan: \(P.number(pan))" + (mute ? ", muted" : "") + (solo ? ", soloed" : "") + ")"
    }
}

extension DeviceChange.Kind: CustomStringConvertible {
    /// `lost` or `reopened`.
    public var description: String {
        switch self {
        case .lost: return "lost"
        case .reopened: return "reopened"
        }
    }
}

extension DeviceChange: CustomStringConvertible {
    /// `"Built-in Audio" lost at frame 48000`, `reopened on "USB Audio" at frame 48000`.
    public var description: String {
        switch kind {
        case .lost: return "\(P.quoted(deviceName)) lost at frame \(frame)"
        case .reopened: return "reopened on \(P.quoted(deviceName)) at frame \(frame)"
        }
    }
}

extension DeviceLossPolicy: CustomStringConvertible {
    /// `hold`, `reopen the default device (retry every 0.5 s)`, `reopen "USB Audio" (retry every 0.5 s)`.
    public var description: String {
        switch self {
        case .hold: return "hold"
        case let .reopen(name, retry):
            return "reopen \(name.map(P.quoted) ?? "the default device") (retry every \(P.seconds(retry)))"
        }
    }
}

extension Sound.Storage: CustomStringConvertible {
    /// `int16`: the case's name.
    public var description: String {
        switch self {
        case .float32: return "float32"
        case .int16: return "int16"
        case .int8: return "int8"
        case .int24: return "int24"
        case .ima4: return "ima4"
        }
    }
}

extension Sound.StoragePreference: CustomStringConvertible {
    /// `compact` or `float32`: the case's name.
    public var description: String {
        switch self {
        case .compact: return "compact"
        case .float32: return "float32"
        }
    }
}

extension TrackChange: CustomStringConvertible {
    /// The change and its values, with units: `volume 0.5 over 0.1 s` (no ramp named: the smoothing time),
    /// `loops forever`, `seek to 12.5 s`, `stop over 2 s`, `position (1.0, 0.0, -2.0) over 0.1 s`, `sendLevel of
    /// send 1 to 0.5`, `filter VoiceFilter(lowpass, gain: 1, gainHF: 0.2)`, `filter off`, `spatial off`.
    public var description: String {
        func over(_ ramp: Double?) -> String { ramp.map { " over \(P.seconds($0))" } ?? "" }
        switch self {
        case let .volume(value, ramp): return "volume \(P.number(value))" + over(ramp)
        case let .pan(value, ramp): return "pan \(P.number(value))" + over(ramp)
        case let .rate(value): return "rate \(P.number(value))"
        case let .loops(count): return count < 0 ? "loops forever" : "loops \(count)"
        case let .seek(seconds): return "seek to \(P.seconds(seconds))"
        case let .pause(fade): return "pause" + over(fade)
        case let .resume(fade): return "resume" + over(fade)
        case let .stop(fade): return "stop" + over(fade)
        case let .spatial(source): return "spatial \(source.map { "\($0)" } ?? "off")"
        case let .position(position, ramp): return "position \(position)" + over(ramp)
        case let .velocity(velocity): return "velocity \(velocity)"
        case let .motion(position, velocity, ramp): return "motion to \(position) velocity \(velocity)" + over(ramp)
        case let .direction(direction, ramp): return "direction \(direction)" + over(ramp)
        case let .sends(sends): return "sends [\(sends.map(\.description).joined(separator: ", "))]"
        case let .sendLevel(send, level, ramp): return "sendLevel of send \(send) to \(P.number(level))" + over(ramp)
        case let .filter(filter, ramp): return "filter \(filter.map { "\($0)" } ?? "off")" + over(ramp)
        }
    }
}

extension EffectVariation: CustomStringConvertible {
    /// `EffectVariation(pitch: ±2 semitones, volume: up to -3 dB)`; `EffectVariation(none)` when nothing varies.
    public var description: String {
        var parts: [String] = []
        if pitch != 0 { parts.append("pitch: ±\(P.number(pitch)) semitones") }
        if volume != 0 { parts.append("volume: up to -\(P.number(volume)) dB") }
        return "EffectVariation(\(parts.isEmpty ? "none" : parts.joined(separator: ", ")))"
    }
}

extension EngineEvents: CustomStringConvertible {
    /// `EngineEvents(3 of 256 buffered, 0 dropped)`.
    public var description: String { "EngineEvents(\(pendingCount) of \(bufferSize) buffered, \(droppedCount) dropped)" }
}

extension EngineEvents.AsyncIterator: CustomStringConvertible {
    /// `EngineEvents.AsyncIterator(3 of 256 buffered)`.
    public var description: String {
        "EngineEvents.AsyncIterator(\(subscription.channel.count) of \(subscription.channel.capacity) buffered)"
    }
}

extension Engine.Configuration: CustomStringConvertible {
    /// `Engine.Configuration(48 kHz, maxVoices: 64, resampler: linear)`: the sample rate, then the members that are
    /// not at their defaults (times in seconds).
    public var description: String {
        let rest = P.fields(self, defaults: Engine.Configuration(),
                            units: ["smoothingTime": " s", "streamBufferDuration": " s", "livePreRoll": " s"],
                            skip: ["sampleRate"])
        return "Engine.Configuration(\(([P.rate(sampleRate)] + rest).joined(separator: ", ")))"
    }
}
