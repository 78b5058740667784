// Control side: the checks every spatial setter runs before anything reaches the render side.
import EnsembleFormats

extension Vector3 {
    /// Throws unless every component is finite.
    package func check(_ name: String) throws(EngineError) {
        guard isFinite else {
            let bad = [x, y, z].first { !$0.isFinite } ?? 0
            throw .invalidParameter(name: name, value: Double(bad), expected: "finite x, y and z")
        }
    }
}

extension SpatialSource {
    /// Throws `EngineError.invalidParameter` naming the first property out of its documented range.
    package func check() throws(EngineError) {
        try position.check("position")
        try velocity.check("velocity")
        try direction.check("direction")
        try EngineError.check(referenceDistance, "referenceDistance", 0...Float.greatestFiniteMagnitude)
        try EngineError.check(maxDistance, "maxDistance", 0...Float.greatestFiniteMagnitude)
        try EngineError.check(rolloff, "rolloff", 0...Float.greatestFiniteMagnitude)
        try EngineError.check(coneInnerAngle, "coneInnerAngle", 0...360)
        try EngineError.check(coneOuterAngle, "coneOuterAngle", 0...360)
        try EngineError.check(coneOuterGain, "coneOuterGain", 0...1)
        try EngineError.check(coneOuterGainHF, "coneOuterGainHF", 0...1)
        try EngineError.check(airAbsorption, "airAbsorption", 0...10)
        try EngineError.check(minGain, "minGain", 0...1)
        try EngineError.check(maxGain, "maxGain", 0...1)
        guard minGain <= maxGain else {
            throw .invalidParameter(name: "minGain", value: Double(minGain), expected: "at most maxGain (\(maxGain))")
        }
    }
}

extension Listener {
    /// Throws `EngineError.invalidParameter` for a non-finite vector, a zero or parallel orientation, or a gain
    /// outside 0…1.
    package func check() throws(EngineError) {
        try position.check("listener position")
        try velocity.check("listener velocity")
        try at.check("listener at")
        try up.check("listener up")
        guard at.length > 0 else {
            throw .invalidParameter(name: "listener at", value: 0, expected: "a non-zero direction")
        }
        guard at.normalized.cross(up.normalized).length > 1e-6 else {
            throw .invalidParameter(name: "listener up", value: Double(up.length),
                                    expected: "a non-zero direction not parallel to at")
        }
        try EngineError.check(gain, "listener gain", 0...1)
    }
}

extension SpatialSettings {
    /// Throws `EngineError.invalidParameter` for a negative or non-finite doppler factor or a speed of sound
    /// that is not positive and finite.
    package func check() throws(EngineError) {
        try EngineError.check(dopplerFactor, "dopplerFactor", 0...Float.greatestFiniteMagnitude)
        guard speedOfSound.isFinite, speedOfSound > 0 else {
            throw .invalidParameter(name: "speedOfSound", value: Double(speedOfSound), expected: "more than 0")
        }
    }
}
