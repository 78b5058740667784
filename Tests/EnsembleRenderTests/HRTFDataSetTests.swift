import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleRender

/// The `.mhr` reader and the HRIR set: the installed default's structure read back against its own bytes, a
/// measured direction's response equal to the stored one, the blend halfway between two measured directions,
/// resampling against the set measured at the other rate, and every kind of bad file refused with its error.
final class HRTFDataSetTests: XCTestCase {
    static let folder = "/usr/share/openal/hrtf"

    private func installed(_ rate: Int) throws -> (HRTF, [UInt8]) {
        let path = "\(Self.folder)/default-\(rate).mhr"
        guard let data = FileManager.default.contents(atPath: path) else {
            throw XCTSkip("OpenAL Soft's default HRTF data set is not installed (\(path))")
        }
        return (try HRTF(contentsOf: path), [UInt8](data))
    }

    /// A unit vector at `elevation` and `azimuth` degrees (clockwise from ahead) in listener coordinates.
    static func direction(elevation: Double, azimuth: Double) -> Vector3 {
        let e = elevation * .pi / 180, a = azimuth * .pi / 180
        return Vector3(Float(cos(e) * sin(a)), Float(sin(e)), Float(-cos(e) * cos(a)))
    }

    func testTheInstalledDefaultIsReadAsItsBytesSay() throws {
        let (set, bytes) = try installed(48000)
        // The header, read here byte by byte (docs/hrtf.txt): "MinPHR02", rate, 24-bit, left ear only, 32 taps,
        // one field at 1400 mm with 19 elevations.
        XCTAssertEqual(Array(bytes[0..<8]), Array("MinPHR02".utf8))
        XCTAssertEqual(Int(bytes[8]) | Int(bytes[9]) << 8 | Int(bytes[10]) << 16, 48000)
        XCTAssertEqual(bytes[12], 1, "24-bit samples")
        XCTAssertEqual(bytes[13], 0, "left ear only")
        XCTAssertEqual(set.sampleRate, 48000)
        XCTAssertEqual(set.responseLength, Int(bytes[14]))
        XCTAssertEqual(set.measurementDistance, Double(Int(bytes[16]) | Int(bytes[17]) << 8) / 1000)
        let rings = Int(bytes[18])
        XCTAssertEqual(set.azimuthCounts, bytes[19..<19 + rings].map(Int.init))
        XCTAssertEqual(set.azimuthCounts.first, 1, "one direction straight down")
        XCTAssertEqual(set.azimuthCounts.last, 1, "one straight up")
        let count = set.azimuthCounts.reduce(0, +), taps = set.responseLength
        XCTAssertEqual(set.directionCount, count)
        XCTAssertEqual(bytes.count, 19 + rings + count * taps * 3 + count, "taps then one delay per direction")
        // Direction 100's tap 5 and its delay, decoded here from the bytes.
        let start = 19 + rings, at = start + (100 * taps + 5) * 3
        var v = Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16
        if v >= 1 << 23 { v -= 1 << 24 }
        let ring = set.azimuthCounts.indices.first { r in set.azimuthCounts[...r].reduce(0, +) > 100 }!
        let index = 100 - set.azimuthCounts[..<ring].reduce(0, +)
        let measured = set.measuredResponse(elevationIndex: ring, azimuthIndex: index)
        XCTAssertEqual(measured.left[5], Float(v) / 8_388_608)
        XCTAssertEqual(measured.leftDelay, Float(bytes[start + count * taps * 3 + 100]))
        // One ear measured: the right ear at azimuth a is the left ear at −a.
        let n = set.azimuthCounts[9]
        for j in [1, 5, n / 4, n / 2 + 3] {
            let a = set.measuredResponse(elevationIndex: 9, azimuthIndex: j)
            let b = set.measuredResponse(elevationIndex: 9, azimuthIndex: (n - j) % n)
            XCTAssertEqual(a.right, b.left)
            XCTAssertEqual(a.rightDelay, b.leftDelay)
        }
        // A source on the right (azimuth 90°): the left ear's onset comes later than the right's.
        let right = set.measuredResponse(elevationIndex: 9, azimuthIndex: n / 4)
        XCTAssertGreaterThan(right.leftDelay, right.rightDelay + 10)
    }

