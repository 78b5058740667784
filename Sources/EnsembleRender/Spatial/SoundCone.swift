// Render thread: evaluated once per positioned voice per spatial update (`SpatialMath.evaluate`).
import EnsembleFormats

/// The gain and high-frequency gain a directional source's cone gives toward the listener.
package struct ConeAttenuation: BitwiseCopyable, Sendable {
    /// Multiplies the source's gain, `coneOuterGain`…1.
    package var gain: Float
    /// Multiplies the source's high-frequency gain (EFX `AL_CONE_OUTER_GAINHF`), `coneOuterGainHF`…1.
    package var gainHF: Float

    @inline(__always) @_noLocks
    package init(gain: Float, gainHF: Float) {
        self.gain = gain
        self.gainHF = gainHF
    }

    /// No attenuation: an omnidirectional source, or a listener inside the inner cone.
    package static var none: ConeAttenuation { @_noLocks get { ConeAttenuation(gain: 1, gainHF: 1) } }
}

/// Sound cones (OpenAL 1.1 specification §4.3.2, `AL_CONE_INNER_ANGLE`, `AL_CONE_OUTER_ANGLE`,
/// `AL_CONE_OUTER_GAIN`; EFX `AL_CONE_OUTER_GAINHF`), evaluated as OpenAL Soft 1.19.1 does in
/// `CalcAttnSourceParams`.
///
/// The angle is the one between the source's direction and the vector from the source to the listener; it is
/// doubled to compare with the cones' full (apex) angles. Inside the inner cone the gains are 1, outside the
/// outer cone they are the outer gains, and in between both are interpolated linearly in the angle (the
/// specification only says "interpolated"; linear is what OpenAL Soft does).
package enum SoundCone {
    /// The cone's attenuation toward the listener.
    /// - Parameters:
    ///   - direction: the source's facing direction, any length; zero makes the source omnidirectional.
    ///   - sourceToListener: the unit vector from the source to the listener, or zero when they coincide. Zero
    ///     gives an angle of 90° (full angle 180°), as in OpenAL Soft, where the dot product with the zero
    ///     vector is 0.
    ///   - innerAngle, outerAngle: full angles in degrees, 0…360.
    ///   - outerGain, outerGainHF: the gains outside the outer cone.
    @_noLocks
    package static func attenuation(direction: Vector3, sourceToListener: Vector3, innerAngle: Float, outerAngle: Float,
                            outerGain: Float, outerGainHF: Float) -> ConeAttenuation {
        let facing = direction.normalized
        // An inner cone of 360° covers every direction (OpenAL's default): skip the trigonometry, as Soft does.
        guard facing.dot(facing) > 0, innerAngle < 360 else { return .none }
        // Rounding can put the dot product of two unit vectors a hair outside −1…1, where acos is NaN.
        let cosine = Swift.min(Swift.max(facing.dot(sourceToListener), -1), 1)
        let angle = RenderMath.acos(cosine) * (2 * Self.degreesPerRadian)
        if !(angle > innerAngle) { return .none }
        if angle < outerAngle {
            let t = (angle - innerAngle) / (outerAngle - innerAngle)
            return ConeAttenuation(gain: 1 + (outerGain - 1) * t, gainHF: 1 + (outerGainHF - 1) * t)
        }
        return ConeAttenuation(gain: outerGain, gainHF: outerGainHF)
    }

    /// 180/π.
    static var degreesPerRadian: Float { @_noLocks get { 57.295779513082320876798 } }
}
