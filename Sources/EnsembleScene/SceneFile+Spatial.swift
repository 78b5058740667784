// Control side (the thread loading the scene): the 3D keys of a scene file, decoded strictly and checked.
import Foundation
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput

/// The 3D keys of a scene file: the top-level `listener`, `distanceModel`, `dopplerFactor`, `speedOfSound`
/// and `channels`, and the keys that place a track or an effect (`SpatialEntry`).
///
/// ```json
/// { "channels": 6, "distanceModel": "inverseClamped", "dopplerFactor": 1, "speedOfSound": 343.3,
///   "listener": { "position": [0, 0, 0], "at": [0, 0, -1], "up": [0, 1, 0], "velocity": [0, 0, 0], "gain": 1 },
///   "tracks": [ { "file": "car.wav", "position": [-60, 0, -5], "velocity": [20, 0, 0], "referenceDistance": 4 } ],
///   "effects": [ { "file": "step.wav", "at": 1, "position": [2, 0, 0], "relative": true } ] }
/// ```
/// Ranges follow OpenAL 1.1 (§4.3.2 source properties, §3.4 distance models, §3.5.2 doppler) and EFX (cone
/// outer HF gain, air absorption factor), as `SpatialSource`, `Listener` and `SpatialSettings` document them.
extension SceneFile {
    /// The keys of a track or effect entry that place it in 3D; any of them makes the entry positioned.
    package struct SpatialEntry: Decodable {
        package var position, velocity, direction: [Double]?
        package var relative: Bool?
        package var referenceDistance, maxDistance, rolloff: Double?
        package var coneInnerAngle, coneOuterAngle, coneOuterGain, coneOuterGainHF: Double?
        package var airAbsorption, minGain, maxGain: Double?
        package var distanceModel: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case position, velocity, direction, relative, referenceDistance, maxDistance, rolloff, coneInnerAngle,
                 coneOuterAngle, coneOuterGain, coneOuterGainHF, airAbsorption, minGain, maxGain, distanceModel
        }

