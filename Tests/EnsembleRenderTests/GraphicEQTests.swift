import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The graphic equaliser's presets measure their documented band gains at the band centres.
///
/// Tolerance 0.1 dB at each centre. The table gives the response the EQ *measures* there, not raw filter
/// settings: neighbouring one-octave bands overlap, so `GraphicEQ.sections` solves the section gains until the
/// combined analytic response at every centre equals the table within 0.001 dB; what is left is Float output
/// rounding in the rendered impulse response (about 1e-5 dB).
final class GraphicEQTests: XCTestCase {
    func testThereAreTwentyTwoPresetsOfTenBands() {
        XCTAssertEqual(GraphicEQ.presets.count, 22)
        XCTAssertEqual(Set(GraphicEQ.presets.map { $0.name.lowercased() }).count, 22)
        for p in GraphicEQ.presets { XCTAssertEqual(p.gains.count, 10, p.name) }
        XCTAssertEqual(GraphicEQ.bandCentres, [31.5, 63, 125, 250, 500, 1000, 2000, 4000, 8000, 16000])
    }

    func testEveryPresetMeasuresItsBandGainsAtTheCentres() throws {
        var worstOverall = 0.0
        for preset in GraphicEQ.presets {
            let ir = try busImpulseResponse([EffectSpec.eq(preset: preset.name)])
            var worst = 0.0
            for (f, g) in zip(GraphicEQ.bandCentres, preset.gains) {
                worst = max(worst, abs(spectrumDecibels(ir, at: f) - g))
            }
            worstOverall = max(worstOverall, worst)
            XCTAssertLessThan(worst, 0.1, preset.name)
        }
        print("graphic EQ: worst band-centre error over all presets \(String(format: "%.2e", worstOverall)) dB")
    }

    /// Between the centres too, the rendered response is the product of its sections' analytic responses.
    func testResponseIsTheProductOfItsSections() throws {
        let gains = GraphicEQ.preset(named: "rock")!
        let sections = GraphicEQ.sections(gains: gains, sampleRate: 48000)
        XCTAssertEqual(sections.count, 10)
        let ir = try busImpulseResponse([.graphicEQ(gains: gains)])
        for f in responseFrequencies {
            let expected = sections.reduce(0) { $0 + $1.decibels(at: f, sampleRate: 48000) }
            XCTAssertEqual(spectrumDecibels(ir, at: f), expected, accuracy: 0.1, "\(f) Hz")
        }
    }

    func testSectionGainsStayReasonable() {
        // The solved settings must not be wild (an ill-conditioned solve would give ±30 dB sections).
        for preset in GraphicEQ.presets {
            let sections = GraphicEQ.sections(gains: preset.gains, sampleRate: 48000)
            for (k, s) in sections.enumerated() {
                let atCentre = s.decibels(at: GraphicEQ.bandCentres[k], sampleRate: 48000)
                XCTAssertLessThan(abs(atCentre), 15, "\(preset.name) band \(k)")
            }
        }
    }

    func testBandsAboveNinetyPercentOfNyquistAreLeftOut() {
        XCTAssertEqual(GraphicEQ.usableBands(sampleRate: 48000), 10)
        XCTAssertEqual(GraphicEQ.usableBands(sampleRate: 32000), 9)
        XCTAssertEqual(GraphicEQ.sections(gains: GraphicEQ.preset(named: "Rock")!, sampleRate: 22050).count, 9)
    }

    /// At every sample rate the solve converges: the analytic response at each usable centre is the table's.
    func testSolveConvergesAtEverySampleRate() {
        var worst = 0.0, loudestSection = 0.0
        for rate in [8000.0, 11025, 22050, 32000, 44100, 48000, 96000, 192000] {
            for preset in GraphicEQ.presets {
                let sections = GraphicEQ.sections(gains: preset.gains, sampleRate: rate)
                XCTAssertEqual(sections.count, GraphicEQ.usableBands(sampleRate: rate))
                for (k, f) in GraphicEQ.bandCentres.prefix(sections.count).enumerated() {
                    let response = sections.reduce(0) { $0 + $1.decibels(at: f, sampleRate: rate) }
                    worst = max(worst, abs(response - preset.gains[k]))
                    loudestSection = max(loudestSection, abs(sections[k].decibels(at: f, sampleRate: rate)))
                }
            }
        }
        print("graphic EQ solve: worst centre error \(worst) dB, largest section gain \(loudestSection) dB")
        XCTAssertLessThan(worst, 0.001)
        XCTAssertLessThan(loudestSection, 15)
    }

    /// The preset table of the "Buses and effects" article is the code's table.
    func testDocumentedTableMatchesTheCode() throws {
        let article = packageRoot.appendingPathComponent("Sources/Ensemble/Ensemble.docc/BusesAndEffects.md")
        let readme = try String(contentsOf: article, encoding: .utf8)
        for preset in GraphicEQ.presets {
            let row = try XCTUnwrap(readme.split(separator: "\n").first { $0.hasPrefix("| \(preset.name) |") }, preset.name)
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            XCTAssertEqual(cells.dropFirst().compactMap { Double($0) }, preset.gains, preset.name)
        }
    }

    func testUnknownPresetIsNil() {
        XCTAssertThrowsError(try EffectSpec.eq(preset: "Polka")) { error in
            XCTAssertEqual(error as? EngineError, .unknownPreset(kind: "graphic EQ", name: "Polka"))
            XCTAssertEqual("\(error)", "\"Polka\" is not a graphic EQ preset (`ensemble presets` lists them)")
        }
        XCTAssertNoThrow(try EffectSpec.eq(preset: "hip-hop"))
    }

    /// The preset list is the iPod EQ list (the "Buses and effects" article), no more and no fewer.
    func testPresetNamesAreTheIPodList() {
        let expected = ["Flat", "Acoustic", "Bass Booster", "Bass Reducer", "Classical", "Dance", "Deep", "Electronic",
                        "Hip-Hop", "Jazz", "Latin", "Loudness", "Lounge", "Piano", "Pop", "R&B", "Rock", "Small Speakers",
                        "Spoken Word", "Treble Booster", "Treble Reducer", "Vocal Booster"]
        XCTAssertEqual(GraphicEQ.presets.map(\.name), expected)
        XCTAssertTrue(GraphicEQ.presets.allSatisfy { $0.gains.count == 10 })
    }

    /// A scene names a preset with the iPod's spelling in any case ("R&B", "hip-hop", "SMALL SPEAKERS"), and
    /// gets that preset's gains; a near miss without the punctuation ("RnB", "Hip Hop") is refused.
    func testScenesAcceptThePresetNamesCaseInsensitively() throws {
        func parse(_ preset: String) throws(SceneError) -> Scene {
            let json = #"{"duration": 1, "master": {"effects": [{"type": "eq", "preset": "\#(preset)"}]}, "tracks": []}"#
            return try Scene.parse(Data(json.utf8), folder: "/tmp", path: "scene.json")
        }
        for preset in GraphicEQ.presets {
            for spelling in [preset.name, preset.name.lowercased(), preset.name.uppercased()] {
                let scene = try parse(spelling)
                XCTAssertEqual(scene.masterEffects, [.graphicEQ(gains: preset.gains)], spelling)
            }
        }
        for wrong in ["RnB", "Hip Hop", "SmallSpeakers", "Deeper"] {
            XCTAssertThrowsError(try parse(wrong), wrong)
        }
    }
}
