import Foundation
import XCTest
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// OpenAL Soft configurations for machines without a sound card. The wave writer ("Wave File Writer"
/// backend) plays in real time into a WAV file; with these settings OpenAL Soft passes float samples through
/// untouched: float32 output at 48 kHz stereo, no limiter, no dither, no HRTF, no crossfeed.
package enum OpenALTestConfig {
    package static func wave(recordingTo file: String, periodFrames: Int = 240) -> String {
        """
        [general]
        drivers=wave
        sample-type=float32
        frequency=48000
        channels=stereo
        period_size=\(periodFrames)
        output-limiter=false
        dither=false
        hrtf=false
        stereo-mode=speakers
        [wave]
        file=\(file)

        """
    }

    /// A configuration under which no device can be opened: the only driver named does not exist.
    package static let noDriver = "[general]\ndrivers=no-such-driver\n"

    /// The in-process configuration. OpenAL Soft reads its configuration once, at the first OpenAL call in
    /// the process, so every in-process OpenAL test calls `install()` first and shares one recording file.
    nonisolated(unsafe) private static var installed: String?
    /// Its directory, removed when the process exits.
    nonisolated(unsafe) private static var directory: String?
    private static let lock = NSLock()

    /// Sets ALSOFT_CONF for this process (once) and returns the path of the wave writer's recording.
    @discardableResult
    package static func install() throws -> String {
        lock.lock()
        defer { lock.unlock() }
        if let installed { return installed }
        // In memory (tmpfs) where there is one: a device reopen truncates the recording, which on a disk waits for
        // its pages' writeback, and a busy disk held the soak's reopener (and so the output) for seconds.
        var isDirectory: ObjCBool = false
        let memory = FileManager.default.fileExists(atPath: "/dev/shm", isDirectory: &isDirectory) && isDirectory.boolValue
            && FileManager.default.isWritableFile(atPath: "/dev/shm")
        let dir = (memory ? "/dev/shm" : FileManager.default.temporaryDirectory.path) + "/ensemble-openal-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let recording = dir + "/recording.wav", conf = dir + "/alsoft.conf"
        try wave(recordingTo: recording).write(toFile: conf, atomically: true, encoding: .utf8)
        setenv("ALSOFT_CONF", conf, 1)
        installed = recording
        directory = dir
        atexit { if let dir = OpenALTestConfig.directory { try? FileManager.default.removeItem(atPath: dir) } }
        return recording
    }
}

/// Decodes a recording (or render) to interleaved stereo frames.
package func interleavedStereo(_ path: String) throws -> [Float] {
    let audio = try AudioFile.decode(path: path)
    XCTAssertEqual(audio.channelCount, 2)
    var out = [Float](repeating: 0, count: 2 * audio.frameCount)
    for i in 0..<audio.frameCount {
        out[2 * i] = audio.channels[0][i]
        out[2 * i + 1] = audio.channels[1][i]
    }
    return out
}

/// The first frame with a non-zero sample in either channel.
package func firstSoundingFrame(_ x: [Float], from start: Int = 0) -> Int? {
    var i = start
    while 2 * i + 1 < x.count {
        if x[2 * i] != 0 || x[2 * i + 1] != 0 { return i }
        i += 1
    }
    return nil
}

/// Frames `range` of an interleaved stereo array.
package func frames(_ x: [Float], _ range: Range<Int>) -> [Float] {
    Array(x[(2 * range.lowerBound)..<min(x.count, 2 * range.upperBound)])
}

/// What `playMatchesRender` saw, for checks of its own.
package struct PlayedScene {
    /// `ensemble play`'s stderr (the summary line).
    package var stderr: String
    /// The wave writer's recording, interleaved stereo.
    package var recording: [Float]
    /// Frames of leading silence the device added before the scene.
    package var lead: Int
}

/// Renders `scene` with `ensemble render`, plays it in real time with `ensemble play` through OpenAL Soft's wave
/// writer, and checks that the recording after the device's leading silence equals the render sample for
/// sample (no tolerance: the float path is bit-transparent) and lasts `frames` frames.
///
/// Real time on a shared 2-core machine: a busy moment can starve the render thread and make the device play a
/// gap (an underrun, which `play` reports). That says nothing about the samples, so such a run is repeated, up
/// to three times, with a generous ring.
@discardableResult
package func playMatchesRender(_ scene: String, in dir: TemporaryDirectory, frames count: Int, environment extra: [String: String] = [:],
                       file: StaticString = #filePath, line: UInt = #line) throws -> PlayedScene {
    let rendered = dir.file("render.wav"), recordingPath = dir.file("recording.wav")
    let r = try runProcess(try ensembleExecutable(), ["render", scene, "-o", rendered])
    XCTAssertEqual(r.status, 0, r.stderr, file: file, line: line)
    let conf = try dir.write(Array(OpenALTestConfig.wave(recordingTo: recordingPath).utf8), to: "alsoft.conf")
    let environment = extra.merging(["ALSOFT_CONF": conf]) { _, wave in wave }
    var p = try runProcess(try ensembleExecutable(), ["play", scene, "--latency", "100"], environment: environment)
    for attempt in 2...3 where p.stderr.contains("underrun") {
        print("ensemble play run \(attempt - 1) had underruns (machine busy); repeating")
        p = try runProcess(try ensembleExecutable(), ["play", scene, "--latency", "100"], environment: environment)
    }
    XCTAssertEqual(p.status, 0, p.stderr, file: file, line: line)
    XCTAssertFalse(p.stderr.contains("underrun"), "no underrun may spoil the comparison: \(p.stderr)", file: file, line: line)

    let reference = try interleavedStereo(rendered), played = try interleavedStereo(recordingPath)
    XCTAssertEqual(reference.count, 2 * count, file: file, line: line)
    let lead = try XCTUnwrap(firstSoundingFrame(played), file: file, line: line)
        - XCTUnwrap(firstSoundingFrame(reference), file: file, line: line)
    XCTAssertGreaterThanOrEqual(lead, 0, file: file, line: line)
    XCTAssertGreaterThanOrEqual(played.count, 2 * (lead + count), "the whole scene was recorded", file: file, line: line)
    assertSameBits(frames(played, lead..<(lead + count)), reference, "recording vs render", file: file, line: line)
    return PlayedScene(stderr: p.stderr, recording: played, lead: lead)
}
