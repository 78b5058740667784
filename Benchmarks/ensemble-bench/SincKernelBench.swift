import CBenchProbe
import CSincKernel
import Ensemble
import Foundation

/// Section "sinc kernel" (`--sinc-kernel [SECONDS]`): `ensemble_sinc_run` alone at fixed tap counts, AVX2 and AVX-512
/// builds, mono and stereo, against its load-slot roofline (Benchmarks/README.md §1b). Cycles are core cycles: each
/// timed kernel call sits between two chains of 8,000 dependent one-cycle additions (`ensemble_sinc_clock_chain`), and
/// a repeat's cycles are its time over the shorter chain's × 8,000; the median over many repeats, then the median of
/// nine rounds that alternate the variants, so a preemption or a clock change lands in few repeats.
/// The roofline: the loads the kernel issues for the frames measured (two weight rows and one source window per
/// channel, 64-, 32- and 16-byte vector loads), a load that crosses a 64-byte line counted twice, over the two load
/// slots per cycle that `ensemble_probe_loads` measures; the table assumed in L1. Probes beside it isolate what the
/// roofline leaves out: the table in L2 (random phases against one phase row for every frame), source windows that
/// cross lines (one row, x 64-byte aligned), a table base 32 bytes off a line, and the fixed cost per frame (a fit
/// over 16…128 taps with one row and aligned x).
enum SincKernelBench {
    static let chainLength = 2000 // × 4 additions

    /// Core cycles per frame of `body` (which computes `frames` frames): see the type's comment.
    static func cycles(frames: Int, repeats: Int, _ body: () -> Void) -> Double {
        body()
        var ratios = [Double](repeating: 0, count: repeats)
        for k in 0..<repeats {
            let t0 = now()
            _ = ensemble_sinc_clock_chain(chainLength)
            let t1 = now()
            body()
            let t2 = now()
            _ = ensemble_sinc_clock_chain(chainLength)
            let t3 = now()
            ratios[k] = (t2 - t1) / min(t1 - t0, t3 - t2) * Double(4 * chainLength) / Double(frames)
        }
        return median(ratios)
    }

