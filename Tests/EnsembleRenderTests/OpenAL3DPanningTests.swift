// Test thread: the left/right energy of a positioned source on stereo output as it goes round the listener.
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// For OpenAL Soft and Ensemble alike: the left/right energy ratio is monotonic in azimuth and symmetric. Each
/// renderer pans its own way (OpenAL Soft through its ambisonic stereo decoder, Ensemble with the equal-power
/// law), so the shapes are compared with the properties, not with each other: the left share of the energy
/// falls from hard left to hard right across the front (strictly at every 15° for Ensemble), mirrors about straight ahead, and an elevated
/// source is nearer the middle than one on the horizontal plane at the same azimuth. Ensemble also mirrors front
/// and back ("no jump when a source crosses behind the listener").
///
/// The same property checks on OpenAL Soft (`testOpenALSoft…`) show that they hold for a real 3D renderer and
/// that the measurement (left share of the energy in a steady window) sees them.
final class OpenAL3DPanningTests: XCTestCase {
    static let azimuths = stride(from: -90.0, through: 90.0, by: 15.0).map { $0 }
    static let distance: Float = 2

    static func scene(azimuth: Double, elevation: Double = 0) -> Scene3D {
        let e = elevation * Double.pi / 180
        let h = horizontalDirection(azimuth: azimuth) * Float(cos(e))
        let position = Vector3(h.x, Float(sin(e)), h.z) * distance
        return Scene3D(source: SpatialSource(position: position))
    }

    static func leftShare(_ render: (Scene3D) throws -> [Float], azimuth: Double, elevation: Double = 0) rethrows -> Double {
        ChannelEnergy(try render(scene(azimuth: azimuth, elevation: elevation)), levelWindow).leftShare
    }

    /// `strictly`: the share must fall at every step (Ensemble's equal-power law spans the whole ±90°); otherwise
    /// it must never rise (OpenAL Soft's stereo decoder is already hard left at −60° and stays there).
    private func assertPanningProperties(_ render: (Scene3D) throws -> [Float], _ name: String, strictly: Bool,
                                         file: StaticString = #filePath, line: UInt = #line) throws {
        let shares = try Self.azimuths.map { try Self.leftShare(render, azimuth: $0) }
        for i in 1..<shares.count {
            let what = "\(name): left share falls from \(Self.azimuths[i - 1])° to \(Self.azimuths[i])°: \(shares)"
            if strictly {
                XCTAssertLessThan(shares[i], shares[i - 1] - 1e-4, what, file: file, line: line)
            } else {
                XCTAssertLessThanOrEqual(shares[i], shares[i - 1] + 1e-9, what, file: file, line: line)
            }
        }
        // Between −30° and 30° (the front stage of any stereo panner) it falls at every step.
        for i in 1..<shares.count where abs(Self.azimuths[i]) <= 30 && abs(Self.azimuths[i - 1]) <= 30 {
            XCTAssertLessThan(shares[i], shares[i - 1] - 1e-2, "\(name): \(Self.azimuths[i])°", file: file, line: line)
        }
        for (i, a) in Self.azimuths.enumerated() {
            let mirror = shares[shares.count - 1 - i]
            XCTAssertEqual(shares[i], 1 - mirror, accuracy: 1e-4, "\(name): \(a)° mirrors \(-a)°", file: file, line: line)
        }
        XCTAssertEqual(shares[shares.count / 2], 0.5, accuracy: 1e-4, "\(name): straight ahead is centred", file: file, line: line)
        XCTAssertGreaterThan(shares[0], 0.75, "\(name): hard left is clearly left", file: file, line: line)
        // Elevation reduces the left/right difference.
        for azimuth in [30.0, 60.0, 90.0] {
            let flat = try Self.leftShare(render, azimuth: azimuth)
            let raised = try Self.leftShare(render, azimuth: azimuth, elevation: 50)
            XCTAssertGreaterThan(raised, flat + 1e-3, "\(name): at \(azimuth)°, raised 50° is nearer the middle", file: file, line: line)
            XCTAssertLessThan(raised, 0.5, "\(name): still right of centre", file: file, line: line)
        }
    }

    func testOpenALSoftIsMonotonicAndSymmetric() throws {
        let al = try OpenALReference()
        try assertPanningProperties({ try al.render($0, frames: levelFrames) }, "OpenAL Soft", strictly: false)
    }

    func testEnsembleIsMonotonicAndSymmetric() throws {
        try assertPanningProperties({ try renderEnsemble($0, frames: levelFrames) }, "Ensemble", strictly: true)
    }

    /// Front and back mirrored: a source at azimuth 180° − a sounds where one at a does (same left share).
    func testEnsembleMirrorsFrontAndBack() throws {
        for a in [0.0, 20.0, 45.0, 70.0, -30.0] {
            let front = try Self.leftShare({ try renderEnsemble($0, frames: levelFrames) }, azimuth: a)
            let back = try Self.leftShare({ try renderEnsemble($0, frames: levelFrames) }, azimuth: 180 - a)
            XCTAssertEqual(back, front, accuracy: 1e-3, "\(180 - a)° behind sounds as \(a)° in front")
            if a != 0 {
                XCTAssertGreaterThan(abs(front - 0.5), 0.05, "\(a)° is off centre (the source is panned at all)")
            }
        }
    }
}
