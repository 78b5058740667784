// Made on the control side with the mixer (from an `HRTF`), read-only on the render thread: the blend runs once
// per positioned voice per spatial update that moves it.
import EnsembleFormats

/// An `HRTF` data set laid out for the render thread (plain buffers, no reference counting), and the blend
/// that turns a direction into the filter a voice convolves with, after OpenAL Soft 1.19's `GetHrtfCoeffs`:
/// the elevation picks the two nearest measured rings (evenly spaced from −90° to +90°), the azimuth the two
/// nearest responses on each, and the four are weighted bilinearly — taps and onset delays alike, the delays then
/// rounded to whole samples. The responses being minimum-phase (their delay taken out), blending them does not
/// comb; the delay carries the interaural time difference.
package struct HRIRTable: @unchecked Sendable {
    package let taps: Int
    let rings: Int
    let azimuthCounts: UnsafeMutablePointer<Int>
    let ringOffsets: UnsafeMutablePointer<Int>
    let left: UnsafeMutablePointer<Float>
    let right: UnsafeMutablePointer<Float>
    let leftDelays: UnsafeMutablePointer<Float>
    let rightDelays: UnsafeMutablePointer<Float>
    /// The longest onset delay of any direction, in whole samples (rounded up): the history a voice keeps.
    package let maxDelay: Int

    package init(_ set: HRTF) {
        taps = set.responseLength
        rings = set.azimuthCounts.count
        func copy<T>(_ values: [T]) -> UnsafeMutablePointer<T> {
            let p = UnsafeMutablePointer<T>.allocate(capacity: max(values.count, 1))
            p.initialize(from: values, count: values.count)
            return p
        }
        azimuthCounts = copy(set.azimuthCounts)
        ringOffsets = copy(set.ringOffsets)
        left = copy(set.left)
        right = copy(set.right)
        leftDelays = copy(set.leftDelays)
        rightDelays = copy(set.rightDelays)
        maxDelay = Int((set.leftDelays + set.rightDelays).max() ?? 0) + 1
    }

    package func deallocate() {
        azimuthCounts.deallocate()
        ringOffsets.deallocate()
        left.deallocate()
        right.deallocate()
        leftDelays.deallocate()
        rightDelays.deallocate()
    }

    /// Writes the filter for a source in `direction` (listener coordinates: +x right, +y up, −z ahead) into
    /// `left` and `right` (`taps` each) and returns each ear's delay in whole samples. A zero (or not finite)
    /// direction gives OpenAL Soft's pass-through: √½ on the first tap of both ears, no delay.
    @_noLocks
    package func blend(_ direction: Vector3, left outL: UnsafeMutablePointer<Float>,
                       right outR: UnsafeMutablePointer<Float>) -> (left: Int, right: Int) {
        for k in 0..<taps {
            outL[k] = 0
            outR[k] = 0
        }
        let horizontal = direction.x * direction.x + direction.z * direction.z
        let all = horizontal + direction.y * direction.y
        guard all > 0, all.isFinite else {
            outL[0] = 0.70710678
            outR[0] = 0.70710678
            return (0, 0)
        }
        let pi: Float = 3.14159265358979
        let elevation = RenderMath.atan2(direction.y, RenderMath.sqrt(horizontal))
        let azimuth = RenderMath.atan2(direction.x, -direction.z)
        // The ring below (or at) the elevation and the weight of the one above.
        let e = (pi / 2 + elevation) * Float(rings - 1) / pi
        var lower = Int(e)
        let eMu = e - Float(lower)
        if lower > rings - 1 { lower = rings - 1 }
        let upper = lower < rings - 1 ? lower + 1 : lower
        let (a0, a1, aMu0) = around(azimuth, ring: lower)
        let (b0, b1, aMu1) = around(azimuth, ring: upper)
        let w0 = (1 - eMu) * (1 - aMu0), w1 = (1 - eMu) * aMu0
        let w2 = eMu * (1 - aMu1), w3 = eMu * aMu1
        var dl: Float = 0, dr: Float = 0
        add(a0, w0, outL, outR, &dl, &dr)
        add(a1, w1, outL, outR, &dl, &dr)
        add(b0, w2, outL, outR, &dl, &dr)
        add(b1, w3, outL, outR, &dl, &dr)
        return (Int(dl + 0.5), Int(dr + 0.5))
    }

    /// Adds measured direction `index` weighted by `w` to the filter and the delays.
    @inline(__always)
    @_noLocks
    private func add(_ index: Int, _ w: Float, _ outL: UnsafeMutablePointer<Float>, _ outR: UnsafeMutablePointer<Float>,
                     _ dl: inout Float, _ dr: inout Float) {
        let l = left + index * taps, r = right + index * taps
        for k in 0..<taps {
            outL[k] += l[k] * w
            outR[k] += r[k] * w
        }
        dl += leftDelays[index] * w
        dr += rightDelays[index] * w
    }

    /// The two measured directions either side of `azimuth` (radians, clockwise from ahead) on `ring`, and
    /// the weight of the second.
    @inline(__always)
    @_noLocks
    private func around(_ azimuth: Float, ring: Int) -> (Int, Int, Float) {
        let tau: Float = 6.28318530717959
        let count = azimuthCounts[ring]
        let a = (tau + azimuth) * Float(count) / tau
        let i = Int(a)
        let mu = a - Float(i)
        let first = i % count
        return (ringOffsets[ring] + first, ringOffsets[ring] + (first + 1) % count, mu)
    }
}
