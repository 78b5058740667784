// Control side: reads SOFA (AES69) HRTF files through libmysofa.
import CMySofa
import Foundation

/// A SOFA file (`SimpleFreeFieldHRIR`) turned into an `HRTF` of OpenAL Soft's layout. libmysofa opens it at the
/// rate asked for (resampling, and normalising the loudness as it does for every set), and gives the filter for
/// any direction (its nearest measurements, interpolated). The set is sampled on a regular grid: 19 rings from
/// −90° to +90° every 10°, each with azimuths about 5° apart at the horizon (72·cos elevation, at least 1).
/// SOFA responses keep their onset in their taps (libmysofa leaves them as measured), so each one's onset
/// (two samples before its first tap within 20 dB of its peak) is moved into its delay: the blend between grid
/// directions then mixes aligned responses rather than combing, as with OpenAL Soft's minimum-phase sets.
enum SOFAFile {
    static let rings = 19

    static func read(_ bytes: [UInt8], path: String, sampleRate: Double) throws(HRTFError) -> HRTF {
        var length: Int32 = 0, code: Int32 = 0
        let opened = bytes.withUnsafeBufferPointer { p in
            p.baseAddress!.withMemoryRebound(to: CChar.self, capacity: p.count) {
                mysofa_open_data($0, p.count, Float(sampleRate), &length, &code)
            }
        }
        guard let easy = opened else { throw error(code, path) }
        defer { mysofa_close(easy) }
        guard length > 0, length <= 8192 else {
            throw .unsupported(path: path, what: "responses of \(length) taps (1…8192 are supported)")
        }
        let n = Int(length), taps = (n + 7) / 8 * 8
        var counts: [Int] = []
        for r in 0..<rings {
            let elevation = (-90 + 10 * Double(r)) * .pi / 180
            counts.append(max(1, Int((72 * cos(elevation)).rounded())))
        }
        let total = counts.reduce(0, +)
        var left = [Float](repeating: 0, count: total * taps), right = left
        var leftDelays = [Float](repeating: 0, count: total), rightDelays = leftDelays
        var l = [Float](repeating: 0, count: n), r = l
        var index = 0
        for (ring, count) in counts.enumerated() {
            let elevation = (-90 + 10 * Double(ring)) * .pi / 180
            for j in 0..<count {
                let azimuth = 2 * Double.pi * Double(j) / Double(count)
                // SOFA's axes: +x ahead, +y left, +z up.
                let x = Float(cos(elevation) * cos(azimuth)), y = Float(-cos(elevation) * sin(azimuth))
                let z = Float(sin(elevation))
                var dl: Float = 0, dr: Float = 0
                mysofa_getfilter_float(easy, x, y, z, &l, &r, &dl, &dr)
                let ol = onset(l), or = onset(r)
                for k in 0..<(n - ol) { left[index * taps + k] = l[k + ol] }
                for k in 0..<(n - or) { right[index * taps + k] = r[k + or] }
                leftDelays[index] = dl * Float(sampleRate) + Float(ol)
                rightDelays[index] = dr * Float(sampleRate) + Float(or)
                index += 1
            }
        }
        return HRTF(sampleRate: sampleRate, responseLength: taps, azimuthCounts: counts, measurementDistance: 1,
                    name: path, left: left, right: right, leftDelays: leftDelays, rightDelays: rightDelays)
    }

    /// Two samples before the first tap within 20 dB of the response's peak (0 for silence).
    static func onset(_ h: [Float]) -> Int {
        let peak = h.map(abs).max() ?? 0
        guard peak > 0 else { return 0 }
        let first = h.firstIndex { abs($0) >= 0.1 * peak } ?? 0
        return max(0, first - 2)
    }

    static func error(_ code: Int32, _ path: String) -> HRTFError {
        let unsupported: [Int32: String] = [
            Int32(MYSOFA_UNSUPPORTED_FORMAT): "a SOFA convention other than SimpleFreeFieldHRIR",
            Int32(MYSOFA_INVALID_COORDINATE_TYPE): "its coordinate type",
            Int32(MYSOFA_ONLY_EMITTER_WITH_ECI_SUPPORTED): "its emitters",
            Int32(MYSOFA_ONLY_DELAYS_WITH_IR_OR_MR_SUPPORTED): "its delays",
            Int32(MYSOFA_ONLY_THE_SAME_SAMPLING_RATE_SUPPORTED): "several sampling rates",
            Int32(MYSOFA_RECEIVERS_WITH_RCI_SUPPORTED): "its receivers",
            Int32(MYSOFA_RECEIVERS_WITH_CARTESIAN_SUPPORTED): "its receivers' coordinates",
            Int32(MYSOFA_ONLY_SOURCES_WITH_MC_SUPPORTED): "its sources",
        ]
        if let what = unsupported[code] { return .unsupported(path: path, what: what) }
        if code == Int32(MYSOFA_NO_MEMORY) { return .damaged(path: path, what: "too large to load") }
        return .damaged(path: path, what: "libmysofa cannot read it (error \(code))")
    }
}
