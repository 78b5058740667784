import Ensemble
import Foundation

/// The image column of section 1b: white noise (uniform, the whole band of a 48 kHz source) played at rate 0.5 on a
/// 48 kHz output, and the worst image band heard below 20 kHz: Welch's average of eight 8192-frame segments under
/// a 7-term Blackman-Harris window, the power density of bands of 32 bins from 0.505 of the heard source rate
/// (12.1 kHz) to 20 kHz against the density of 0.05…0.35 of it (1.2…8.4 kHz), dB — the measure of
/// `AntiImageTests` and `FastSincTests`, for Ensemble's tiers and OpenAL Soft's resamplers alike.
enum ResamplerImages {
    static let rate: Float = 0.5
    static let segment = 8192, segments = 8, skip = 1024

    /// The noise: deterministic, as many source frames as the analysis reads at rate 0.5 and some more.
    static let noise: [Float] = {
        var state: UInt64 = 34
        return (0..<((skip + segment * segments) / 2 + 2048)).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Float(Double(state >> 11) * 0x1p-53) - 0.5
        }
    }()

    static func ensemble(_ quality: ResamplerQuality) throws -> Double {
        var c = Engine.Configuration()
        c.resampler = quality
        let engine = try Engine(configuration: c)
        let track = try engine.makeTrack(try Sound(DecodedAudio(sampleRate: 48000, channels: [noise]), name: "noise"))
        try track.setRate(rate)
        try track.play(at: engine.time(frame: 0))
        engine.pumpCommands()
        let frames = skip + segment * segments
        var left = [Float](repeating: 0, count: frames), right = left
        left.withUnsafeMutableBufferPointer { l in
            right.withUnsafeMutableBufferPointer { r in engine.render(left: l.baseAddress!, right: r.baseAddress!, frames: frames) }
        }
        return worstImageBand(Array(left[skip...]))
    }

    static func openAL(_ index: Int) -> Double? {
        guard let out = OpenALPeer.renderMono(noise, rate: 48000, resamplerIndex: index, frames: skip + segment * segments,
                                              pitch: rate) else { return nil }
        return worstImageBand(Array(out[skip...]))
    }

    static func worstImageBand(_ x: [Float]) -> Double {
        let n = segment, heard = 48000 * Double(rate), binHz = 48000 / Double(n)
        let w = blackmanHarris7(n)
        var density = [Double](repeating: 0, count: n / 2 + 1)
        for s in 0..<segments {
            var re = (0..<n).map { Double(x[s * n + $0]) * w[$0] }, im = [Double](repeating: 0, count: n)
            fft(&re, &im)
            for k in 0..<density.count { density[k] += re[k] * re[k] + im[k] * im[k] }
        }
        let pass = Int(0.05 * heard / binHz)...Int(0.35 * heard / binHz)
        let reference = pass.reduce(0.0) { $0 + density[$1] } / Double(pass.count)
        var worst = -300.0, k = Int((0.505 * heard / binHz).rounded(.up))
        while k + 32 <= Int(20000 / binHz) {
            worst = max(worst, 10 * log10(max(density[k..<(k + 32)].reduce(0, +) / 32, 1e-300) / reference))
            k += 32
        }
        return worst
    }

    static func blackmanHarris7(_ n: Int) -> [Double] {
        let a = [0.27105140069342, 0.43329793923448, 0.21812299954311, 0.06592544638803,
                 0.01081174209837, 0.00077658482522, 0.00001388721735]
        return (0..<n).map { i in
            let x = 2 * Double.pi * Double(i) / Double(n)
            return a.enumerated().reduce(0.0) { $0 + ($1.offset % 2 == 0 ? $1.element : -$1.element) * cos(Double($1.offset) * x) }
        }
    }

    /// In-place iterative radix-2 FFT; `re.count` a power of two.
    static func fft(_ re: inout [Double], _ im: inout [Double]) {
        let n = re.count
        var j = 0
        for i in 1..<n {
            var bit = n >> 1
            while j & bit != 0 { j ^= bit; bit >>= 1 }
            j |= bit
            if i < j { re.swapAt(i, j); im.swapAt(i, j) }
        }
        var length = 2
        while length <= n {
            let angle = -2 * Double.pi / Double(length)
            for start in stride(from: 0, to: n, by: length) {
                for k in 0..<(length / 2) {
                    let wr = cos(angle * Double(k)), wi = sin(angle * Double(k))
                    let a = start + k, b = a + length / 2
                    let tr = re[b] * wr - im[b] * wi, ti = re[b] * wi + im[b] * wr
                    re[b] = re[a] - tr; im[b] = im[a] - ti
                    re[a] += tr; im[a] += ti
                }
            }
            length <<= 1
        }
    }
}
