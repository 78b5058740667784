import XCTest
import EnsembleTestSupport
#if canImport(FoundationXML)
import FoundationXML
#endif
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// `ensemble render --plot`: the SVG is well-formed XML, has a lane per track and effect with their names, puts
/// every start, end, pass and command where its frame says (x = plotLeft + frame · plotWidth / frames), and
/// draws the waveform's true extremes; a bad path fails in one line and leaves nothing behind.
final class MixPlotTests: XCTestCase {
    private var dir: TemporaryDirectory!

    override func setUpWithError() throws { dir = try TemporaryDirectory() }
    override func tearDown() { dir = nil }

    /// Elements of an SVG file, in document order, with their attributes and text.
    private final class Elements: NSObject, XMLParserDelegate {
        var all: [(name: String, attributes: [String: String], text: String)] = []
        private var open: [Int] = []

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String]) {
            open.append(all.count)
            all.append((name, attributes, ""))
        }
        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if let i = open.last { all[i].text += string }
        }
        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            open.removeLast()
        }
    }

    private func parseSVG(_ path: String) throws -> [(name: String, attributes: [String: String], text: String)] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let parser = XMLParser(data: data)
        let elements = Elements()
        parser.delegate = elements
        XCTAssertTrue(parser.parse(), "not well-formed XML: \(String(describing: parser.parserError))")
        return elements.all
    }

    /// The x the plot must give `frame` of a `frames`-long scene, from the published scale.
    private func expectedX(_ frame: Int64, of frames: Int64) -> Double {
        MixPlot.plotLeft + Double(frame) * MixPlot.plotWidth / Double(frames)
    }

    private func numbers(_ s: String) -> [Double] {
        s.split(whereSeparator: { " ,MLZ".contains($0) }).compactMap { Double($0) }
    }

    /// A 0.5 s tone (24000 frames) played at 0.25 s with one extra pass, a 300-frame click at 0.5 s, a volume
    /// change at 1.0 s and a pan change after the tone has ended (dropped), in a 2 s scene (96000 frames).
    func testLanesAndFramesLandOnTheirX() throws {
        let tone = (0..<24000).map { Float(0.25 * sin(2 * .pi * 441 * Double($0) / 48000)) }
        _ = try dir.write(WAVBuilder.float32(tone, rate: 48000).bytes, to: "tone.wav")
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.1, count: 300), rate: 48000).bytes, to: "click.wav")
        let scene = try dir.write(Array("""
        { "duration": 2,
          "tracks": [ { "name": "tone & co", "file": "tone.wav", "start": 0.25, "loops": 1, "fadeIn": 0.125 } ],
          "effects": [ { "name": "click", "file": "click.wav", "at": 0.5 } ],
          "timeline": [ { "at": 1.0, "track": "tone & co", "set": { "volume": 0.5 } },
                        { "at": 1.5, "track": "tone & co", "set": { "pan": 0.5 } } ] }
        """.utf8), to: "scene.json")
        let result = try runProcess(try ensembleExecutable(),
                                    ["render", scene, "-o", dir.file("out.wav"), "--plot", dir.file("plot.svg")])
        XCTAssertEqual(result.status, 0, result.stderr)
        let elements = try parseSVG(dir.file("plot.svg"))
        XCTAssertEqual(elements.first?.name, "svg")

        // One lane per track and per effect, in scene order, labelled with their names.
        let lanes = elements.filter { $0.name == "g" && $0.attributes["class"] == "lane" }
        XCTAssertEqual(lanes.map { $0.attributes["data-name"] }, ["tone & co", "click"])
        XCTAssertEqual(lanes.map { $0.attributes["data-kind"] }, ["track", "effect"])
        XCTAssertEqual(elements.filter { $0.attributes["class"] == "lane-label" }.map(\.text), ["tone & co", "click"])

        let frames: Int64 = 96000
        let spans = elements.filter { $0.attributes["class"] == "span" }
        XCTAssertEqual(spans.count, 2)
        // The tone: first sample on 12000, ends after 2 × 24000 frames, on 60000; its fade-in reaches the top at
        // 12000 + 6000. Polygon points: bottom-left, top after the fade-in, top before the fade-out, bottom-right.
        let tonePoints = numbers(try XCTUnwrap(spans[0].attributes["points"]))
        XCTAssertEqual(spans[0].attributes["data-start-frame"], "12000")
        XCTAssertEqual(spans[0].attributes["data-end-frame"], "60000")
        XCTAssertEqual(tonePoints[0], expectedX(12000, of: frames), accuracy: 0.006)
        XCTAssertEqual(tonePoints[2], expectedX(18000, of: frames), accuracy: 0.006)
        XCTAssertEqual(tonePoints[6], expectedX(60000, of: frames), accuracy: 0.006)
        // The click: 24000 to 24300.
        let clickPoints = numbers(try XCTUnwrap(spans[1].attributes["points"]))
        XCTAssertEqual(clickPoints[0], expectedX(24000, of: frames), accuracy: 0.006)
        XCTAssertEqual(spans[1].attributes["data-end-frame"], "24300")
        XCTAssertEqual(clickPoints[6], max(expectedX(24300, of: frames), expectedX(24000, of: frames) + 2), accuracy: 0.006)

        // The second pass begins 24000 frames after the start.
        let passes = elements.filter { $0.attributes["class"] == "pass" }
        XCTAssertEqual(passes.map { $0.attributes["data-frame"] }, ["36000"])
        XCTAssertEqual(Double(passes[0].attributes["x1"] ?? "") ?? -1, expectedX(36000, of: frames), accuracy: 0.006)

        // The volume change applies on 48000; the pan change comes after the end and is dropped.
        let commands = elements.filter { $0.attributes["class"] == "command" }
        XCTAssertEqual(commands.map { $0.attributes["data-frame"] }, ["48000", "72000"])
        XCTAssertEqual(numbers(commands[0].attributes["d"] ?? "")[0], expectedX(48000, of: frames), accuracy: 0.006)
        let texts = elements.filter { $0.name == "text" }.map(\.text)
        XCTAssertTrue(texts.contains("set volume"))
        XCTAssertTrue(texts.contains("set pan (dropped)"))
        XCTAssertEqual(elements.filter { $0.attributes["class"] == "reason" }.map(\.text), ["finished"])

        // Labelled ticks every 0.2 s (the smallest 1-2-5 step at least 70 px apart on 1120 px for 2 s).
        XCTAssertEqual(elements.filter { $0.attributes["class"] == "tick" }.map(\.text),
                       ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0", "1.2", "1.4", "1.6", "1.8", "2.0"])
    }

    /// Under a voice cap of 1, a low-priority track starting while a higher one plays starts virtual (held by the
    /// cap) and comes back when the keeper ends: its lane shows one span from its start to its natural end.
    func testTrackHeldByTheCapOnItsFirstFrameKeepsItsSpan() throws {
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.1, count: 48000), rate: 48000).bytes, to: "a.wav")
        let scene = try dir.write(Array("""
        { "maxVoices": 1,
          "tracks": [ { "name": "keeper", "file": "a.wav", "priority": 200 },
                      { "name": "loser", "file": "a.wav", "start": 0.25, "priority": 10 } ] }
        """.utf8), to: "scene.json")
        let result = try runProcess(try ensembleExecutable(),
                                    ["render", scene, "-o", dir.file("out.wav"), "--plot", dir.file("plot.svg")])
        XCTAssertEqual(result.status, 0, result.stderr)
        let elements = try parseSVG(dir.file("plot.svg"))
        let spans = elements.filter { $0.attributes["class"] == "span" }
        XCTAssertEqual(spans.map { $0.attributes["data-start-frame"] }, ["0", "12000"])
        XCTAssertEqual(spans.map { $0.attributes["data-end-frame"] }, ["48000", "60000"])
        XCTAssertEqual(elements.filter { $0.attributes["class"] == "reason" }.map(\.text), ["finished", "finished"])
    }

    /// A full-scale stereo square wave (±1, pan 0 passes stereo through unchanged) draws each channel's
    /// waveform from exactly +1 to exactly −1: y = centre ∓ waveformScale.
    func testFullScaleSquareWaveSpansPlusToMinusOne() throws {
        let square = (0..<48000).flatMap { i -> [Float] in
            let v: Float = (i / 24) % 2 == 0 ? 1 : -1
            return [v, v]
        }
        _ = try dir.write(WAVBuilder.float32(square, channels: 2, rate: 48000).bytes, to: "square.wav")
        let scene = try dir.write(Array(#"{"tracks": [{"file": "square.wav"}]}"#.utf8), to: "scene.json")
        let result = try runProcess(try ensembleExecutable(),
                                    ["render", scene, "-o", dir.file("out.wav"), "--plot", dir.file("plot.svg")])
        XCTAssertEqual(result.status, 0, result.stderr)
        let elements = try parseSVG(dir.file("plot.svg"))
        let paths = elements.filter { $0.attributes["class"] == "waveform" }
        XCTAssertEqual(paths.count, 2)
        var centres: [Double] = []
        for path in paths {
            let values = numbers(try XCTUnwrap(path.attributes["d"]))
            let ys = stride(from: 1, to: values.count, by: 2).map { values[$0] }
            let xs = stride(from: 0, to: values.count, by: 2).map { values[$0] }
            let top = try XCTUnwrap(ys.min()), bottom = try XCTUnwrap(ys.max())
            XCTAssertEqual(bottom - top, 2 * MixPlot.waveformScale, accuracy: 0.011)
            // Every column holds both signs (24-frame half periods, 40 frames a column), so the outline is flat.
            XCTAssertEqual(Set(ys).count, 2)
            XCTAssertEqual(try XCTUnwrap(xs.min()), MixPlot.plotLeft, accuracy: 0.006)
            XCTAssertEqual(try XCTUnwrap(xs.max()), MixPlot.plotLeft + MixPlot.plotWidth, accuracy: 0.006)
            centres.append((top + bottom) / 2)
        }
        // The channel lanes are stacked 100 px apart.
        XCTAssertEqual(centres[1] - centres[0], 100, accuracy: 0.011)
        let peaks = elements.filter { $0.name == "text" }.map(\.text).first { $0.contains("peak") } ?? ""
        XCTAssertTrue(peaks.contains("Left +0.0 dBFS, Right +0.0 dBFS"), peaks)
    }

    /// Block by block, in any block sizes, the overview holds each column's true extremes: column of frame f is
    /// ⌊f · columns / frames⌋ (computed here frame by frame).
    func testOverviewKeepsEachColumnsExtremesWhateverTheBlocks() {
        let frames = 1003, columns = 37
        let samples = (0..<frames).flatMap { i -> [Float] in
            [Float(sin(Double(i) * 0.37)), Float(i % 7) / 7 - 0.4]
        }
        var expectedMin = [[Float]](repeating: [Float](repeating: .infinity, count: columns), count: 2)
        var expectedMax = [[Float]](repeating: [Float](repeating: -.infinity, count: columns), count: 2)
        for i in 0..<frames {
            let column = i * columns / frames
            for c in 0..<2 {
                expectedMin[c][column] = min(expectedMin[c][column], samples[2 * i + c])
                expectedMax[c][column] = max(expectedMax[c][column], samples[2 * i + c])
            }
        }
        for blockSizes in [[1], [64], [1000, 3], [7, 500, 13]] {
            var overview = WaveformOverview(columns: columns, frameCount: Int64(frames))
            var done = 0, k = 0
            samples.withUnsafeBufferPointer { all in
                while done < frames {
                    let n = min(blockSizes[k % blockSizes.count], frames - done)
                    overview.add(interleaved: UnsafeBufferPointer(rebasing: all[(2 * done)..<(2 * (done + n))]))
                    done += n
                    k += 1
                }
            }
            XCTAssertEqual(overview.minimum, expectedMin, "\(blockSizes)")
            XCTAssertEqual(overview.maximum, expectedMax, "\(blockSizes)")
            XCTAssertEqual(overview.framesAdded, Int64(frames))
        }
    }

    /// A --plot that cannot be written: one line naming it, exit 1, and neither the plot nor the mix (nor a
    /// temporary file) is left behind.
    func testBadPlotPathFailsInOneLineAndLeavesNothing() throws {
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.1, count: 4800), rate: 48000).bytes, to: "a.wav")
        let scene = try dir.write(Array(#"{"tracks": [{"file": "a.wav"}]}"#.utf8), to: "scene.json")
        try FileManager.default.createDirectory(atPath: dir.file("taken"), withIntermediateDirectories: false)
        for plot in [dir.file("missing/plot.svg"), dir.file("taken")] {
            let result = try runProcess(try ensembleExecutable(),
                                        ["render", scene, "-o", dir.file("out.wav"), "--plot", plot])
            XCTAssertEqual(result.status, 1, plot)
            XCTAssertEqual(result.stderr.filter { $0 == "\n" }.count, 1, result.stderr)
            XCTAssertTrue(result.stderr.hasPrefix("ensemble: \(plot): "), result.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file("out.wav")), "no mix without its plot")
            let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
            XCTAssertEqual(left, ["a.wav", "scene.json", "taken"], "no temporary files")
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.file("taken")), [])
        }
    }
}