    static func median(_ values: [Double]) -> Double {
        let s = values.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// `count` zeroed Floats from a 64-byte boundary (never freed: the section runs once).
    static func aligned(_ count: Int) -> UnsafeMutablePointer<Float> {
        let p = UnsafeMutableRawPointer.allocate(byteCount: 4 * count + 256, alignment: 64).bindMemory(to: Float.self, capacity: count + 64)
        p.initialize(repeating: 0, count: count + 64)
        return p
    }

    /// A table of `taps` taps in the kernel's layout (rows `ensemble_sinc_stride(taps)` apart), 64-byte aligned.
    static func table(taps: Int) -> UnsafeMutablePointer<Float> {
        let stride = ensemble_sinc_stride(taps), t = aligned(stride * 257 + 16)
        for p in 0..<257 { for j in 0..<taps { t[stride * p + j] = Float(cos(Double(p * taps + j) * 0.011) * 0.1) } }
        return t
    }

    /// Load slots per frame for `frames` frames as `path` (1 AVX2, 2 AVX-512) loads them: per frame and block, the row,
    /// the next row and each channel's window; a load of `size` bytes at `address` takes two slots when it crosses a
    /// 64-byte line.
    static func loadSlots(path: Int32, taps: Int, stereo: Bool, table: UnsafePointer<Float>, l: UnsafePointer<Float>,
                          r: UnsafePointer<Float>, start: UInt64, step: UInt64, frames: Int) -> Double {
        func slots(_ address: Int, _ size: Int) -> Int { address % 64 + size > 64 ? 2 : 1 }
        // (offset in Floats, bytes) of every block.
        var blocks: [(Int, Int)] = []
        var j = 0
        let whole = taps & ~7
        if path == 2 { while j + 16 <= whole { blocks.append((j, 64)); j += 16 } }
        while j + 8 <= whole { blocks.append((j, 32)); j += 8 }
        if j < taps { blocks.append((j, 16)) }
        let stride = ensemble_sinc_stride(taps)
        var total = 0, f = start
        for _ in 0..<frames {
            let row = Int(bitPattern: table) + 4 * stride * Int((f >> 24) & 0xFF), i = Int(f >> 32)
            for (o, size) in blocks {
                total += slots(row + 4 * o, size) + slots(row + 4 * (stride + o), size) + slots(Int(bitPattern: l) + 4 * (i + o), size)
                if stereo { total += slots(Int(bitPattern: r) + 4 * (i + o), size) }
            }
            f &+= step
        }
        return Double(total) / Double(frames)
    }

    /// Cycles per load from `ensemble_probe_loads` (8,000 loads a repeat, median of 301), or nil without that width.
    static func loadCost(width: Int32, offset: Int, base: UnsafeRawPointer) -> Double? {
        guard ensemble_probe_loads(base, 1, offset, width) == 1 else { return nil }
        return cycles(frames: 8000, repeats: 301) { _ = ensemble_probe_loads(base, 1000, offset, width) }
    }

    /// This machine's CPU as /proc/cpuinfo names it: model name, family, model.
    static func cpuName() -> String {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return "unknown CPU" }
        var name = "", family = "", model = ""
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2 else { continue }
            if parts[0] == "model name", name.isEmpty { name = parts[1] }
            if parts[0] == "cpu family", family.isEmpty { family = parts[1] }
            if parts[0] == "model", model.isEmpty { model = parts[1] }
        }
        return "\(name), family \(family) model \(model)"
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
        print("CPU: \(cpuName())")
        let repeats = max(Int(seconds * 670) | 1, 51)
        let ring = aligned(4096 + 64)
        var line = "\nLoad slots (`ensemble_probe_loads`, 8 independent loads a step over 16 KB, cycles per load):"
        for width: Int32 in [16, 32, 64] {
            for offset in [0, 4] {
                if let c = loadCost(width: width, offset: offset, base: ring) {
                    line += String(format: " %d B%@ %.2f;", width, offset == 0 ? "" : " +4", c)
                }
            }
        }
        print(line + " (two loads a cycle: 0.50; +4: every 64-byte load and every other 32-byte one crosses a line)")

        let frames = 1024, step: UInt64 = 0xBAE6_1D3B // 0.7301
        let sourceCount = 16 * frames + 512
        let l = aligned(sourceCount), r = aligned(sourceCount)
        for k in 0..<sourceCount {
            l[k] = Float(sin(Double(k) * 0.37) * 0.5)
            r[k] = Float(cos(Double(k) * 0.21) * 0.5)
        }
        let outL = aligned(frames), outR = aligned(frames)
        let oneRow: UInt64 = 0x8012_3456 // phase 128 and a fraction, every frame (step 1.0 or 16.0)

        print("\n## sinc kernel against its load-slot roofline (`ensemble_sinc_run`, \(frames)-frame runs at step 0.7301 from "
              + "64-byte aligned tables; core cycles per frame, medians of alternated runs)\n")
        print("| taps | ch | build | cycles / frame | load slots | roofline, cycles | of roofline | one row | one row, x aligned | table +32 B |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for taps in [24, 36, 48, 60, 72, 84, 96] {
            let t = table(taps: taps)
            for stereo: Int32 in [0, 1] {
                for path: Int32 in [1, 2] {
                    guard ensemble_sinc_run_path(path, l, r, stereo, t, taps, 0, step, frames, outL, outR) == 1 else { continue }
                    func kernel(_ table: UnsafePointer<Float>, _ start: UInt64, _ step: UInt64) -> () -> Void {
                        { _ = ensemble_sinc_run_path(path, l, r, stereo, table, taps, start, step, frames, outL, outR) }
                    }
                    let variants = [kernel(t, 0, step), kernel(t, oneRow, 1 << 32), kernel(t, oneRow, 16 << 32), kernel(t + 8, 0, step)]
                    var results = [[Double]](repeating: [], count: variants.count)
                    for _ in 0..<9 {
                        for (k, v) in variants.enumerated() { results[k].append(cycles(frames: frames, repeats: repeats, v)) }
                    }
                    let c = results.map(median)
                    let slots = loadSlots(path: path, taps: taps, stereo: stereo == 1, table: t, l: l, r: r, start: 0,
                                          step: step, frames: frames)
                    print(String(format: "| %d | %d | %@ | %.1f | %.1f | %.1f | %.0f %% | %.1f | %.1f | %.1f |", taps, stereo + 1,
                                 path == 2 ? "AVX-512" : "AVX2", c[0], slots, slots / 2, 100 * slots / 2 / c[0], c[1], c[2], c[3]))
                }
            }
        }

