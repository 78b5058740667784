// Render thread (the spatial update, once per voice per 64 frames).
//
// THROWAWAY STUB by helper "spatial-mixer" so the mixer compiles and its tests run before helper "spatial-math"
// lands the real file: the integrator takes spatial-math's version of this file. It implements only what the
// mixer's tests rely on (OpenAL 1.1 §3.4.2 inverse clamped distance, §3.4.3 cones with EFX's outer HF gain,
// §3.5.2 doppler, an equal-power stereo pan of the horizontal direction); no air absorption, no other distance
// models, no surround panning.

/// What the spatial update turns one positioned source into (the render-side contract between helpers).
struct SpatialOutcome: BitwiseCopyable {
    /// Per output channel: pan law × distance gain × cone gain, clamped to min/max gain, × listener gain.
    var gains: ChannelGains
    /// Cone outer HF gain × air absorption, 0…1 (1: no filtering needed).
    var gainHF: Float
    /// Doppler factor on the voice's rate (1: none).
    var pitch: Float
    /// The largest of `gains`.
    var audibility: Float
}

/// The 3D model's math (stub: see the file's opening comment).
enum SpatialMath {
    @_noLocks
    static func evaluate(source: SpatialSource, position: Vector3, direction: Vector3, velocity: Vector3,
                         listener: Listener, settings: SpatialSettings, layout: SpeakerLayout) -> SpatialOutcome {
        let forward = listener.at.normalized
        let right = forward.cross(listener.up).normalized
        let up = right.cross(forward)
        let world = source.relative ? position : position - listener.position
        let rel = source.relative ? world : Vector3(world.dot(right), world.dot(up), -world.dot(forward))
        let distance = rel.length
        let ref = source.referenceDistance, maxD = source.maxDistance
        let d = min(max(distance, ref), maxD)
        let denominator = ref + source.rolloff * (d - ref)
        var g: Float = denominator > 0 ? ref / denominator : 1
        // Cone (OpenAL 1.1 §3.4.3 and EFX's outer HF gain): full inside the inner half-angle, the outer values
        // outside the outer one, linear in the angle between.
        var coneGain: Float = 1, coneHF: Float = 1
        let facing = direction.normalized
        if facing.dot(facing) > 0, distance > 0 {
            let toListener = (source.relative ? Vector3.zero - position : listener.position - position).normalized
            let angle = RenderMath.acos(min(max(facing.dot(toListener), -1), 1)) * (360 / Float.pi)
            if angle > source.coneOuterAngle {
                coneGain = source.coneOuterGain
                coneHF = source.coneOuterGainHF
            } else if angle > source.coneInnerAngle {
                let t = (angle - source.coneInnerAngle) / (source.coneOuterAngle - source.coneInnerAngle)
                coneGain = 1 + (source.coneOuterGain - 1) * t
                coneHF = 1 + (source.coneOuterGainHF - 1) * t
            }
        }
        g = min(max(g * coneGain, source.minGain), source.maxGain) * listener.gain
        let x: Float = distance > 0 ? min(max(rel.x / distance, -1), 1) : 0
        let angle = (x + 1) * (Float.pi / 4)
        var gains = ChannelGains()
        gains[0] = g * (x >= 1 ? 0 : RenderMath.cos(angle))
        gains[1] = g * (x <= -1 ? 0 : RenderMath.sin(angle))
        var pitch: Float = 1
        if settings.dopplerFactor > 0 {
            let toListener = source.relative ? Vector3.zero - position : listener.position - position
            let l = toListener.length
            if l > 0 {
                let ss = settings.speedOfSound, df = settings.dopplerFactor
                let vls = min(listener.velocity.dot(toListener) / l, ss / df)
                let vss = min(velocity.dot(toListener) / l, ss / df)
                let den = ss - df * vss
                pitch = den > 0 ? (ss - df * vls) / den : 4
            }
        }
        return SpatialOutcome(gains: gains, gainHF: coneHF, pitch: pitch, audibility: max(gains[0], gains[1]))
    }
}