        /// Decodes only these keys; the entry that holds them (`TrackEntry`, `EffectEntry`) rejects unknown ones.
        package init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            position = try c.decodeIfPresent([Double].self, forKey: .position)
            velocity = try c.decodeIfPresent([Double].self, forKey: .velocity)
            direction = try c.decodeIfPresent([Double].self, forKey: .direction)
            relative = try c.decodeIfPresent(Bool.self, forKey: .relative)
            referenceDistance = try c.decodeIfPresent(Double.self, forKey: .referenceDistance)
            maxDistance = try c.decodeIfPresent(Double.self, forKey: .maxDistance)
            rolloff = try c.decodeIfPresent(Double.self, forKey: .rolloff)
            coneInnerAngle = try c.decodeIfPresent(Double.self, forKey: .coneInnerAngle)
            coneOuterAngle = try c.decodeIfPresent(Double.self, forKey: .coneOuterAngle)
            coneOuterGain = try c.decodeIfPresent(Double.self, forKey: .coneOuterGain)
            coneOuterGainHF = try c.decodeIfPresent(Double.self, forKey: .coneOuterGainHF)
            airAbsorption = try c.decodeIfPresent(Double.self, forKey: .airAbsorption)
            minGain = try c.decodeIfPresent(Double.self, forKey: .minGain)
            maxGain = try c.decodeIfPresent(Double.self, forKey: .maxGain)
            distanceModel = try c.decodeIfPresent(String.self, forKey: .distanceModel)
        }

        /// The names of the keys given, in `CodingKeys` order.
        var givenKeys: [String] {
            let given: [(CodingKeys, Bool)] = [
                (.position, position != nil), (.velocity, velocity != nil), (.direction, direction != nil),
                (.relative, relative != nil), (.referenceDistance, referenceDistance != nil),
                (.maxDistance, maxDistance != nil), (.rolloff, rolloff != nil), (.coneInnerAngle, coneInnerAngle != nil),
                (.coneOuterAngle, coneOuterAngle != nil), (.coneOuterGain, coneOuterGain != nil),
                (.coneOuterGainHF, coneOuterGainHF != nil), (.airAbsorption, airAbsorption != nil),
                (.minGain, minGain != nil), (.maxGain, maxGain != nil), (.distanceModel, distanceModel != nil),
            ]
            return given.filter { $0.1 }.map { $0.0.stringValue }
        }

        /// The checked source, nil when no 3D key was given (a 2D entry). `key` is the entry's path (`tracks[2]`);
        /// `hasPan` says whether the entry gave a `pan`, which a positioned entry does not use.
        package func source(_ key: String, hasPan: Bool, path: String) throws(SceneError) -> SpatialSource? {
            let given = givenKeys
            guard let first = given.first else { return nil }
            if hasPan {
                throw SceneError(path: path, "\(key).pan: not used by a positioned \(key.hasPrefix("tracks") ? "track" : "effect") "
                                 + "(it has \(first)); give either pan or 3D keys")
            }
            let check = SpatialCheck(path: path)
            var s = SpatialSource()
            if let v = try check.vector(position, "\(key).position") { s.position = v }
            if let v = try check.vector(velocity, "\(key).velocity") { s.velocity = v }
            if let v = try check.vector(direction, "\(key).direction") { s.direction = v }
            if let relative { s.relative = relative }
            if let v = try check.number(referenceDistance, "\(key).referenceDistance", atLeast: 0) { s.referenceDistance = v }
            if let v = try check.number(maxDistance, "\(key).maxDistance", atLeast: 0) { s.maxDistance = v }
            if let v = try check.number(rolloff, "\(key).rolloff", atLeast: 0) { s.rolloff = v }
            if let v = try check.number(coneInnerAngle, "\(key).coneInnerAngle", 0...360, "0…360 degrees") { s.coneInnerAngle = v }
            if let v = try check.number(coneOuterAngle, "\(key).coneOuterAngle", 0...360, "0…360 degrees") { s.coneOuterAngle = v }
            if let v = try check.number(coneOuterGain, "\(key).coneOuterGain", 0...1, "0…1") { s.coneOuterGain = v }
            if let v = try check.number(coneOuterGainHF, "\(key).coneOuterGainHF", 0...1, "0…1") { s.coneOuterGainHF = v }
            if let v = try check.number(airAbsorption, "\(key).airAbsorption", 0...10, "0…10") { s.airAbsorption = v }
            if let v = try check.number(minGain, "\(key).minGain", 0...1, "0…1") { s.minGain = v }
            if let v = try check.number(maxGain, "\(key).maxGain", 0...1, "0…1") { s.maxGain = v }
            if s.minGain > s.maxGain {
                throw SceneError(path: path, "\(key).minGain: \(s.minGain) is more than maxGain (\(s.maxGain))")
            }
            if let model = distanceModel { s.distanceModel = try check.distanceModel(model, "\(key).distanceModel") }
            return s
        }
    }

    /// The `listener` object, at the top level (the listener at the start) and in a timeline entry (a change).
    package struct ListenerEntry: Decodable {
        package var position, at, up, velocity: [Double]?
        package var gain: Double?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case position, at, up, velocity, gain
        }

        package init(from decoder: Decoder) throws {
            let c = try strictContainer(decoder, CodingKeys.self)
            position = try c.decodeIfPresent([Double].self, forKey: .position)
            at = try c.decodeIfPresent([Double].self, forKey: .at)
            up = try c.decodeIfPresent([Double].self, forKey: .up)
            velocity = try c.decodeIfPresent([Double].self, forKey: .velocity)
            gain = try c.decodeIfPresent(Double.self, forKey: .gain)
        }

        /// The checked values given (nil for each key not given); `key` is the object's path.
        package func change(_ key: String, path: String) throws(SceneError) -> Scene.ListenerChange {
            let check = SpatialCheck(path: path)
            return Scene.ListenerChange(
                position: try check.vector(position, "\(key).position"), at: try check.vector(at, "\(key).at"),
                up: try check.vector(up, "\(key).up"), velocity: try check.vector(velocity, "\(key).velocity"),
                gain: try check.number(gain, "\(key).gain", 0...1, "0…1"))
        }
    }

    /// The top-level 3D keys: the listener, the engine's `SpatialSettings` and the speaker layout.
    func validateSpatial(into scene: inout Scene, path: String) throws(SceneError) {
        let check = SpatialCheck(path: path)
        if let listener {
            let change = try listener.change("listener", path: path)
            scene.listener = try check.listener(change.applied(to: Listener()), "listener")
        }
        if let model = distanceModel { scene.spatialSettings.distanceModel = try check.distanceModel(model, "distanceModel") }
        if let v = try check.number(dopplerFactor, "dopplerFactor", atLeast: 0) { scene.spatialSettings.dopplerFactor = v }
        if let v = speedOfSound {
            let speed = Float(v)
            guard speed.isFinite, speed > 0 else {
                throw SceneError(path: path, "speedOfSound: \(v) is out of range (more than 0 units per second)")
            }
            scene.spatialSettings.speedOfSound = speed
        }
        if let channels {
            guard let layout = SpeakerLayout(channelCount: Int(exactly: channels) ?? 0) else {
                let shown = channels == channels.rounded() && abs(channels) < 1e15 ? "\(Int(channels))" : "\(channels)"
                throw SceneError(path: path, "channels: \(shown) is not 2 (stereo), 6 (5.1) or 8 (7.1)")
            }
            scene.speakerLayout = layout
        }
    }
}

