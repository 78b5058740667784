// Render thread: evaluated once per positioned voice per spatial update (`SpatialMath.evaluate`).
import EnsembleFormats

/// Where a positioned source is heard on the output's speakers: a direction in listener coordinates
/// (`ListenerSpace`: +x right, +y up, −z ahead) becomes one gain per output channel with Σg² = 1, so the
/// source's power does not depend on where it is. Stereo: the equal-power law of the 2D pan on p = x / |d|
/// (front and back mirrored, no jump behind the listener). 5.1 and 7.1: constant-power pairwise panning between
/// adjacent speakers at the ITU angles, elevation spreading power evenly over the full-range speakers; the LFE
/// channel is never fed. A zero direction is p = 0 (stereo) or a pole (surround).
/// Design: the "3D sound" article (Ensemble.docc/SpatialAudio.md, "Panning").
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
