import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene
#if canImport(Glibc)
import Glibc
#endif

/// Streaming keeps memory bounded whatever the files' length: `ensemble render` of 100 tracks, each streaming
/// its own ten-minute file, must stay far below what decoding the files would take.
final class StreamingMemoryTests: XCTestCase {
    /// 10 minutes of a mono 16-bit 48 kHz tone, written in one-second blocks (57.6 MB on disk).
    private func writeTenMinuteWAV(_ path: String) throws {
        let rate = 48000, seconds = 600
        let dataBytes = UInt32(rate * seconds * 2)
        var header = Array("RIFF".utf8) + le32(36 + dataBytes) + Array("WAVEfmt ".utf8)
        header += le32(16) + le16(1) + le16(1) + le32(UInt32(rate)) + le32(UInt32(rate * 2)) + le16(2) + le16(16)
        header += Array("data".utf8) + le32(dataBytes)
        let second = (0..<rate).flatMap { i -> [UInt8] in
            le16(UInt16(bitPattern: Int16(8000 * sin(2 * .pi * 220 * Double(i) / Double(rate)))))
        }
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: nil), "created \(path)")
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.write(contentsOf: header)
        let block = Data(second)
        for _ in 0..<seconds { try handle.write(contentsOf: block) }
        try handle.close()
    }

    /// Runs `executable` with `arguments` and returns its exit status and peak resident set in bytes: the
    /// largest `VmHWM` of the child's own memory read from /proc while it runs. (Not wait4's `ru_maxrss`: glibc's
    /// posix_spawn runs the child in this process's memory until it execs, and the kernel carries that memory's
    /// high-water mark into the child's `ru_maxrss`, so a child of a large test process reported the test
    /// process's size: 149–288 MB for a 79 MB render late in a full test run.)
    private func runMeasuringPeakMemory(_ executable: String, _ arguments: [String]) throws -> (status: Int32, peak: Int) {
        var argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, &argv, environ)
        guard spawned == 0 else { throw XCTSkip("cannot spawn \(executable): \(spawned)") }
        var status: Int32 = 0
        var peak = 0
        // VmHWM only grows; the last read before the child exits is its peak up to then (read every 2 ms).
        while waitpid(pid, &status, WNOHANG) == 0 {
            if let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
               let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
               let kB = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") {
                peak = max(peak, kB * 1024)
            }
            usleep(2000)
        }
        return ((status >> 8) & 0xff, peak)
    }

    func testHundredTenMinuteStreamsStayUnderBound() throws {
        let dir = try TemporaryDirectory()
        let original = dir.file("long.wav")
        try writeTenMinuteWAV(original)
        // A hundred files, each opened and decoded by its own stream (hard links: one copy on disk).
        var tracks: [String] = []
        for i in 0..<100 {
            let name = "long\(i).wav"
            try FileManager.default.linkItem(atPath: original, toPath: dir.file(name))
            tracks.append(#"{"file":"\#(name)","stream":true,"offset":\#(i * 5),"pan":\#(Double(i % 21) / 10 - 1),"volume":0.01}"#)
        }
        let scene = try dir.write(Array(#"{"duration":2,"tracks":[\#(tracks.joined(separator: ","))]}"#.utf8), to: "scene.json")

        let (status, peak) = try runMeasuringPeakMemory(try ensembleExecutable(), ["render", scene, "-o", dir.file("out.wav")])
        XCTAssertEqual(status, 0)
        let decodedWould = 100 * 600 * 48000 * 4  // 100 files × 28.8 M frames × Float
        // Bound: 100 rings of 2 s mono Float (38.4 MB) plus the process itself; decoding would need 11.5 GB.
        let bound = 250 * 1024 * 1024
        print(String(format: "100 streams of 10-minute files: peak RSS %.1f MB (bound %.0f MB; decoding all: %.1f GB)",
                     Double(peak) / 1e6, Double(bound) / 1e6, Double(decodedWould) / 1e9))
        XCTAssertGreaterThan(peak, 38 * 1024 * 1024, "the rings themselves are there")
        XCTAssertLessThan(peak, bound)
        let audio = try AudioFile.decode(path: dir.file("out.wav"))
        XCTAssertEqual(audio.frameCount, 96000)
        XCTAssertGreaterThan(audio.channels[0].map(abs).max() ?? 0, 0.1, "the streams were heard")
    }
}