    func testAMeasuredDirectionGivesItsStoredResponse() throws {
        let (set, _) = try installed(48000)
        let rings = set.azimuthCounts.count
        for (ring, j) in [(9, 0), (9, 7), (4, 3), (13, 11), (rings - 2, 5), (2, 20)] {
            let n = set.azimuthCounts[ring]
            let elevation = -90 + Double(ring) * 180 / Double(rings - 1)
            let got = set.response(towards: Self.direction(elevation: elevation, azimuth: Double(j) * 360 / Double(n)))
            let want = set.measuredResponse(elevationIndex: ring, azimuthIndex: j)
            for k in 0..<set.responseLength {
                XCTAssertEqual(got.left[k], want.left[k], accuracy: 1e-5, "ring \(ring) azimuth \(j) tap \(k)")
                XCTAssertEqual(got.right[k], want.right[k], accuracy: 1e-5, "ring \(ring) azimuth \(j) tap \(k)")
            }
            XCTAssertEqual(got.leftDelay, want.leftDelay)
            XCTAssertEqual(got.rightDelay, want.rightDelay)
        }
    }

    func testHalfwayBetweenTwoMeasuredDirectionsIsTheirMean() throws {
        let (set, _) = try installed(48000)
        let n = set.azimuthCounts[9] // the horizontal ring
        for j in [0, 3, n / 4 - 1, n - 1] {
            let a = set.measuredResponse(elevationIndex: 9, azimuthIndex: j)
            let b = set.measuredResponse(elevationIndex: 9, azimuthIndex: (j + 1) % n)
            let got = set.response(towards: Self.direction(elevation: 0, azimuth: (Double(j) + 0.5) * 360 / Double(n)))
            for k in 0..<set.responseLength {
                XCTAssertEqual(got.left[k], (a.left[k] + b.left[k]) / 2, accuracy: 2e-5, "azimuth \(j)+½ tap \(k)")
                XCTAssertEqual(got.right[k], (a.right[k] + b.right[k]) / 2, accuracy: 2e-5, "azimuth \(j)+½ tap \(k)")
            }
            XCTAssertEqual(abs(got.leftDelay - (a.leftDelay + b.leftDelay) / 2), 0, accuracy: 0.5001)
            XCTAssertEqual(abs(got.rightDelay - (a.rightDelay + b.rightDelay) / 2), 0, accuracy: 0.5001)
        }
        // Halfway in elevation between two rings, straight ahead (azimuth 0 is measured on both).
        let rings = set.azimuthCounts.count, step = 180 / Double(rings - 1)
        let lower = set.measuredResponse(elevationIndex: 9, azimuthIndex: 0)
        let upper = set.measuredResponse(elevationIndex: 10, azimuthIndex: 0)
        let got = set.response(towards: Self.direction(elevation: step / 2, azimuth: 0))
        for k in 0..<set.responseLength {
            XCTAssertEqual(got.left[k], (lower.left[k] + upper.left[k]) / 2, accuracy: 2e-5, "elevation ½ tap \(k)")
        }
        // On the listener: both ears alike, undelayed, at the pass-through gain √½.
        let centre = set.response(towards: .zero)
        XCTAssertEqual(centre.left, centre.right)
        XCTAssertEqual(centre.left[0], 0.70710678, accuracy: 1e-7)
        XCTAssertEqual(centre.left.dropFirst().map(abs).max(), 0)
    }

