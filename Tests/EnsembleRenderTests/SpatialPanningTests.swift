import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// `SpeakerPanner`: stereo equal-power law on the lateral component, 5.1/7.1 pairwise constant power at the ITU
/// angles with elevation spread evenly. Expectations from the laws themselves (cos/sin of known angles).
final class SpatialPanningTests: XCTestCase {
    /// The unit direction at `azimuth` degrees (positive right) and `elevation` degrees (positive up) in listener
    /// coordinates (−z ahead).
    private func direction(_ azimuth: Double, _ elevation: Double = 0) -> Vector3 {
        let a = azimuth * .pi / 180, e = elevation * .pi / 180
        return Vector3(Float(sin(a) * cos(e)), Float(sin(e)), Float(-cos(a) * cos(e)))
    }

    private func power(_ g: ChannelGains, _ layout: SpeakerLayout) -> Float {
        (0..<layout.channelCount).reduce(0) { $0 + g[$1] * g[$1] }
    }

    private func assertGains(_ g: ChannelGains, _ expected: [Float], accuracy: Float = 1e-5,
                             _ message: String = "", line: UInt = #line) {
        for (c, e) in expected.enumerated() {
            XCTAssertEqual(g[c], e, accuracy: accuracy, "channel \(c) \(message)", line: line)
        }
    }

    // MARK: Stereo

    func testStereoHardRightAndLeft() {
        let right = SpeakerPanner.gains(direction: Vector3(1, 0, 0), layout: .stereo)
        XCTAssertEqual(right[0], 0)
        XCTAssertEqual(right[1], 1)
        let left = SpeakerPanner.gains(direction: Vector3(-3, 0, 0), layout: .stereo)
        XCTAssertEqual(left[0], 1)
        XCTAssertEqual(left[1], 0)
    }

    func testStereoCentreAndZeroDirection() {
        let h = Float(0.5.squareRoot())
        for d in [Vector3(0, 0, -1), Vector3(0, 0, 1), Vector3(0, 1, 0), .zero] {
            let g = SpeakerPanner.gains(direction: d, layout: .stereo)
            XCTAssertEqual(g[0], h, accuracy: 1e-6, "\(d)")
            XCTAssertEqual(g[1], g[0], "\(d)")
        }
    }

    /// 30° right: p = sin 30° = 0.5, L = cos(1.5·π/4) = cos 67.5°, R = sin 67.5°.
    func testStereoLawAtThirtyDegrees() {
        let g = SpeakerPanner.gains(direction: direction(30), layout: .stereo)
        XCTAssertEqual(g[0], Float(cos(67.5 * Double.pi / 180)), accuracy: 1e-6)
        XCTAssertEqual(g[1], Float(sin(67.5 * Double.pi / 180)), accuracy: 1e-6)
    }

    func testStereoSymmetricMonotonicConstantPower() {
        var lastRight: Float = -1
        for a in stride(from: -90.0, through: 90.0, by: 2.5) {
            let g = SpeakerPanner.gains(direction: direction(a), layout: .stereo)
            let mirrored = SpeakerPanner.gains(direction: direction(-a), layout: .stereo)
            XCTAssertEqual(g[0], mirrored[1], accuracy: 1e-6, "azimuth \(a)")
            XCTAssertEqual(g[1], mirrored[0], accuracy: 1e-6, "azimuth \(a)")
            XCTAssertGreaterThan(g[1], lastRight, "right grows with azimuth, \(a)")
            lastRight = g[1]
            XCTAssertEqual(power(g, .stereo), 1, accuracy: 1e-6, "azimuth \(a)")
        }
    }

