// Test thread: directional sources (sound cones) against OpenAL Soft, with the listener at several angles.
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Checked against OpenAL Soft: cone attenuation matches OpenAL Soft's within 0.1 dB. The source sits at
/// the origin pointing along +z; the listener stands 2 m away at an angle θ from that direction (facing −z as
/// by default, so the source is somewhere around it). The level is compared with the same scene's
/// omnidirectional source (direction zero): same distance, same panning, so the ratio is the cone's gain alone.
///
/// `testOpenALSoft…` checks the harness against the OpenAL 1.1 specification's cone (§4.3.5: inside half the
/// inner angle 1, outside half the outer angle AL_CONE_OUTER_GAIN, linear in the angle between).
final class OpenAL3DConeTests: XCTestCase {
    /// One cone and the listener angles (degrees from the source's direction) to try it from.
    struct Cone {
        var inner: Float
        var outer: Float
        var outerGain: Float
        var angles: [Double]
    }

    static let cones = [
        // Inside (0, 20), between (45 … 90), outside (110 … 180).
        Cone(inner: 60, outer: 200, outerGain: 0.2, angles: [0, 20, 45, 60, 75, 90, 110, 135, 180]),
        Cone(inner: 120, outer: 300, outerGain: 0.05, angles: [0, 45, 70, 100, 130, 160, 180]),
    ]

    static func scene(_ cone: Cone, angle: Double, directional: Bool) -> Scene3D {
        let a = angle * Double.pi / 180
        let listener = Listener(position: Vector3(Float(2 * sin(a)), 0, Float(2 * cos(a))))
        let source = SpatialSource(position: .zero, direction: directional ? Vector3(0, 0, 1) : .zero,
                                   coneInnerAngle: cone.inner, coneOuterAngle: cone.outer, coneOuterGain: cone.outerGain)
        return Scene3D(source: source, listener: listener)
    }

    /// For each cone and angle: the spec's cone gain and the level measured with `render` relative to the
    /// omnidirectional source (dB).
    static func measure(_ render: (Scene3D) throws -> [Float]) rethrows -> [(what: String, expected: Double, measuredDB: Double)] {
        var rows: [(String, Double, Double)] = []
        for cone in cones {
            for angle in cone.angles {
                let with = try render(scene(cone, angle: angle, directional: true))
                let without = try render(scene(cone, angle: angle, directional: false))
                let expected = SpecFormula.coneGain(angle: angle, inner: Double(cone.inner), outer: Double(cone.outer),
                                                    outerGain: Double(cone.outerGain))
                rows.append(("cone \(cone.inner)°/\(cone.outer)° outer gain \(cone.outerGain), listener at \(angle)°",
                             expected, levelRatioDB(with, over: without)))
            }
        }
        return rows
    }

    func testOpenALSoftMatchesTheSpecificationFormula() throws {
        let al = try OpenALReference()
        let rows = try Self.measure { try al.render($0, frames: levelFrames) }
        for r in rows {
            XCTAssertEqual(r.measuredDB, dB(r.expected), accuracy: 0.01, r.what)
        }
        XCTAssertTrue(rows.contains { $0.expected == 1 } && rows.contains { abs($0.expected - 0.05) < 1e-6 }
                      && rows.contains { $0.expected < 1 && $0.expected > 0.2 }, "inside, outside and between are all tried")
    }

    func testEnsembleMatchesOpenALSoft() throws {
        let al = try OpenALReference()
        let reference = try Self.measure { try al.render($0, frames: levelFrames) }
        let ours = try Self.measure { try renderEnsemble($0, frames: levelFrames) }
        print("OpenAL3D cone: \(ours.count) cases, worst |Ensemble − OpenAL Soft| = "
              + String(format: "%.4f dB", zip(ours, reference).map { abs($0.0.measuredDB - $0.1.measuredDB) }.max() ?? 0))
        for (e, a) in zip(ours, reference) {
            XCTAssertEqual(e.measuredDB, a.measuredDB, accuracy: 0.1,
                           "\(a.what): Ensemble \(e.measuredDB) dB, OpenAL Soft \(a.measuredDB) dB")
        }
    }
}