extension Scene {
    /// What a timeline `listener` entry changes (nil: kept as it was), or the top-level `listener` key's values.
    public struct ListenerChange: Sendable, Equatable {
        /// The listener's new position; nil keeps it.
        public var position: Vector3?
        /// The direction it faces; nil keeps it.
        public var at: Vector3?
        /// Its up direction; nil keeps it.
        public var up: Vector3?
        /// Its velocity (for doppler); nil keeps it.
        public var velocity: Vector3?
        /// Its gain, 0…1; nil keeps it.
        public var gain: Float?

        /// A change of the members given.
        public init(position: Vector3? = nil, at: Vector3? = nil, up: Vector3? = nil, velocity: Vector3? = nil,
                    gain: Float? = nil) {
            self.position = position
            self.at = at
            self.up = up
            self.velocity = velocity
            self.gain = gain
        }

        /// True when no member is given.
        public var isEmpty: Bool { position == nil && at == nil && up == nil && velocity == nil && gain == nil }

        /// `listener` with the members given replaced.
        public func applied(to listener: Listener) -> Listener {
            var l = listener
            if let position { l.position = position }
            if let at { l.at = at }
            if let up { l.up = up }
            if let velocity { l.velocity = velocity }
            if let gain { l.gain = gain }
            return l
        }
    }
}

/// The checks shared by the 3D keys, each failing with one line that names the key's path.
struct SpatialCheck {
    let path: String

    private func fail(_ message: String) -> SceneError { SceneError(path: path, message) }

    /// A list of exactly three numbers that stay finite as `Float`s.
    func vector(_ values: [Double]?, _ key: String) throws(SceneError) -> Vector3? {
        guard let values else { return nil }
        guard values.count == 3 else {
            throw fail("\(key): expected a list of 3 numbers [x, y, z], got \(values.count)")
        }
        for (i, v) in values.enumerated() where !Float(v).isFinite {
            throw fail("\(key)[\(i)]: \(v) is out of range (a finite number)")
        }
        return Vector3(Float(values[0]), Float(values[1]), Float(values[2]))
    }

    /// A number in `range` (described as `text`).
    func number(_ value: Double?, _ key: String, _ range: ClosedRange<Double>, _ text: String) throws(SceneError) -> Float? {
        guard let value else { return nil }
        guard value.isFinite, range.contains(value) else { throw fail("\(key): \(value) is out of range \(text)") }
        return Float(value)
    }

    /// A number ≥ `minimum` that stays finite as a `Float`.
    func number(_ value: Double?, _ key: String, atLeast minimum: Double) throws(SceneError) -> Float? {
        try number(value, key, minimum...Double(Float.greatestFiniteMagnitude), "(at least \(Int(minimum)))")
    }

    /// One of `DistanceModel`'s names.
    func distanceModel(_ name: String, _ key: String) throws(SceneError) -> DistanceModel {
        guard let model = DistanceModel(rawValue: name) else {
            let names = DistanceModel.allCases.map(\.rawValue).joined(separator: ", ")
            throw fail("\(key): \"\(name)\" is not a distance model (one of \(names))")
        }
        return model
    }

    /// A listener whose orientation can be used: `at` not zero, `up` not zero nor parallel to `at`
    /// (OpenAL 1.1 §4.2.1 `AL_ORIENTATION` needs two independent vectors). `key` names where it came from.
    func listener(_ l: Listener, _ key: String) throws(SceneError) -> Listener {
        guard l.at.length > 0 else { throw fail("\(key).at: [0, 0, 0] is not a direction") }
        guard l.up.length > 0 else { throw fail("\(key).up: [0, 0, 0] is not a direction") }
        guard l.at.normalized.cross(l.up.normalized).length > 1e-6 else {
            throw fail("\(key).up: \(l.up) is parallel to at \(l.at) (the orientation needs two directions)")
        }
        return l
    }
}
