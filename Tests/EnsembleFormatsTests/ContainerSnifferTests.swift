import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

final class ContainerSnifferTests: XCTestCase {
    private func header(_ magic: String, _ form: String) -> [UInt8] {
        Array(magic.utf8) + le32(100) + Array(form.utf8) + [UInt8](repeating: 0, count: 100)
    }

    func testRecognisesEachContainerByMagic() {
        XCTAssertEqual(ContainerSniffer.sniff(header("RIFF", "WAVE")), .wav)
        XCTAssertEqual(ContainerSniffer.sniff(header("RIFX", "WAVE")), .rifx)
        XCTAssertEqual(ContainerSniffer.sniff(header("RF64", "WAVE")), .rf64)
        XCTAssertEqual(ContainerSniffer.sniff(header("FORM", "AIFF")), .aiff)
        XCTAssertEqual(ContainerSniffer.sniff(header("FORM", "AIFC")), .aifc)
        XCTAssertEqual(ContainerSniffer.sniff(Array("caff".utf8) + [0, 1, 0, 0]), .caf)
        XCTAssertEqual(ContainerSniffer.sniff(Array("fLaC".utf8) + [0, 0, 0, 34]), .flac)
        XCTAssertEqual(ContainerSniffer.sniff(Array("OggS".utf8) + [0, 2]), .ogg)
        XCTAssertEqual(AudioContainer.rifx.infoName, "wav")
    }

    func testRejectsLookalikes() {
        XCTAssertNil(ContainerSniffer.sniff(header("RIFF", "AVI ")))
        XCTAssertNil(ContainerSniffer.sniff(header("FORM", "ILBM")))
        XCTAssertNil(ContainerSniffer.sniff([]))
        XCTAssertNil(ContainerSniffer.sniff(Array("RIF".utf8)))
        XCTAssertNil(ContainerSniffer.sniff(Array("ID3".utf8)))
    }

    func testLAMEFileIsMP3WithAndWithoutID3Tag() throws {
        let bare = try [UInt8](Data(contentsOf: URL(fileURLWithPath: fixture("mp3/sine440-mono-cbr128.mp3"))))
        XCTAssertEqual(bare.prefix(2), [0xFF, 0xFB], "fixture should start with a bare frame sync")
        XCTAssertEqual(ContainerSniffer.sniff(bare), .mp3)
        // ID3v2.4 header with a 200-byte (synchsafe) body, then the frames.
        let tag: [UInt8] = Array("ID3".utf8) + [4, 0, 0, 0, 0, 1, 0x48] + [UInt8](repeating: 0x41, count: 200)
        XCTAssertEqual(ContainerSniffer.sniff(tag + bare), .mp3)
        // A tag whose size is not synchsafe is not ID3v2.
        XCTAssertNil(ContainerSniffer.sniff(Array("ID3".utf8) + [4, 0, 0, 0x80, 0, 0, 0] + [UInt8](repeating: 0, count: 64)))
    }

    func testBareSyncNeedsASecondFrame() {
        // A valid MPEG-1 Layer III 128 kbit/s 44.1 kHz header: frame length 417 bytes.
        let frameHeader: [UInt8] = [0xFF, 0xFB, 0x90, 0x00]
        var twoFrames = frameHeader + [UInt8](repeating: 0, count: 413)
        twoFrames += frameHeader + [UInt8](repeating: 0, count: 413)
        XCTAssertEqual(ContainerSniffer.sniff(twoFrames), .mp3)
        var broken = twoFrames
        broken[417] = 0x00
        XCTAssertNil(ContainerSniffer.sniff(broken), "second frame header missing")
    }

    func testRandomBytesAreNotAudio() {
        var rng = SplitMix64(seed: 0xE45E)
        var falsePositives = 0
        for trial in 0..<500 {
            var bytes = (0..<2048).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            // Half the trials start with a plausible frame sync, the case the second-frame check is for.
            if trial % 2 == 0 { bytes[0] = 0xFF; bytes[1] = 0xFB }
            if ContainerSniffer.sniff(bytes) != nil { falsePositives += 1 }
        }
        XCTAssertEqual(falsePositives, 0)
    }

    func testWAVNamedMP3DecodesAsWAV() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write(WAVBuilder.pcm16([0, 16384, -16384]).bytes, to: "actually-a-wav.mp3")
        let audio = try AudioFile.decode(path: path)
        XCTAssertEqual(audio.channels, [[0, 0.5, -0.5]])
        XCTAssertEqual(try AudioFile.info(path: path).container, "wav")
    }
}
