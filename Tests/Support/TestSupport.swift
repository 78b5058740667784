import Foundation
import EnsembleSoak
import XCTest
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// A fresh directory for one test's files, removed when the test's reference goes away.
package final class TemporaryDirectory {
    package let path: String

    package init() throws {
        let base = FileManager.default.temporaryDirectory.path
        path = base + "/ensemble-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    package func file(_ name: String) -> String { path + "/" + name }

    package func write(_ bytes: [UInt8], to name: String) throws -> String {
        let target = file(name)
        try Data(bytes).write(to: URL(fileURLWithPath: target))
        return target
    }

    /// Everything in the directory, including hidden temp files a writer might have left.
    package func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).sorted()
    }
}

/// Builds WAV files byte by byte so the decoders are checked against a format written independently of libsndfile.
package struct WAVBuilder {
    package var formatTag: UInt16 = 1
    package var channels: UInt16 = 1
    package var sampleRate: UInt32 = 44100
    package var bitsPerSample: UInt16 = 16
    package var data: [UInt8] = []
    /// Overrides the data chunk's size field, to make lying headers.
    package var declaredDataSize: UInt32?

    package init(formatTag: UInt16 = 1, channels: UInt16 = 1, sampleRate: UInt32 = 44100, bitsPerSample: UInt16 = 16,
                 data: [UInt8] = [], declaredDataSize: UInt32? = nil) {
        self.formatTag = formatTag
        self.channels = channels
        self.sampleRate = sampleRate
        self.bitsPerSample = bitsPerSample
        self.data = data
        self.declaredDataSize = declaredDataSize
    }

    package var bytes: [UInt8] {
        let blockAlign = UInt16(Int(channels) * Int(bitsPerSample) / 8)
        var fmt: [UInt8] = []
        fmt += le16(formatTag) + le16(channels) + le32(sampleRate)
        fmt += le32(sampleRate * UInt32(blockAlign)) + le16(blockAlign) + le16(bitsPerSample)
        // Non-PCM format tags need a cbSize field and a fact chunk to be well-formed WAVE.
        let extended = formatTag != 1
        if extended { fmt += le16(0) }
        var body: [UInt8] = Array("WAVE".utf8)
        body += Array("fmt ".utf8) + le32(UInt32(fmt.count)) + fmt
        if extended {
            let frames = blockAlign > 0 ? UInt32(data.count / Int(blockAlign)) : 0
            body += Array("fact".utf8) + le32(4) + le32(frames)
        }
        body += Array("data".utf8) + le32(declaredDataSize ?? UInt32(data.count)) + data
        if data.count % 2 == 1 { body.append(0) }
        return Array("RIFF".utf8) + le32(UInt32(body.count)) + body
    }

    package static func pcm16(_ samples: [Int16], channels: UInt16 = 1, rate: UInt32 = 44100) -> WAVBuilder {
        WAVBuilder(channels: channels, sampleRate: rate, bitsPerSample: 16, data: samples.flatMap { le16(UInt16(bitPattern: $0)) })
    }

    package static func float32(_ samples: [Float], channels: UInt16 = 1, rate: UInt32 = 44100) -> WAVBuilder {
        WAVBuilder(formatTag: 3, channels: channels, sampleRate: rate, bitsPerSample: 32,
                   data: samples.flatMap { le32($0.bitPattern) })
    }
}

package func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
package func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8((v >> (8 * $0)) & 0xFF) } }
package func le64(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8((v >> (8 * $0)) & 0xFF) } }

/// Root of the package, found from this source file so tests work from any working directory.
package let packageRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

package func fixture(_ relative: String) -> String { packageRoot.appendingPathComponent("Tests/Fixtures/" + relative).path }

/// Full path of a command-line tool on PATH, or nil.
package func tool(_ name: String) -> String? {
    let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
    for dir in dirs {
        let candidate = "\(dir)/\(name)"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
}

package func requireTool(_ name: String) throws -> String {
    guard let path = tool(name) else { throw XCTSkip("\(name) is not installed") }
    return path
}

/// The built `ensemble` executable, which sits next to the test bundle in the build directory
/// (`swift test` builds it too).
package func ensembleExecutable() throws -> String { try builtExecutable("ensemble") }

/// A built executable of this package (`ensemble`, `ensemble-fuzz`), found next to the test bundle.
package func builtExecutable(_ name: String) throws -> String {
    let candidates = [
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name).path,
        Bundle.main.bundleURL.appendingPathComponent(name).path,
        packageRoot.appendingPathComponent(".build/debug/\(name)").path,
    ]
    guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
        XCTFail("\(name) executable not found; looked in \(candidates)")
        throw XCTSkip("no executable")
    }
    return found
}

