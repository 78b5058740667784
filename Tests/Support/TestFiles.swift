import Foundation
import XCTest
import Ensemble

/// Test files made at test time: a deterministic signal written in any container and codec, and MP3s through
/// ffmpeg (the tests that need a missing tool skip).
package enum TestFiles {
    /// A deterministic, non-periodic stereo test signal (a chirp-ish sum; different per channel).
    package static func signal(frames: Int, rate: Double, channels: Int) -> [[Float]] {
        (0..<channels).map { c in
            (0..<frames).map { i in
                let t = Double(i) / rate
                return Float(0.4 * sin(2 * .pi * (220 + 30 * Double(c)) * t + 3 * sin(0.7 * t))
                             + 0.2 * sin(2 * .pi * 1234.5 * t * (1 + 0.01 * Double(c))))
            }
        }
    }

    /// Writes a test file; `ogg` goes through sox (skipped when sox is missing).
    package static func makeFile(_ dir: TemporaryDirectory, _ name: String, container: String, codec: OutputFormat.Codec,
                         seconds: Double, rate: Double, channels: Int) throws -> String {
        let audio = DecodedAudio(sampleRate: rate, channels: signal(frames: Int(seconds * rate), rate: rate, channels: channels))
        if container == "ogg" {
            let sox = try requireTool("sox")
            let wav = dir.file(name + ".src.wav")
            try AudioFileWriter.write(audio, format: OutputFormat(container: .wav, codec: .pcm16), to: wav)
            let out = dir.file(name + ".ogg")
            let r = try runProcess(sox, [wav, out])
            guard r.status == 0 else { throw XCTSkip("sox cannot write Ogg Vorbis here") }
            return out
        }
        let out = dir.file(name + "." + container)
        try AudioFileWriter.write(audio, format: OutputFormat(container: OutputFormat.Container(rawValue: container)!,
                                                             codec: codec), to: out)
        return out
    }

    /// Makes an MP3 with ffmpeg (libmp3lame, with its LAME/Xing header unless `xing` is false; 128 kbit/s, or VBR
    /// quality 4 with `vbr`), or skips.
    package static func makeMP3(_ dir: TemporaryDirectory, seconds: Double = 1, channels: Int = 1, xing: Bool = true,
                        vbr: Bool = false) throws -> String {
        let ffmpeg = try requireTool("ffmpeg")
        let wav = dir.file("src.wav")
        try AudioFileWriter.write(DecodedAudio(sampleRate: 44100, channels: signal(frames: Int(seconds * 44100), rate: 44100,
                                                                                 channels: channels)),
                                  format: OutputFormat(container: .wav, codec: .pcm16), to: wav)
        let mp3 = dir.file((xing ? "x" : "noxing") + (vbr ? "-vbr" : "") + ".mp3")
        let r = try runProcess(ffmpeg, ["-v", "error", "-y", "-i", wav, "-c:a", "libmp3lame"]
                               + (vbr ? ["-q:a", "4"] : ["-b:a", "128k"])
                               + (xing ? [] : ["-write_xing", "0"]) + [mp3])
        guard r.status == 0 else { throw XCTSkip("ffmpeg cannot encode MP3 here") }
        return mp3
    }
}
