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