    /// The 48 kHz set resampled to 44.1 kHz against the 44.1 kHz set OpenAL Soft installs (made from the same
    /// measurements): magnitude responses within 2 dB RMS from 200 Hz to 14 kHz, and no further from it than the
    /// 48 kHz set itself is; the delays scaled.
    func testResamplingMatchesTheSetMeasuredAtTheOtherRate() throws {
        let (set48, _) = try installed(48000), (set44, _) = try installed(44100)
        let resampled = set48.resampled(to: 44100)
        XCTAssertEqual(resampled.sampleRate, 44100)
        XCTAssertEqual(resampled.azimuthCounts, set44.azimuthCounts)
        XCTAssertTrue(set48.resampled(to: 48000) === set48)
        // The inherent difference of the two sets (each at its own rate) is the yardstick: resampling adds
        // little to it.
        var resampledSquares = 0.0, inherentSquares = 0.0, count = 0.0, worst = 0.0
        for (ring, j) in [(9, 0), (9, 18), (9, 54), (5, 10), (14, 20)] {
            let a = resampled.measuredResponse(elevationIndex: ring, azimuthIndex: j)
            let b = set44.measuredResponse(elevationIndex: ring, azimuthIndex: j)
            let c = set48.measuredResponse(elevationIndex: ring, azimuthIndex: j)
            XCTAssertEqual(a.leftDelay, b.leftDelay, accuracy: 1.5, "ring \(ring) azimuth \(j)")
            for f in stride(from: 200.0, through: 14000, by: 200) {
                let d = Self.decibels(a.left, f, 44100) - Self.decibels(b.left, f, 44100)
                let e = Self.decibels(c.left, f, 48000) - Self.decibels(b.left, f, 44100)
                resampledSquares += d * d
                inherentSquares += e * e
                worst = max(worst, abs(d))
                count += 1
            }
        }
        let resampledRMS = sqrt(resampledSquares / count), inherentRMS = sqrt(inherentSquares / count)
        print(String(format: "resampled 48→44.1 kHz vs the 44.1 kHz set: %.2f dB RMS (largest %.1f dB); the sets themselves: %.2f dB RMS",
                     resampledRMS, worst, inherentRMS))
        XCTAssertLessThan(resampledRMS, 2)
        XCTAssertLessThan(resampledRMS, inherentRMS + 0.5)
    }

    static func decibels(_ h: [Float], _ f: Double, _ rate: Double) -> Double {
        var re = 0.0, im = 0.0
        for (k, x) in h.enumerated() {
            re += Double(x) * cos(2 * .pi * f * Double(k) / rate)
            im -= Double(x) * sin(2 * .pi * f * Double(k) / rate)
        }
        return 10 * log10(max(re * re + im * im, 1e-30))
    }

    func testBadFilesAreRefusedWithOneError() throws {
        let dir = try TemporaryDirectory()
        let (_, good) = try installed(48000)
        func load(_ bytes: [UInt8], _ name: String = "x.mhr") throws -> HRTFError? {
            let path = try dir.write(bytes, to: name)
            do { _ = try HRTF(contentsOf: path); return nil } catch { return error }
        }
        guard case .damaged(_, let what)? = try load(Array(good.prefix(5000))) else { return XCTFail("a cut file") }
        XCTAssertTrue(what.contains("ends inside"), what)
        guard case .notAnHRTF? = try load(Array("RIFF....WAVEfmt ".utf8)) else { return XCTFail("a WAV file") }
        guard case .unsupported? = try load(Array("MinPHR00".utf8) + [0x80, 0xbb, 0, 0]) else { return XCTFail("MinPHR00") }
        var taps = good
        taps[14] = 12
        guard case .damaged(_, let t)? = try load(taps) else { return XCTFail("12 taps") }
        XCTAssertTrue(t.contains("response length 12"), t)
        var fields = good
        fields[15] = 2
        guard case .unsupported? = try load(fields) else { return XCTFail("two fields") }
        var delay = good
        delay[delay.count - 1] = 64
        guard case .damaged(_, let d)? = try load(delay) else { return XCTFail("a delay of 64") }
        XCTAssertTrue(d.contains("delay of 64"), d)
        // (A damaged SOFA file: HRTFSOFATests.)
        do {
            _ = try HRTF(contentsOf: dir.file("missing.mhr"))
            XCTFail("a missing file")
        } catch {
            XCTAssertTrue(error.description.hasPrefix(dir.file("missing.mhr") + ": cannot read"), error.description)
        }
    }

    func testTheDefaultIsFoundAndResampledForOtherRates() throws {
        _ = try installed(48000)
        XCTAssertEqual(try HRTF.installedDefault(sampleRate: 44100).name, "\(Self.folder)/default-44100.mhr")
        let set = try HRTF.installedDefault(sampleRate: 96000)
        XCTAssertEqual(set.sampleRate, 96000)
        XCTAssertEqual(set.responseLength, 64)
    }

    func testHeadphonesWithSurroundOutputAreRefused() throws {
        let (set, _) = try installed(48000)
        var c = Engine.Configuration()
        c.rendering = .headphones(set)
        c.speakerLayout = .surround51
        XCTAssertThrowsError(try Engine(configuration: c)) { error in
            XCTAssertEqual(error as? EngineError, .headphonesNeedStereo(channels: 6))
        }
    }
}