        // The same frames over 16-bit samples (what a 16-bit voice runs, `ensemble_sinc_run_i16`): the same loads
        // a block, half the bytes, plus a widening and a conversion per source vector.
        let l16 = UnsafeMutablePointer<Int16>.allocate(capacity: sourceCount)
        let r16 = UnsafeMutablePointer<Int16>.allocate(capacity: sourceCount)
        for k in 0..<sourceCount {
            l16[k] = Int16(l[k] * 32767)
            r16[k] = Int16(r[k] * 32767)
        }
        print("\n16-bit source (`ensemble_sinc_run_i16`) against Float, the same table and frames, cycles a frame:")
        for path: Int32 in [1, 2] {
            var cells: [String] = []
            for taps in [24, 36, 72, 96] {
                let t = table(taps: taps)
                for stereo: Int32 in [0, 1] {
                    guard ensemble_sinc_run_i16_path(path, l16, r16, stereo, t, taps, 0, step, frames, outL, outR) == 1 else { continue }
                    var float: [Double] = [], int16: [Double] = []
                    for _ in 0..<9 {
                        float.append(cycles(frames: frames, repeats: repeats) {
                            _ = ensemble_sinc_run_path(path, l, r, stereo, t, taps, 0, step, frames, outL, outR)
                        })
                        int16.append(cycles(frames: frames, repeats: repeats) {
                            _ = ensemble_sinc_run_i16_path(path, l16, r16, stereo, t, taps, 0, step, frames, outL, outR)
                        })
                    }
                    cells.append(String(format: "%d %@ %.1f / %.1f", taps, stereo == 1 ? "stereo" : "mono", median(int16),
                                        median(float)))
                }
            }
            if !cells.isEmpty { print("- \(path == 2 ? "AVX-512" : "AVX2") (16-bit / Float): " + cells.joined(separator: "; ")) }
        }

        print("\nFixed cost per frame: one phase row, x 64-byte aligned (no line crossings), 16…128 taps; least-squares fit")
        for stereo: Int32 in [0, 1] {
            for path: Int32 in [1, 2] {
                guard ensemble_sinc_run_path(path, l, r, stereo, table(taps: 16), 16, 0, step, 4, outL, outR) == 1 else { continue }
                let tapCounts = Array(stride(from: 16, through: 128, by: 16))
                let tables = tapCounts.map { table(taps: $0) }
                var results = [[Double]](repeating: [], count: tapCounts.count)
                for _ in 0..<9 {
                    for (k, taps) in tapCounts.enumerated() {
                        results[k].append(cycles(frames: frames, repeats: repeats) {
                            _ = ensemble_sinc_run_path(path, l, r, stereo, tables[k], taps, oneRow, 16 << 32, frames, outL, outR)
                        })
                    }
                }
                let y = results.map(median), x = tapCounts.map(Double.init), n = Double(x.count)
                let sx = x.reduce(0, +), sy = y.reduce(0, +)
                let sxx = x.map { $0 * $0 }.reduce(0, +), sxy = zip(x, y).map(*).reduce(0, +)
                let slope = (n * sxy - sx * sy) / (n * sxx - sx * sx), intercept = (sy - slope * sx) / n
                let lanes = path == 2 ? 16.0 : 8.0, loads = Double(2 + stereo + 1)
                print(String(format: "- %@, %@: %.3f cycles a tap (%.2f per %.0f taps; the roofline %.2f) + %.1f cycles a frame; measured %@",
                             stereo == 1 ? "stereo" : "mono", path == 2 ? "AVX-512" : "AVX2", slope, slope * lanes, lanes,
                             loads / 2, intercept, zip(tapCounts, y).map { String(format: "%d: %.1f", $0, $1) }.joined(separator: ", ")))
            }
        }
    }
}
