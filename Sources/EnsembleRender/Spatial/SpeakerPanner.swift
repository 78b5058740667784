// Render thread: evaluated once per positioned voice per spatial update (`SpatialMath.evaluate`).
import EnsembleFormats

/// Where a positioned source is heard on the output's speakers: a direction in listener coordinates
/// (`ListenerSpace`: +x right, +y up, −z ahead) becomes one gain per output channel with Σg² = 1, so the
/// source's power does not depend on where it is.
///
/// **Stereo.** The pan is p = x / |d|, the lateral component of the unit direction: sin(azimuth)·cos(elevation),
/// with +1 hard right. It feeds the equal-power law L = cos((p+1)π/4), R = sin((p+1)π/4) (the same law as a
/// 2D track's pan, `PanMatrix`). This mapping is chosen because it has every property stereo needs without a
/// special case: a source behind at azimuth 180° − θ gets the gains of the source in front at θ (front and back
/// are mirrored, which two speakers cannot tell apart anyway) and crossing behind the listener moves p
/// smoothly through 0 instead of jumping from hard left to hard right as a wrapped azimuth would; elevation
/// shrinks |p| by cos(elevation) so a source overhead sits in the centre; and the zero direction (a source on
/// the listener) is simply p = 0. Right at the sides (|p| near 1) the law is flat in azimuth, which matches
/// how little a listener's lateral localisation changes there.
///
/// **5.1 and 7.1.** The horizontal direction's azimuth (atan2) falls between two adjacent speakers of the
/// ring and is panned between them with the constant-power law g₁ = cos(tπ/2), g₂ = sin(tπ/2), t the fraction
/// of the way from the first to the second (pairwise amplitude panning, as in VBAP on a ring). Speakers sit at
/// the ITU angles (positive = right): 5.1 after ITU-R BS.775-3 (centre 0°, left/right ±30°, surrounds ±110°,
/// the nominal value of its 100°–120°); 7.1 with sides ±90° and backs ±150° (BS.775-3 note 4 spreads more
/// than two surrounds evenly over 60°–150°; Dolby's 7.1 placement puts the sides at 90°–110° and the backs at
/// 135°–150°). Elevation moves power out of the pair and spreads it evenly over every full-range speaker: with
/// v = y²/|d|² the vertical share of the power, each full-range speaker gets g = √((1 − v)·gₚ² + v/N) (gₚ its
/// horizontal pair gain, N the number of full-range speakers), which keeps Σg² = 1 and meets the same even
/// spread from every side at the poles, so nothing jumps there. A zero direction counts as a pole (the source
/// is all around the listener). The LFE channel is never fed.
package enum SpeakerPanner {
    /// The gains for a source in `direction` (listener coordinates, any length; zero: on the listener).
    @_noLocks
    package static func gains(direction: Vector3, layout: SpeakerLayout) -> ChannelGains {
        switch layout {
        case .stereo: stereo(direction)
        case .surround51, .surround71: surround(direction, layout)
        }
    }

    /// Stereo: the equal-power law at p = x / |d|.
    @_noLocks
    package static func stereo(_ direction: Vector3) -> ChannelGains {
        let lengthSquared = direction.dot(direction)
        var p: Float = 0
        if lengthSquared > 0 {
            p = Swift.min(Swift.max(direction.x / RenderMath.sqrt(lengthSquared), -1), 1)
        }
        // cos((p+1)π/4) written as sin((1−p)π/4): exactly 0 at p = 1 and exactly equal to R at p = 0 and
        // mirrored at −p, where cos(π/2) in floating point would leave 4e-8 on the silent side.
        var g = ChannelGains()
        g[0] = RenderMath.sin((1 - p) * Self.quarterPi)
        g[1] = RenderMath.sin((1 + p) * Self.quarterPi)
        return g
    }

    /// 5.1 / 7.1: pairwise constant-power panning on the ring, elevation spread over all full-range speakers.
    @_noLocks
    package static func surround(_ direction: Vector3, _ layout: SpeakerLayout) -> ChannelGains {
        let count = ringCount(layout)
        let lengthSquared = direction.dot(direction)
        // The vertical share of the power: y² / |d|², exactly 0 on the horizontal plane (so a source at a
        // speaker's angle feeds that speaker alone), 1 at the poles and for the zero direction.
        let vertical: Float = lengthSquared > 0 ? Swift.min(direction.y * direction.y / lengthSquared, 1) : 1
        let horizontal = 1 - vertical
        let even = vertical / Float(count)

        var g = ChannelGains()
        // Every full-range speaker starts with its share of the vertical power; the pair adds its own below.
        for k in 0..<count { g[ring(layout, k).channel] = even }

        if horizontal > 0 {
            var azimuth = RenderMath.atan2(direction.x, -direction.z) * SoundCone.degreesPerRadian
            if azimuth < 0 { azimuth += 360 }
            if azimuth >= 360 { azimuth -= 360 }  // −tiny + 360 rounds to 360
            var k = 0
            var next: Float = 360
            while k < count {
                next = k + 1 < count ? ring(layout, k + 1).azimuth : 360
                if azimuth < next { break }
                k += 1
            }
            if k == count { k = count - 1 }  // unreachable for azimuth < 360; keeps a NaN direction in range
            let first = ring(layout, k)
            let second = ring(layout, k + 1 < count ? k + 1 : 0)
            let t = (azimuth - first.azimuth) / (next - first.azimuth)
            // cos(tπ/2) as sin((1−t)π/2): exactly 1 and 0 at a speaker, exactly equal halfway.
            let a = RenderMath.sin((1 - t) * Self.halfPi)
            let b = RenderMath.sin(t * Self.halfPi)
            g[first.channel] += horizontal * a * a
            g[second.channel] += horizontal * b * b
        }
        // Powers to amplitudes.
        for k in 0..<count {
            let channel = ring(layout, k).channel
            g[channel] = RenderMath.sqrt(g[channel])
        }
        return g
    }

    /// The number of full-range speakers on the ring: 5 for 5.1, 7 for 7.1 (2 for stereo, unused).
    @inline(__always) @_noLocks
    static func ringCount(_ layout: SpeakerLayout) -> Int {
        switch layout {
        case .stereo: 2
        case .surround51: 5
        case .surround71: 7
        }
    }

    /// The ring's `index`-th speaker clockwise from the front (azimuth in degrees 0…360, positive to the right)
    /// and its output channel in WAVE order (FL 0, FR 1, FC 2, LFE 3, then 5.1's SL 4, SR 5 or 7.1's BL 4, BR 5, SL 6, SR 7).
    @_noLocks
    package static func ring(_ layout: SpeakerLayout, _ index: Int) -> (azimuth: Float, channel: Int) {
        switch layout {
        case .stereo:
            return index == 0 ? (90, 1) : (270, 0)
        case .surround51:
            switch index {
            case 0: return (0, 2)     // FC
            case 1: return (30, 1)    // FR
            case 2: return (110, 5)   // SR (surround right)
            case 3: return (250, 4)   // SL (surround left, −110°)
            default: return (330, 0)  // FL (−30°)
            }
        case .surround71:
            switch index {
            case 0: return (0, 2)     // FC
            case 1: return (30, 1)    // FR
            case 2: return (90, 7)    // SR
            case 3: return (150, 5)   // BR
            case 4: return (210, 4)   // BL (−150°)
            case 5: return (270, 6)   // SL (−90°)
            default: return (330, 0)  // FL (−30°)
            }
        }
    }

    /// π/4.
    static var quarterPi: Float { @_noLocks get { 0.78539816339744830962 } }
    /// π/2.
    static var halfPi: Float { @_noLocks get { 1.57079632679489661923 } }
}
