import XCTest
import EnsembleTestSupport
@_spi(Testing) import Ensemble
@_spi(Testing) import EnsembleRender

/// What a scene makes the engine allocate beyond its sounds (stream rings, effect state) is checked against the
/// memory the process can still allocate before it is allocated: one line and exit 1, not an abort in the allocator.
final class SceneMemoryTests: XCTestCase {
    private let dir = try! TemporaryDirectory()
    private let sound = packageRoot.appendingPathComponent("Assets/fx_coin.wav").path

    /// Renders `json` under a 2.5 GB address-space limit.
    private func renderLimited(_ json: String) throws -> ProcessResult {
        let scene = try dir.write(Array(json.utf8), to: "s.json")
        let command = "ulimit -v 2500000; exec '\(try ensembleExecutable())' render '\(scene)' -o '\(dir.file("o.wav"))'"
        return try runProcess(try requireTool("bash"), ["-c", command])
    }

    func testStreamRingsBeyondTheMemoryLeftAreRefusedUpFront() throws {
        let tracks = (0..<10_000).map { #"{"file": "\#(sound)", "name": "t\#($0)", "stream": true}"# }
        let result = try renderLimited(#"{"duration": 1, "tracks": [\#(tracks.joined(separator: ","))]}"#)
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains(": the scene's 10000 streamed tracks need "), result.stderr)
        // Sizes as ByteCountText writes them ("1.9 GB", "870 MB"), never a bare count of megabytes.
        XCTAssertNotNil(result.stderr.range(of: #" need [0-9.]+ [kMGT]B of stream buffers; only [0-9.]+ [kMGT]B of memory are available\n$"#,
                                            options: .regularExpression), result.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file("o.wav")))
    }

    func testEffectStateBeyondTheMemoryLeftIsRefusedUpFront() throws {
        let delays = [String](repeating: #"{"type": "delay", "time": 5}"#, count: 2000).joined(separator: ",")
        let result = try renderLimited(#"{"duration": 1, "tracks": [{"file": "\#(sound)"}], "master": {"effects": [\#(delays)]}}"#)
        XCTAssertEqual(result.status, 1, result.stderr)
        // 2000 delays × 5 s × 48 kHz × 2 channels × 4 bytes = 3.84 GB, written as ByteCountText writes it.
        XCTAssertTrue(result.stderr.contains(": master: the effect chain needs 3.8 GB of memory; only "), result.stderr)
    }

    /// The reverb's bound is at least what it allocates, for every preset at the ends of the rate range.
    func testTheReverbsMemoryBoundHoldsForEveryPresetAndRate() {
        for name in ReverbSettings.presetNames {
            let settings = ReverbSettings.preset(named: name)!
            for rate in [8000.0, 48000, 384_000] {
                var reverb = Reverb(settings: settings, sampleRate: rate)
                let floats = 8 * reverb.lineStride + 4 * reverb.diffuserStride + 2 * (reverb.inputMask + 1) + 8
                XCTAssertGreaterThanOrEqual(EffectSpec.reverb(settings).stateBytes(sampleRate: rate), 4 * floats, "\(name) at \(rate)")
                reverb.reset()
                reverb.deallocate()
            }
        }
    }
}
