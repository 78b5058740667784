import Ensemble
import Foundation

/// Section "Resamplers": every Ensemble resampler beside every OpenAL Soft resampler, measured in the same run:
/// throughput at N voices with rates spread over 0.5…2 (best and median of the repeats), THD+N of one sine voice
/// at 44.1 → 48 kHz, and the worst image of noise played at rate 0.5 (`ResamplerImages`).
enum ResamplerComparison {
    struct Row {
        var engine: String
        var name: String
        var voiceX: Double?
        var medianVoiceX: Double?
        var thd: [Double?]
        var image: Double?
    }

    /// The median of `walls` as voice_x (the mean of the middle two for an even count).
    static func medianVoiceX(_ walls: [Double], voices n: Int, seconds: Double) -> Double? {
        guard !walls.isEmpty else { return nil }
        let s = walls.sorted(), m = s.count / 2
        return Double(n) * seconds / (s.count % 2 == 1 ? s[m] : (s[m - 1] + s[m]) / 2)
    }

    static let tones: [Double] = [1000, 10000, 15000]
    static let skip = 1024, window = 16384

    /// A 0.5-amplitude sine at `frequency`, computed in Double, one second at 44.1 kHz.
    static func sine(_ frequency: Double) -> [Float] {
        (0..<44100).map { Float(0.5 * sin(2 * Double.pi * frequency * Double($0) / 44100)) }
    }

    /// Least-squares fit of a·sin(w(k + offset)) + b·cos(w(k + offset)) + c at `frequency` over `x`: (a, b, c).
    static func fit(_ x: ArraySlice<Float>, frequency: Double, rate: Double, offset: Int = 0) -> [Double] {
        let w = 2 * Double.pi * frequency / rate
        // Normal equations of the three-column fit, solved by Cramer's rule.
        var m = [[Double]](repeating: [0, 0, 0], count: 3), v = [0.0, 0, 0]
        for (k, sample) in x.enumerated() {
            let basis = [sin(w * Double(k + offset)), cos(w * Double(k + offset)), 1]
            for i in 0..<3 {
                v[i] += basis[i] * Double(sample)
                for j in 0..<3 { m[i][j] += basis[i] * basis[j] }
            }
        }
        func det(_ a: [[Double]]) -> Double {
            a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
                + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0])
        }
        let d = det(m)
        return (0..<3).map { col -> Double in
            var a = m
            for r in 0..<3 { a[r][col] = v[r] }
            return det(a) / d
        }
    }

    /// THD+N in dB: the residual of a least-squares sine fit (everything that is not the tone) over the fitted
    /// tone's power. The tone's frequency is refined first from the phase drift between the window's halves, so
    /// an engine whose step is slightly off (OpenAL Soft's 12-bit fraction plays 44.1 kHz a few 1e-5 sharp or
    /// flat) is measured on its own fundamental.
    static func thdPlusN(_ x: ArraySlice<Float>, frequency nominal: Double, rate: Double) -> Double {
        var frequency = nominal
        // Short spans first, so the drift between them stays within ±π, then longer ones for precision.
        for span in [256, 2048, x.count / 2] {
            let first = x.prefix(span), second = x.dropFirst(span).prefix(span)
            let a = fit(first, frequency: frequency, rate: rate)
            let b = fit(second, frequency: frequency, rate: rate, offset: span)
            let drift = remainder(atan2(b[1], b[0]) - atan2(a[1], a[0]), 2 * Double.pi)
            frequency += drift / (2 * Double.pi * Double(span) / rate)
        }
        let c = fit(x, frequency: frequency, rate: rate)
        let w = 2 * Double.pi * frequency / rate
        var tone = 0.0, rest = 0.0
        for (k, sample) in x.enumerated() {
            let s = c[0] * sin(w * Double(k)) + c[1] * cos(w * Double(k))
            tone += s * s
            rest += (Double(sample) - s - c[2]) * (Double(sample) - s - c[2])
        }
        return 10 * log10(max(rest, 1e-30) / tone)
    }

    static func ensembleTHD(_ quality: ResamplerQuality, _ frequency: Double) throws -> Double {
        var c = Engine.Configuration()
        c.resampler = quality
        let engine = try Engine(configuration: c)
        let track = try engine.makeTrack(try Sound(DecodedAudio(sampleRate: 44100, channels: [sine(frequency)]),
                                                   name: "sine"))
        try track.play(at: engine.time(frame: 0))
        engine.pumpCommands()
        let frames = skip + window
        var left = [Float](repeating: 0, count: frames), right = left
        left.withUnsafeMutableBufferPointer { l in
            right.withUnsafeMutableBufferPointer { r in engine.render(left: l.baseAddress!, right: r.baseAddress!, frames: frames) }
        }
        return thdPlusN(left[skip...], frequency: frequency, rate: 48000)
    }

    static func openALTHD(_ index: Int, _ frequency: Double) -> Double? {
        guard let out = OpenALPeer.renderMono(sine(frequency), rate: 44100, resamplerIndex: index,
                                              frames: skip + window) else { return nil }
        return thdPlusN(out[skip...], frequency: frequency, rate: 48000)
    }

    /// Best wall time over `repeats` of N voices at spread rates, per resampler of both engines.
    static func run(inputs: InputSet, sounds: [Sound], voices n: Int, seconds: Double, repeats: Int,
                    openAL: Bool) throws -> [Row] {
        var rows: [Row] = []
        // The repeats take turns between the resamplers, so a slow minute of the shared machine hits them alike.
        let names = openAL ? OpenALPeer.resamplerNames() : []
        var ensembleWalls = [[Double]](repeating: [], count: ResamplerQuality.allCases.count)
        var openALWalls = [[Double]](repeating: [], count: names.count)
        for _ in 0..<repeats {
            for (q, quality) in ResamplerQuality.allCases.enumerated() {
                ensembleWalls[q].append(try EnsembleRuns.throughput(sounds: sounds, voices: n, pitch: true, seconds: seconds,
                                                                    resampler: quality).wall)
            }
            for index in names.indices {
                if let w = OpenALPeer.run(inputs: inputs, voices: n, pitch: true, resamplerIndex: index, seconds: seconds) {
                    openALWalls[index].append(w)
                }
            }
        }
        for (q, quality) in ResamplerQuality.allCases.enumerated() {
            rows.append(Row(engine: "Ensemble", name: quality.rawValue,
                            voiceX: ensembleWalls[q].min().map { Double(n) * seconds / $0 },
                            medianVoiceX: medianVoiceX(ensembleWalls[q], voices: n, seconds: seconds),
                            thd: try tones.map { try ensembleTHD(quality, $0) }, image: try ResamplerImages.ensemble(quality)))
        }
        for (index, name) in names.enumerated() {
            rows.append(Row(engine: "OpenAL Soft", name: name, voiceX: openALWalls[index].min().map { Double(n) * seconds / $0 },
                            medianVoiceX: medianVoiceX(openALWalls[index], voices: n, seconds: seconds),
                            thd: tones.map { openALTHD(index, $0) }, image: ResamplerImages.openAL(index)))
        }
        return rows
    }
}