package struct ProcessResult {
    package var status: Int32
    package var stdout: Data
    package var stderr: String
}

/// Runs a program to completion. Output goes to temporary files rather than pipes so a chatty program
/// can never block on a full pipe while the test waits for it.
/// `environment` entries are added to (or replace) the test process's own environment.
package func runProcess(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                stdin: [UInt8]? = nil) throws -> ProcessResult {
    let scratch = try TemporaryDirectory()
    let outPath = scratch.file("stdout"), errPath = scratch.file("stderr")
    _ = FileManager.default.createFile(atPath: outPath, contents: nil)
    _ = FileManager.default.createFile(atPath: errPath, contents: nil)
    let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
    let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if !environment.isEmpty {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    }
    process.standardOutput = out
    process.standardError = err
    // Standard input through a real pipe, written from another thread (a pipe holds only 64 kB).
    let input = stdin.map { _ in Pipe() }
    if let input { process.standardInput = input }
    try process.run()
    if let input, let stdin {
        let writer = Thread {
            let handle = input.fileHandleForWriting
            // The child may exit before reading everything (a bad header): a closed pipe must not kill the tests.
            signal(SIGPIPE, SIG_IGN)
            stdin.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let n = write(handle.fileDescriptor, raw.baseAddress! + offset, min(raw.count - offset, 1 << 16))
                    if n <= 0 { break }
                    offset += n
                }
            }
            try? handle.close()
        }
        writer.start()
    }
    process.waitUntilExit()
    try out.close()
    try err.close()
    let outData = try Data(contentsOf: URL(fileURLWithPath: outPath))
    let errData = try Data(contentsOf: URL(fileURLWithPath: errPath))
    return ProcessResult(status: process.terminationStatus, stdout: outData, stderr: String(decoding: errData, as: UTF8.self))
}

/// Decodes with ffmpeg to interleaved float32 as an independent reference.
package func ffmpegDecode(_ path: String) throws -> [Float] {
    let ffmpeg = try requireTool("ffmpeg")
    let result = try runProcess(ffmpeg, ["-v", "error", "-i", path, "-f", "f32le", "-acodec", "pcm_f32le", "-"])
    guard result.status == 0 else { throw XCTSkip("ffmpeg could not decode \(path): \(result.stderr)") }
    return result.stdout.withUnsafeBytes { raw in
        (0..<raw.count / 4).map { Float(bitPattern: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self)) }
    }
}

/// Samples of `amplitude·sin(2π·frequency·n/rate)`.
package func sine(frequency: Double, rate: Double, frames: Int, amplitude: Double = 0.5) -> [Float] {
    (0..<frames).map { Float(amplitude * sin(2 * .pi * frequency * Double($0) / rate)) }
}

/// Fits `a·sin + b·cos` at `frequency` by least squares and returns the fit's amplitude and the
/// signal-to-residual ratio in dB. Fitting the phase makes the measure indifferent to how a tool
/// phases its generated sine or how a codec delays it by a fraction of a sample.
package func sineFit(_ x: [Float], frequency: Double, rate: Double, skip: Int = 0) -> (amplitude: Double, snr: Double) {
    var ss = 0.0, cc = 0.0, sc = 0.0, xs = 0.0, xc = 0.0
    let range = skip..<max(skip, x.count - skip)
    for n in range {
        let w = 2 * .pi * frequency * Double(n) / rate
        let s = sin(w), c = cos(w)
        ss += s * s; cc += c * c; sc += s * c
        xs += Double(x[n]) * s; xc += Double(x[n]) * c
    }
    let det = ss * cc - sc * sc
    let a = (xs * cc - xc * sc) / det, b = (xc * ss - xs * sc) / det
    var signal = 0.0, noise = 0.0
    for n in range {
        let w = 2 * .pi * frequency * Double(n) / rate
        let fit = a * sin(w) + b * cos(w)
        signal += fit * fit
        noise += (Double(x[n]) - fit) * (Double(x[n]) - fit)
    }
    return ((a * a + b * b).squareRoot(), 10 * log10(signal / max(noise, 1e-30)))
}