    /// Behind is the mirror image of in front (180° − a), and crossing behind the listener moves smoothly.
    func testStereoFrontBackMirrorAndNoJumpBehind() {
        for a in stride(from: -90.0, through: 90.0, by: 5) {
            let front = SpeakerPanner.gains(direction: direction(a), layout: .stereo)
            let back = SpeakerPanner.gains(direction: direction(180 - a), layout: .stereo)
            XCTAssertEqual(front[0], back[0], accuracy: 1e-6, "azimuth \(a)")
            XCTAssertEqual(front[1], back[1], accuracy: 1e-6, "azimuth \(a)")
        }
        var last = SpeakerPanner.gains(direction: direction(170), layout: .stereo)
        for a in stride(from: 170.5, through: 190.0, by: 0.5) {
            let g = SpeakerPanner.gains(direction: direction(a), layout: .stereo)
            XCTAssertLessThan(abs(g[0] - last[0]), 0.01, "azimuth \(a)")
            last = g
        }
    }

    /// Elevation reduces the left/right difference, down to none overhead, power unchanged.
    func testStereoElevationReducesDifference() {
        var lastDifference: Float = .infinity
        for e in stride(from: 0.0, through: 90.0, by: 10) {
            let g = SpeakerPanner.gains(direction: direction(60, e), layout: .stereo)
            let difference = g[1] - g[0]
            XCTAssertLessThan(difference, lastDifference, "elevation \(e)")
            XCTAssertGreaterThanOrEqual(difference, -1e-6)
            XCTAssertEqual(power(g, .stereo), 1, accuracy: 1e-6)
            lastDifference = difference
        }
        XCTAssertLessThan(lastDifference, 1e-6)
    }

    // MARK: 5.1 and 7.1

    /// (azimuth, channel) of every full-range speaker, from the ITU angles, independent of the panner's table.
    private let speakers51: [(Double, Int)] = [(-30, 0), (30, 1), (0, 2), (-110, 4), (110, 5)]
    private let speakers71: [(Double, Int)] = [(-30, 0), (30, 1), (0, 2), (-150, 4), (150, 5), (-90, 6), (90, 7)]

    func testSourceAtASpeakerFeedsOnlyThatSpeaker() {
        for (layout, speakers) in [(SpeakerLayout.surround51, speakers51), (.surround71, speakers71)] {
            for (azimuth, channel) in speakers {
                let g = SpeakerPanner.gains(direction: direction(azimuth), layout: layout)
                var expected = [Float](repeating: 0, count: layout.channelCount)
                expected[channel] = 1
                assertGains(g, expected, "\(layout) at \(azimuth)")
            }
        }
    }

    /// Halfway between adjacent speakers: 1/√2 on each.
    func testHalfwayBetweenSpeakers() {
        let h = Float(0.5.squareRoot())
        // 5.1 ring: FL −30, FC 0, FR 30, BR 110, BL −110.
        let pairs51: [(Double, Int, Int)] = [(15, 2, 1), (-15, 2, 0), (70, 1, 5), (-70, 0, 4), (180, 5, 4)]
        for (azimuth, a, b) in pairs51 {
            let g = SpeakerPanner.gains(direction: direction(azimuth), layout: .surround51)
            var expected = [Float](repeating: 0, count: 6)
            expected[a] = h
            expected[b] = h
            assertGains(g, expected, "5.1 at \(azimuth)")
        }
        // 7.1 ring: FL −30, FC 0, FR 30, SR 90, BR 150, BL −150, SL −90.
        let pairs71: [(Double, Int, Int)] = [(60, 1, 7), (120, 7, 5), (180, 5, 4), (-120, 6, 4), (-60, 0, 6)]
        for (azimuth, a, b) in pairs71 {
            let g = SpeakerPanner.gains(direction: direction(azimuth), layout: .surround71)
            var expected = [Float](repeating: 0, count: 8)
            expected[a] = h
            expected[b] = h
            assertGains(g, expected, "7.1 at \(azimuth)")
        }
    }

