import Foundation
import XCTest

/// Loudness figures from the two references the meter is proven against: libebur128 (loaded with dlopen, so it is
/// needed only by the tests that use it; Debian `libebur128-dev` or `libebur128-1`) and ffmpeg's `ebur128` filter.
package struct ReferenceLoudness {
    package var integrated: Double
    package var loudnessRange: Double
    /// dBTP (libebur128) or dBFS as ffmpeg labels its true peak.
    package var truePeak: Double
}

/// libebur128 through `dlopen`: nil (the test skips) when the library is not installed.
package enum LibEbur128 {
    fileprivate typealias Init = @convention(c) (UInt32, UInt, Int32) -> OpaquePointer?
    fileprivate typealias Destroy = @convention(c) (UnsafeMutablePointer<OpaquePointer?>) -> Void
    fileprivate typealias AddFloat = @convention(c) (OpaquePointer?, UnsafePointer<Float>, Int) -> Int32
    fileprivate typealias Figure = @convention(c) (OpaquePointer?, UnsafeMutablePointer<Double>) -> Int32
    private typealias ChannelFigure = @convention(c) (OpaquePointer?, UInt32, UnsafeMutablePointer<Double>) -> Int32

    nonisolated(unsafe) private static let handle: UnsafeMutableRawPointer? =
        dlopen("libebur128.so.1", RTLD_NOW) ?? dlopen("libebur128.so", RTLD_NOW)

    /// Throws XCTSkip when libebur128 is not installed.
    package static func require() throws {
        if handle == nil { throw XCTSkip("libebur128 is not installed (apt-get install libebur128-dev)") }
    }

    fileprivate static func symbol<T>(_ name: String, as: T.Type) -> T {
        unsafeBitCast(dlsym(handle, name)!, to: T.self)
    }

    /// Integrated loudness, loudness range and the highest channel's true peak (dBTP) of interleaved `samples`.
    package static func measure(_ samples: [Float], channels: Int, sampleRate: Int) throws -> ReferenceLoudness {
        try require()
        // EBUR128_MODE_I | EBUR128_MODE_LRA | EBUR128_MODE_TRUE_PEAK | EBUR128_MODE_HISTOGRAM.
        let mode: Int32 = (1 << 2 | 1) | (1 << 3 | 1 << 1 | 1) | (1 << 5 | 1 << 4 | 1) | (1 << 6)
        var state = symbol("ebur128_init", as: Init.self)(UInt32(channels), UInt(sampleRate), mode)
        defer { symbol("ebur128_destroy", as: Destroy.self)(&state) }
        let frames = samples.count / channels
        _ = samples.withUnsafeBufferPointer { symbol("ebur128_add_frames_float", as: AddFloat.self)(state, $0.baseAddress!, frames) }
        var integrated = 0.0, range = 0.0, peak = 0.0
        _ = symbol("ebur128_loudness_global", as: Figure.self)(state, &integrated)
        _ = symbol("ebur128_loudness_range", as: Figure.self)(state, &range)
        for c in 0..<channels {
            var p = 0.0
            _ = symbol("ebur128_true_peak", as: ChannelFigure.self)(state, UInt32(c), &p)
            peak = max(peak, p)
        }
        return ReferenceLoudness(integrated: integrated, loudnessRange: range, truePeak: 20 * log10(peak))
    }
}

extension LibEbur128 {
    /// Momentary and short-term loudness (LUFS, −∞ for silence) after every `hop` frames of interleaved `samples`,
    /// as libebur128 reports them when asked at those points (its windows end on the last frame given).
    package static func series(_ samples: [Float], channels: Int, sampleRate: Int, hop: Int)
        throws -> (momentary: [Double], shortTerm: [Double]) {
        try require()
        let mode: Int32 = (1 << 0) | (1 << 1 | 1)   // EBUR128_MODE_M | EBUR128_MODE_S
        var state = symbol("ebur128_init", as: Init.self)(UInt32(channels), UInt(sampleRate), mode)
        defer { symbol("ebur128_destroy", as: Destroy.self)(&state) }
        let add = symbol("ebur128_add_frames_float", as: AddFloat.self)
        let momentary = symbol("ebur128_loudness_momentary", as: Figure.self)
        let shortTerm = symbol("ebur128_loudness_shortterm", as: Figure.self)
        var m = [Double](), s = [Double]()
        samples.withUnsafeBufferPointer { all in
            var frame = 0
            let frames = all.count / channels
            while frame + hop <= frames {
                _ = add(state, all.baseAddress! + frame * channels, hop)
                frame += hop
                var v = 0.0
                _ = momentary(state, &v)
                m.append(v)
                _ = shortTerm(state, &v)
                s.append(v)
            }
        }
        return (m, s)
    }
}

/// ffmpeg's `ebur128=peak=true` summary of a file (its figures have one decimal).
package func ffmpegLoudness(of path: String) throws -> ReferenceLoudness {
    let ffmpeg = try requireTool("ffmpeg")
    let result = try runProcess(ffmpeg, ["-nostats", "-hide_banner", "-i", path, "-filter_complex", "ebur128=peak=true",
                                         "-f", "null", "-"])
    guard result.status == 0, let summary = result.stderr.range(of: "Summary:") else {
        throw XCTSkip("ffmpeg ebur128 failed: \(result.stderr.suffix(300))")
    }
    var figures: [String: Double] = [:]
    for line in result.stderr[summary.upperBound...].split(separator: "\n") {
        let parts = line.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count >= 2, let value = Double(parts[1]) ?? (parts[1] == "-inf" ? -Double.infinity : nil) else { continue }
        figures[String(parts[0])] = value
    }
    guard let i = figures["I:"], let lra = figures["LRA:"], let peak = figures["Peak:"] else {
        throw XCTSkip("no ebur128 summary in ffmpeg's output")
    }
    return ReferenceLoudness(integrated: i, loudnessRange: lra, truePeak: peak)
}
