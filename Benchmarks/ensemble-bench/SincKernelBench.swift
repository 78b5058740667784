import CSincKernel
import Ensemble
import Foundation

/// Section "sinc kernel": `ensemble_sinc_run` alone at fixed tap counts, AVX2 and AVX-512 builds, mono and
/// stereo: ns and core cycles per output frame (the clock measured by a chain of dependent one-cycle additions,
/// `ensemble_sinc_clock_chain`, just before each row), beside the load-slot bound: vector loads per frame (two
/// weight rows and one source window per channel, 8 or 16 taps each) over the two vector loads per cycle of Zen 4/5.
enum SincKernelBench {
    /// The core's clock now, GHz: best of five chains of 4·10⁷ dependent additions.
    static func clockGHz() -> Double {
        var best = Double.infinity
        for _ in 0..<5 {
            let t0 = now()
            _ = ensemble_sinc_clock_chain(10_000_000)
            best = min(best, now() - t0)
        }
        return 4e7 / best / 1e9
    }

    /// The first engine that chooses fastSinc builds its tables (control thread); a second one finds them built.
    static func bankBuildMilliseconds() -> (first: Double, second: Double) {
        var c = Engine.Configuration()
        c.resampler = .fastSinc
        var t = now()
        _ = try? Engine(configuration: c)
        let first = now() - t
        t = now()
        _ = try? Engine(configuration: c)
        return (first * 1e3, (now() - t) * 1e3)
    }

    static func run(seconds: Double) {
        let build = bankBuildMilliseconds()
        print(String(format: "fastSinc tables (48 kHz): the first engine that chooses them is created in %.1f ms, the next in %.1f ms",
                     build.first, build.second))
        print("\n## sinc kernel alone (`ensemble_sinc_run`, 1024-frame runs at step 0.7301, table in L1/L2 as in a block; "
              + "best of 5; cycles = ns × the clock measured beside each row)\n")
        print("| taps | channels | build | ns / frame | cycles / frame | load-slot bound, cycles | of bound |")
        print("|---|---|---|---|---|---|---|")
        let frames = 1024, step: UInt64 = 0xBAE6_1D3B // 0.7301
        let l = (0..<(frames + 400)).map { Float(sin(Double($0) * 0.37) * 0.5) }, r = l.reversed() as [Float]
        var outL = [Float](repeating: 0, count: frames), outR = outL
        for taps in [24, 32, 44, 48, 72, 96] {
            let table = (0..<(taps * 257)).map { Float(cos(Double($0) * 0.011) * 0.1) }
            for stereo: Int32 in [0, 1] {
                for path: Int32 in [1, 2] {
                    guard ensemble_sinc_run_path(path, l, r, stereo, table, taps, 0, step, frames, &outL, &outR) == 1 else { continue }
                    let ghz = clockGHz()
                    var best = Double.infinity
                    let calls = max(Int(seconds * 2e5 / Double(taps)), 50)
                    for _ in 0..<5 {
                        let t0 = now()
                        for _ in 0..<calls { _ = ensemble_sinc_run_path(path, l, r, stereo, table, taps, 0, step, frames, &outL, &outR) }
                        best = min(best, (now() - t0) / Double(calls * frames))
                    }
                    let lanes = path == 2 ? 16 : 8, blocks = Double(taps / lanes) + Double(taps % lanes) / Double(lanes)
                    let bound = blocks * Double(2 + (stereo == 1 ? 2 : 1)) / 2
                    let cycles = best * 1e9 * ghz
                    print(String(format: "| %d | %@ | %@ | %.2f | %.1f | %.1f | %.0f %% |", taps, stereo == 1 ? "2" : "1",
                                 path == 2 ? "AVX-512" : "AVX2", best * 1e9, cycles, bound, 100 * bound / cycles))
                }
            }
        }
    }
}
