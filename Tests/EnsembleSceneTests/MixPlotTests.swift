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

    private typealias Element = (name: String, attributes: [String: String], text: String)

    /// Renders `json` (its files in `dir`) with `--plot plot.svg` and parses the plot.
    private func renderPlot(_ json: String, environment: [String: String] = [:]) throws -> [Element] {
        let scene = try dir.write(Array(json.utf8), to: "scene.json")
        let result = try runProcess(try ensembleExecutable(),
                                    ["render", scene, "-o", dir.file("out.wav"), "--plot", dir.file("plot.svg")],
                                    environment: environment)
        XCTAssertEqual(result.status, 0, result.stderr)
        return try parseSVG(dir.file("plot.svg"))
    }

    /// The elements inside the lane named `name` (its `<g>` and everything up to the next lane or the axis).
    private func lane(_ name: String, in elements: [Element]) throws -> [Element] {
        let start = try XCTUnwrap(elements.firstIndex { $0.attributes["class"] == "lane" && $0.attributes["data-name"] == name })
        let end = elements[(start + 1)...].firstIndex { ["lane", "axis"].contains($0.attributes["class"] ?? "") } ?? elements.count
        return Array(elements[start..<end])
    }

    /// A polygon's corners as (x, y) pairs.
    private func corners(_ element: Element) -> [(x: Double, y: Double)] {
        let values = numbers(element.attributes["points"] ?? "")
        return stride(from: 0, to: values.count - 1, by: 2).map { (values[$0], values[$0 + 1]) }
    }

    /// A mono 0.1 constant of `frames` frames at 48 kHz, written as `name`.
    private func constant(_ name: String, frames: Int) throws {
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.1, count: frames), rate: 48000).bytes, to: name)
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
        // 12000 + 6000; the volume change at 48000 ramps it to half over the 5 ms smoothing time (240 frames).
        // Polygon points: bottom-left, top after the fade-in, top where the ramp starts, half where it ends,
        // half at the end, bottom-right.
        let tonePoints = numbers(try XCTUnwrap(spans[0].attributes["points"]))
        XCTAssertEqual(spans[0].attributes["data-start-frame"], "12000")
        XCTAssertEqual(spans[0].attributes["data-end-frame"], "60000")
        XCTAssertEqual(tonePoints.count, 12, "\(tonePoints)")
        if tonePoints.count == 12 {
            XCTAssertEqual(tonePoints[0], expectedX(12000, of: frames), accuracy: 0.006)
            XCTAssertEqual(tonePoints[2], expectedX(18000, of: frames), accuracy: 0.006)
            XCTAssertEqual(tonePoints[4], expectedX(48000, of: frames), accuracy: 0.006)
            XCTAssertEqual(tonePoints[6], expectedX(48240, of: frames), accuracy: 0.006)
            XCTAssertEqual(tonePoints[8], expectedX(60000, of: frames), accuracy: 0.006)
            XCTAssertEqual(2 * (tonePoints[1] - tonePoints[7]), tonePoints[1] - tonePoints[3], accuracy: 0.011, "half height")
            XCTAssertEqual(tonePoints[9], tonePoints[7], accuracy: 0.006, "holds at half")
        }
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

    /// Values print as a person writes them: a track at rate 0.8 says "rate 0.8" (not the Float widened to
    /// 0.800000011920929), and whole values drop their ".0".
    func testValuesPrintAsWritten() throws {
        XCTAssertEqual(MixPlot.decimal(Float(0.8)), "0.8")
        XCTAssertEqual(MixPlot.decimal(Float(0.1)), "0.1")
        XCTAssertEqual(MixPlot.decimal(Float(1.5)), "1.5")
        XCTAssertEqual(MixPlot.decimal(Float(2)), "2")
        XCTAssertEqual(MixPlot.decimal(0.25), "0.25")
        try constant("a.wav", frames: 4800)
        let elements = try renderPlot(#"{"tracks": [{"name": "slow", "file": "a.wav", "rate": 0.8}]}"#)
        let texts = try lane("slow", in: elements).filter { $0.name == "text" }.map(\.text)
        XCTAssertTrue(texts.contains("rate 0.8"), "\(texts)")
        XCTAssertFalse(elements.contains { $0.text.contains("0.80000") }, "no widened Float anywhere")
    }

    /// Lanes share one volume scale: a span's height over its lane's baseline is its volume times the height
    /// of the lane's full-scale (dashed) line over that baseline: 0.25 is a quarter of it, 0.75 three quarters,
    /// an effect firing at 0.5 half; the scale is labelled 1 and 0.
    func testLaneHeightsAreVolumeToScale() throws {
        try constant("a.wav", frames: 4800)
        let elements = try renderPlot("""
        { "duration": 0.2,
          "tracks": [ { "name": "quiet", "file": "a.wav", "volume": 0.25 }, { "name": "loud", "file": "a.wav", "volume": 0.75 } ],
          "effects": [ { "name": "half", "file": "a.wav", "at": 0.1, "volume": 0.5 } ] }
        """)
        for (name, volume) in [("quiet", 0.25), ("loud", 0.75), ("half", 0.5)] {
            let lane = try lane(name, in: elements)
            let span = try XCTUnwrap(lane.first { $0.attributes["class"] == "span" })
            let ys = corners(span).map(\.y)
            let baseline = try XCTUnwrap(ys.max()), top = try XCTUnwrap(ys.min())
            let scale = try XCTUnwrap(lane.first { $0.attributes["class"] == "scale" })
            let fullScale = baseline - (Double(scale.attributes["y1"] ?? "") ?? .nan)
            XCTAssertGreaterThan(fullScale, 10, name)
            XCTAssertEqual(baseline - top, volume * fullScale, accuracy: 0.011, name)
            XCTAssertEqual(lane.first { $0.attributes["class"] == "scale-top" }?.text, "1", name)
            XCTAssertEqual(lane.first { $0.attributes["class"] == "scale-bottom" }?.text, "0", name)
        }
    }

    /// A timeline duck is the lane's level going down over its ramp, holding, and coming back over the next
    /// ramp, as the engine ramps the volume (from the level on the command's frame to the new one, `ramp`
    /// seconds later; without `ramp` the 5 ms smoothing time, 240 frames). A 2 s track at volume 0.8 ducks
    /// to 0.2 at 0.5 s over 0.25 s, comes back to 0.8 at 1.0 s over 0.5 s; a bus steps to 0.5 at 0.5 s and
    /// comes back to 1 at 1.5 s without a ramp. Rendering twice gives the same bytes.
    func testTimelineDucksAreDrawnAsEnvelopes() throws {
        try constant("a.wav", frames: 96000)
        let json = """
        { "duration": 2, "buses": [ { "name": "music" } ],
          "tracks": [ { "name": "ducked", "file": "a.wav", "volume": 0.8, "bus": "music" } ],
          "timeline": [ { "at": 0.5, "track": "ducked", "set": { "volume": 0.2 }, "ramp": 0.25 },
                        { "at": 1.0, "track": "ducked", "set": { "volume": 0.8 }, "ramp": 0.5 },
                        { "at": 0.5, "bus": "music", "set": { "volume": 0.5 }, "ramp": 0 },
                        { "at": 1.5, "bus": "music", "set": { "volume": 1 } } ] }
        """
        let elements = try renderPlot(json)
        let frames: Int64 = 96000
        func check(_ polygon: Element, _ expected: [(frame: Int64, volume: Double)], _ what: String) throws {
            let points = corners(polygon)
            let baseline = try XCTUnwrap(points.first?.y)
            XCTAssertEqual(points.count, expected.count + 2, "\(what): \(points)")
            guard points.count == expected.count + 2 else { return }
            // Bottom corners at the ends, the level's corners between.
            XCTAssertEqual(points.last?.y ?? .nan, baseline, accuracy: 0.006, what)
            for (point, corner) in zip(points.dropFirst().dropLast(), expected) {
                XCTAssertEqual(point.x, expectedX(corner.frame, of: frames), accuracy: 0.006, "\(what) x at \(corner.frame)")
                XCTAssertEqual(baseline - point.y, corner.volume * MixPlot.levelHeight, accuracy: 0.006,
                               "\(what) level at \(corner.frame)")
            }
        }
        let track = try XCTUnwrap(try lane("ducked", in: elements).first { $0.attributes["class"] == "span" })
        try check(track, [(0, 0.8), (24000, 0.8), (36000, 0.2), (48000, 0.2), (72000, 0.8), (96000, 0.8)], "track")
        let bus = try XCTUnwrap(try lane("music", in: elements).first { $0.attributes["class"] == "level" })
        try check(bus, [(0, 1), (24000, 1), (24000, 0.5), (72000, 0.5), (72240, 1), (96000, 1)], "bus")

        let first = try Data(contentsOf: URL(fileURLWithPath: dir.file("plot.svg")))
        _ = try renderPlot(json)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: dir.file("plot.svg"))), first, "same scene, same bytes")
    }

    /// A lane's name and summary are never cut: they wrap onto as many lines as they need, the lane grows to
    /// hold them, and the next lane starts below them.
    func testLongNamesAndSummariesWrapWhole() throws {
        try constant("a.wav", frames: 4800)
        let name = "a-very-long-track-name-indeed"
        let elements = try renderPlot("""
        { "duration": 0.2, "buses": [ { "name": "cavernous-reverb" }, { "name": "distant-echo" } ],
          "tracks": [ { "name": "\(name)", "file": "a.wav", "loops": 1, "rate": 1.5, "bus": "distant-echo",
                        "sends": [ { "bus": "cavernous-reverb" }, { "bus": "master" } ],
                        "filter": { "type": "lowpass", "gain": 1, "gainHF": 0.5 } },
                      { "name": "next", "file": "a.wav" } ] }
        """)
        let lane = try lane(name, in: elements)
        let texts = lane.filter { $0.name == "text" && $0.attributes["class"] != "reason" && !($0.attributes["class"] ?? "").hasPrefix("scale") }
        XCTAssertFalse(elements.contains { $0.text.contains("…") }, "nothing cut short")
        // Name lines (bold), then summary lines; wrapped at spaces, or after a hyphen inside a long word.
        let nameLines = texts.filter { $0.attributes["font-weight"] == "bold" }.map(\.text)
        let detailLines = texts.filter { $0.attributes["font-weight"] != "bold" }.map(\.text)
        XCTAssertGreaterThan(nameLines.count, 1)
        XCTAssertEqual(nameLines.joined(), name)
        XCTAssertEqual(detailLines.joined(separator: " "),
                       "loops 1 · rate 1.5 · bus distant-echo · sends cavernous-reverb, master · filter lowpass")
        // The next lane's label is below the last line of this one.
        let lastY = try XCTUnwrap(texts.compactMap { Double($0.attributes["y"] ?? "") }.max())
        let nextLabel = try XCTUnwrap(try self.lane("next", in: elements).first { $0.attributes["class"] == "lane-label" })
        XCTAssertGreaterThan(Double(nextLabel.attributes["y"] ?? "") ?? 0, lastY + 13)
    }

    /// An effect's lane says which bus its firings go to (and where they send); each firing's tooltip too.
    func testEffectLanesShowTheirBus() throws {
        try constant("a.wav", frames: 480)
        let elements = try renderPlot("""
        { "duration": 0.2, "buses": [ { "name": "sfx" }, { "name": "cave" } ],
          "effects": [ { "name": "coin", "file": "a.wav", "at": 0, "bus": "sfx", "sends": [ { "bus": "cave" } ] },
                       { "name": "coin", "file": "a.wav", "at": 0.1, "bus": "sfx" },
                       { "name": "step", "file": "a.wav", "at": 0.05 } ] }
        """)
        // The summary's lines (the 11 px texts; it may wrap) read whole.
        func summary(_ lane: [Element]) -> String {
            lane.filter { $0.name == "text" && $0.attributes["font-size"] == "11" && $0.attributes["class"] != "reason" }
                .map(\.text).joined(separator: " ")
        }
        let coin = try lane("coin", in: elements)
        XCTAssertEqual(summary(coin), "2 firings · bus sfx · sends cave")
        let tips = coin.filter { $0.name == "title" }.map(\.text)
        XCTAssertEqual(tips.count, 2)
        XCTAssertTrue(tips.allSatisfy { $0.hasSuffix("volume 1, bus sfx") }, "\(tips)")
        let step = try lane("step", in: elements)
        XCTAssertEqual(summary(step), "1 firing · bus master")
    }

    /// A firing its effect's limits refused never sounded: a dashed tick on its frame, labelled `refused`, and
    /// no span; the firing it did not displace keeps its bar.
    func testRefusedFiringsAreDashedTicks() throws {
        try constant("a.wav", frames: 4800)
        let elements = try renderPlot("""
        { "duration": 0.2,
          "effects": [ { "name": "click", "file": "a.wav", "at": 0, "maxInstances": 1, "steal": "none" },
                       { "name": "click", "file": "a.wav", "at": 0.05 } ] }
        """)
        let click = try lane("click", in: elements)
        let refused = click.filter { $0.attributes["class"] == "refused" }
        XCTAssertEqual(refused.map { $0.attributes["data-start-frame"] }, ["2400"])
        XCTAssertEqual(refused.first?.attributes["stroke-dasharray"], "3 2")
        XCTAssertEqual(Double(refused.first?.attributes["x1"] ?? "") ?? -1, expectedX(2400, of: 9600), accuracy: 0.006)
        XCTAssertEqual(click.filter { $0.attributes["class"] == "span" }.map { $0.attributes["data-start-frame"] }, ["0"])
        XCTAssertTrue(click.contains { $0.attributes["class"] == "reason" && $0.text == "refused" })
    }

    /// With rsvg-convert installed, `--plot x.svg` also writes x.png: a PNG of the plot's own size.
    func testPNGBesideThePlotWithRsvgConvert() throws {
        _ = try requireTool("rsvg-convert")
        try constant("a.wav", frames: 4800)
        let elements = try renderPlot(#"{"tracks": [{"file": "a.wav"}]}"#)
        let png = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir.file("plot.png"))))
        XCTAssertEqual(Array(png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "PNG signature")
        // IHDR: width and height, big-endian, at bytes 16 and 20.
        func word(_ at: Int) -> Int { png[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        XCTAssertEqual(word(16), 1400)
        XCTAssertEqual(Double(word(20)), Double(elements.first?.attributes["height"] ?? "") ?? -1, accuracy: 1)
    }

    /// Without rsvg-convert (a PATH that has none) the render succeeds as before: no PNG, nothing more on stderr.
    func testNoPNGAndNoComplaintWithoutRsvgConvert() throws {
        try constant("a.wav", frames: 4800)
        let empty = try TemporaryDirectory()
        let scene = try dir.write(Array(#"{"tracks": [{"file": "a.wav"}]}"#.utf8), to: "scene.json")
        let result = try runProcess(try ensembleExecutable(),
                                    ["render", scene, "-o", dir.file("out.wav"), "--plot", dir.file("plot.svg")],
                                    environment: ["PATH": empty.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.hasPrefix("rendered "), result.stderr)
        XCTAssertEqual(result.stderr.filter { $0 == "\n" }.count, 1, result.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted(),
                       ["a.wav", "out.wav", "plot.svg", "scene.json"])
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