/// SNR in dB of `x` against the reference `ref` (same length compared).
package func snr(_ x: [Float], reference ref: [Float]) -> Double {
    var signal = 0.0, noise = 0.0
    for i in 0..<min(x.count, ref.count) {
        signal += Double(ref[i]) * Double(ref[i])
        noise += Double(x[i] - ref[i]) * Double(x[i] - ref[i])
    }
    return 10 * log10(signal / max(noise, 1e-30))
}

package func maxAbsDifference(_ a: [Float], _ b: [Float]) -> Float {
    zip(a, b).reduce(Float(0)) { max($0, abs($1.0 - $1.1)) }
}

/// Asserts that `body` throws an AudioFileError of `kind` naming `path`, and returns it.
@discardableResult
package func assertAudioFileError<T>(_ kind: AudioFileError.Kind, path: String, file: StaticString = #filePath, line: UInt = #line,
                             _ body: () throws(AudioFileError) -> T) -> AudioFileError? {
    do {
        _ = try body()
        XCTFail("expected \(kind) error, got success", file: file, line: line)
        return nil
    } catch {
        XCTAssertEqual(error.kind, kind, "\(error)", file: file, line: line)
        XCTAssertEqual(error.path, path, file: file, line: line)
        XCTAssertFalse(error.description.contains("\n"), file: file, line: line)
        return error
    }
}

/// "The same bytes": compares two sample arrays bit for bit, so that −0 differs from +0 and a NaN matches only the
/// same NaN (`==` gets both wrong), and reports how many samples differ and the first of them instead of printing
/// whole arrays.
package func assertSameBits(_ a: [Float], _ b: [Float], _ message: @autoclosure () -> String = "",
                    file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(a.count, b.count, "sample count \(message())", file: file, line: line)
    let n = min(a.count, b.count)
    guard let i = (0..<n).first(where: { a[$0].bitPattern != b[$0].bitPattern }) else { return }
    let differing = (i..<n).count { a[$0].bitPattern != b[$0].bitPattern }
    func show(_ x: Float) -> String { "\(x) (0x\(String(x.bitPattern, radix: 16)))" }
    XCTFail("\(differing) of \(n) samples differ, the first at \(i): \(show(a[i])) vs \(show(b[i])); " +
            "max |diff| \(maxAbsDifference(Array(a[..<n]), Array(b[..<n]))) \(message())", file: file, line: line)
}

/// `assertSameBits` of two planar renderings, channel by channel.
package func assertSameBits(_ a: Mix, _ b: Mix, _ message: @autoclosure () -> String = "",
                    file: StaticString = #filePath, line: UInt = #line) {
    assertSameBits(a.left, b.left, "left \(message())", file: file, line: line)
    assertSameBits(a.right, b.right, "right \(message())", file: file, line: line)
}

/// `assertSameBits` of two decoded files' channels.
package func assertSameBits(_ a: [[Float]], _ b: [[Float]], _ message: @autoclosure () -> String = "",
                    file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(a.count, b.count, "channel count \(message())", file: file, line: line)
    for (c, (x, y)) in zip(a, b).enumerated() { assertSameBits(x, y, "channel \(c) \(message())", file: file, line: line) }
}

/// The long suite: classes named `…LongTests` hold the slow cases (every preset, every path, long files, the
/// bundled demos through the command line), each a superset of a quicker case in the default suite. They run only
/// with ENSEMBLE_LONG_TESTS=1 (`.ci/run` runs them in a release build: `swift test -c release --filter LongTests`)
/// and skip otherwise, so a plain `swift test` stays quick.
package func requireLongTests() throws {
    guard ProcessInfo.processInfo.environment["ENSEMBLE_LONG_TESTS"] == "1" else {
        throw XCTSkip("long test: runs with ENSEMBLE_LONG_TESTS=1 (.ci/run: swift test -c release --filter LongTests)")
    }
}

/// A tiny deterministic generator so the fuzz cases are reproducible (the soak driver's).
package typealias SplitMix64 = EnsembleSoak.SplitMix64