    /// A quarter of the way from FR (30°) to BR (110°) in 5.1: t = 0.25 → cos(π/8), sin(π/8).
    func testPairwiseLawInsideAPair() {
        let g = SpeakerPanner.gains(direction: direction(50), layout: .surround51)
        XCTAssertEqual(g[1], Float(cos(Double.pi / 8)), accuracy: 1e-5)
        XCTAssertEqual(g[5], Float(sin(Double.pi / 8)), accuracy: 1e-5)
        XCTAssertEqual(g[0] + g[2] + g[4], 0, accuracy: 1e-6)
    }

    /// Σg² = 1 everywhere, the LFE always 0, on a grid over the whole sphere.
    func testConstantPowerEverywhereAndNoLFE() {
        for layout in [SpeakerLayout.surround51, .surround71] {
            for a in stride(from: -180.0, through: 180.0, by: 7.5) {
                for e in stride(from: -90.0, through: 90.0, by: 15) {
                    let g = SpeakerPanner.gains(direction: direction(a, e), layout: layout)
                    XCTAssertEqual(power(g, layout), 1, accuracy: 1e-5, "\(layout) \(a) \(e)")
                    XCTAssertEqual(g[3], 0, "\(layout) LFE at \(a) \(e)")
                    for c in layout.channelCount..<8 { XCTAssertEqual(g[c], 0) }
                }
            }
        }
    }

    /// Overhead, underneath, and on the listener: the same even spread, 1/√N on every full-range speaker.
    func testPolesAndZeroSpreadEvenly() {
        for (layout, n) in [(SpeakerLayout.surround51, 5), (.surround71, 7)] {
            let even = Float(1 / Double(n).squareRoot())
            for d in [Vector3(0, 1, 0), Vector3(0, -2, 0), .zero] {
                let g = SpeakerPanner.gains(direction: d, layout: layout)
                for c in 0..<layout.channelCount {
                    XCTAssertEqual(g[c], c == 3 ? 0 : even, accuracy: 1e-6, "\(layout) \(d) channel \(c)")
                }
            }
        }
    }

    /// Approaching the pole from any azimuth the gains converge to the even spread: no jump at the pole.
    func testNoJumpAtThePoles() {
        for layout in [SpeakerLayout.surround51, .surround71] {
            let pole = SpeakerPanner.gains(direction: Vector3(0, 1, 0), layout: layout)
            for a in stride(from: -180.0, to: 180.0, by: 20) {
                let g = SpeakerPanner.gains(direction: direction(a, 89.5), layout: layout)
                for c in 0..<layout.channelCount {
                    XCTAssertEqual(g[c], pole[c], accuracy: 0.02, "\(layout) azimuth \(a) channel \(c)")
                }
            }
        }
    }

    /// Elevation moves power from the pair to the others in proportion: at 45° half the power is even.
    func testElevationSpreadsInProportion() {
        // 5.1, FR at 30°, elevation 45°: v = 0.5 → FR² = 0.5 + 0.5/5 = 0.6, others 0.1 each.
        let g = SpeakerPanner.gains(direction: direction(30, 45), layout: .surround51)
        XCTAssertEqual(g[1], Float(0.6.squareRoot()), accuracy: 1e-5)
        for c in [0, 2, 4, 5] { XCTAssertEqual(g[c], Float(0.1.squareRoot()), accuracy: 1e-5) }
    }

    /// The gains move continuously with azimuth all around (no jump at the wrap or at a speaker).
    func testContinuousInAzimuth() {
        for layout in [SpeakerLayout.surround51, .surround71] {
            var last = SpeakerPanner.gains(direction: direction(-180), layout: layout)
            for a in stride(from: -179.75, through: 180.0, by: 0.25) {
                let g = SpeakerPanner.gains(direction: direction(a), layout: layout)
                for c in 0..<layout.channelCount {
                    XCTAssertLessThan(abs(g[c] - last[c]), 0.02, "\(layout) azimuth \(a) channel \(c)")
                }
                last = g
            }
        }
    }
}
