import Foundation
import EnsembleFormats

/// A 10-band graphic equaliser: peaking biquads (RBJ, Q = √2, one octave wide) at the ISO octave centres
/// 31.5 Hz … 16 kHz, with the 22 presets of the iPod / iTunes equaliser.
///
/// A preset's band gains are the response the equaliser *measures* at each band centre, not the raw settings
/// of its filters: neighbouring one-octave bands overlap (a +6 dB band adds about +1.6 dB one octave away), so
/// the section gains are solved on the control side (a few Newton steps on the analytic response, in Double)
/// until the combined response at every centre equals the table within 0.001 dB. Bands whose centre lies above
/// 0.45 × the sample rate (16 kHz at rates below 35.6 kHz) are left out and their gains ignored.
public enum GraphicEQ {
    /// The ten band centre frequencies in Hz, lowest first (the ISO octave centres 31.5 Hz … 16 kHz).
    public static let bandCentres: [Double] = [31.5, 63, 125, 250, 500, 1000, 2000, 4000, 8000, 16000]
    /// The quality factor of every band's peaking filter, √2 (a bandwidth of one octave).
    public static let q = 2.0.squareRoot()

    /// The presets, in display order: name (the iPod's spelling) and gain in dB at each of `bandCentres`.
    ///
    /// Where the numbers come from: Apple does not publish its presets' gains. These are the iTunes/iPod
    /// presets to 0.01 dB as tabulated in public open-source equaliser code (read off iTunes' equaliser);
    /// several other public tables of "the iTunes presets" round the same curves to 0.5 dB and agree with these
    /// within 1 dB. Flat is all zeros by definition. None of the 22 is our own voicing.
    public static let presets: [(name: String, gains: [Double])] = [
        ("Flat",           [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
        ("Acoustic",       [5, 4.9, 3.95, 1.05, 2.15, 1.75, 3.5, 4.1, 3.55, 2.15]),
        ("Bass Booster",   [5.5, 4.25, 3.5, 2.5, 1.25, 0, 0, 0, 0, 0]),
        ("Bass Reducer",   [-5.5, -4.25, -3.5, -2.5, -1.25, 0, 0, 0, 0, 0]),
        ("Classical",      [4.75, 3.75, 3, 2.5, -1.5, -1.5, 0, 2.25, 3.25, 3.75]),
        ("Dance",          [3.57, 6.55, 4.99, 0, 1.92, 3.65, 5.15, 4.54, 3.59, 0]),
        ("Deep",           [4.95, 3.55, 1.75, 1, 2.85, 2.5, 1.45, -2.15, -3.55, -4.6]),
        ("Electronic",     [4.25, 3.8, 1.2, 0, -2.15, 2.25, 0.85, 1.25, 3.95, 4.8]),
        ("Hip-Hop",        [5, 4.25, 1.5, 3, -1, -1, 1.5, -0.5, 2, 3]),
        ("Jazz",           [4, 3, 1.5, 2.25, -1.5, -1.5, 0, 1.5, 3, 3.75]),
        ("Latin",          [4.5, 3, 0, 0, -1.5, -1.5, -1.5, 0, 3, 4.5]),
        ("Loudness",       [6, 4, 0, 0, -2, 0, -1, -5, 5, 1]),
        ("Lounge",         [-3, -1.5, -0.5, 1.5, 4, 2.5, 0, -1.5, 2, 1]),
        ("Piano",          [3, 2, 0, 2.5, 3, 1.5, 3.5, 4.5, 3, 3.5]),
        ("Pop",            [-1.5, -1, 0, 2, 4, 4, 2, 0, -1, -1.5]),
        ("R&B",            [2.62, 6.92, 5.65, 1.33, -2.19, -1.5, 2.32, 2.65, 3, 3.75]),
        ("Rock",           [5, 4, 3, 1.5, -0.5, -1, 0.5, 2.5, 3.5, 4.5]),
        ("Small Speakers", [5.5, 4.25, 3.5, 2.5, 1.25, 0, -1.25, -2.5, -3.5, -4.25]),
        ("Spoken Word",    [-3.46, -0.47, 0, 0.69, 3.46, 4.61, 4.84, 4.28, 2.54, 0]),
        ("Treble Booster", [0, 0, 0, 0, 0, 1.25, 2.5, 3.5, 4.25, 5.5]),
        ("Treble Reducer", [0, 0, 0, 0, 0, -1.25, -2.5, -3.5, -4.25, -5.5]),
        ("Vocal Booster",  [-1.5, -3, -3, 1.5, 3.75, 3.75, 3, 1.5, 0, -1.5]),
    ]

    /// The band gains of the preset called `name` (case-insensitive), or nil.
    public static func preset(named name: String) -> [Double]? {
        presets.first { $0.name.lowercased() == name.lowercased() }?.gains
    }

    /// The bands usable at `sampleRate` (centre ≤ 0.45 × rate).
    public static func usableBands(sampleRate: Double) -> Int {
        bandCentres.filter { $0 <= 0.45 * sampleRate }.count
    }

    /// The peaking sections whose combined response at each usable band centre is `gains` dB.
    public static func sections(gains: [Double], sampleRate: Double) -> [BiquadCoefficients] {
        let n = min(usableBands(sampleRate: sampleRate), gains.count)
        guard n > 0 else { return [] }
        let f = Array(bandCentres[0..<n]), target = Array(gains[0..<n])
        func design(_ settings: [Double]) -> [BiquadCoefficients] {
            (0..<n).map { BiquadCoefficients(shape: .peaking, frequency: f[$0], q: q, gainDB: settings[$0],
                                             sampleRate: sampleRate) }
        }
        func response(_ s: [BiquadCoefficients]) -> [Double] {
            f.map { freq in s.reduce(0) { $0 + $1.decibels(at: freq, sampleRate: sampleRate) } }
        }
        var settings = target
        for _ in 0..<40 {
            let current = response(design(settings))
            let error = (0..<n).map { target[$0] - current[$0] }
            if error.allSatisfy({ abs($0) < 1e-6 }) { break }
            // Jacobian of the response (dB at each centre) with respect to each section's gain, by differences.
            var jacobian = [[Double]](repeating: [Double](repeating: 0, count: n), count: n)
            for j in 0..<n {
                var nudged = settings
                nudged[j] += 0.01
                let b = BiquadCoefficients(shape: .peaking, frequency: f[j], q: q, gainDB: nudged[j], sampleRate: sampleRate)
                let a = BiquadCoefficients(shape: .peaking, frequency: f[j], q: q, gainDB: settings[j], sampleRate: sampleRate)
                for i in 0..<n {
                    jacobian[i][j] = (b.decibels(at: f[i], sampleRate: sampleRate)
                        - a.decibels(at: f[i], sampleRate: sampleRate)) / 0.01
                }
            }
            let step = solve(jacobian, error)
            for j in 0..<n { settings[j] += step[j] }
        }
        return design(settings)
    }

    /// Gaussian elimination with partial pivoting (n ≤ 10).
    private static func solve(_ m: [[Double]], _ v: [Double]) -> [Double] {
        var a = m, b = v
        let n = b.count
        for col in 0..<n {
            let pivot = (col..<n).max { abs(a[$0][col]) < abs(a[$1][col]) }!
            a.swapAt(col, pivot)
            b.swapAt(col, pivot)
            for row in (col + 1)..<n {
                let k = a[row][col] / a[col][col]
                for c in col..<n { a[row][c] -= k * a[col][c] }
                b[row] -= k * b[col]
            }
        }
        var x = [Double](repeating: 0, count: n)
        for row in stride(from: n - 1, through: 0, by: -1) {
            var s = b[row]
            for c in (row + 1)..<n { s -= a[row][c] * x[c] }
            x[row] = s / a[row][row]
        }
        return x
    }
}
