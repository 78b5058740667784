// Test thread: doppler shift against OpenAL Soft, measured as the frequency of a shifted 1 kHz sine.
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Checked against OpenAL Soft: doppler-shifted sine frequencies match OpenAL Soft's within 0.1 %, for a
/// moving source, a moving listener, both, a doppler factor of 2 and a changed speed of sound. Velocities are
/// constant and positions fixed (OpenAL never moves a source by its velocity), so the pitch is constant.
///
/// `testOpenALSoft…` checks the harness: OpenAL Soft's measured frequency against the OpenAL 1.1
/// specification's §3.5.2 formula computed by hand, played at OpenAL Soft's 12-bit fixed-point step.
final class OpenAL3DDopplerTests: XCTestCase {
    /// A named scene and the doppler pitch the specification gives it.
    struct Case {
        var name: String
        var scene: Scene3D
        var pitch: Double {
            let s = scene.source, l = scene.listener
            return SpecFormula.dopplerPitch(sourcePosition: s.position, sourceVelocity: s.velocity,
                                            listenerPosition: l.position, listenerVelocity: l.velocity,
                                            dopplerFactor: Double(scene.settings.dopplerFactor),
                                            speedOfSound: Double(scene.settings.speedOfSound))
        }
    }

    static var cases: [Case] {
        let ahead = Vector3(0, 0, -10)
        func scene(source: Vector3 = ahead, sourceVelocity: Vector3 = .zero, listenerVelocity: Vector3 = .zero,
                   dopplerFactor: Float = 1, speedOfSound: Float = 343.3, at: Vector3 = Vector3(0, 0, -1)) -> Scene3D {
            Scene3D(source: SpatialSource(position: source, velocity: sourceVelocity),
                    listener: Listener(velocity: listenerVelocity, at: at),
                    settings: SpatialSettings(dopplerFactor: dopplerFactor, speedOfSound: speedOfSound))
        }
        return [
            Case(name: "static (no shift)", scene: scene()),
            Case(name: "source approaching at 20 m/s", scene: scene(sourceVelocity: Vector3(0, 0, 20))),
            Case(name: "source receding at 30 m/s", scene: scene(sourceVelocity: Vector3(0, 0, -30))),
            Case(name: "listener approaching at 15 m/s", scene: scene(listenerVelocity: Vector3(0, 0, -15))),
            Case(name: "both: source receding 10, listener approaching 25",
                 scene: scene(sourceVelocity: Vector3(0, 0, -10), listenerVelocity: Vector3(0, 0, -25))),
            Case(name: "doppler factor 2, source approaching at 20", scene: scene(sourceVelocity: Vector3(0, 0, 20), dopplerFactor: 2)),
            Case(name: "speed of sound 150, source approaching at 20", scene: scene(sourceVelocity: Vector3(0, 0, 20), speedOfSound: 150)),
            // Off the axis, with a velocity partly across it: only the projection on the source–listener line
            // counts (10 m/s towards the listener here), and the listener faces +x, which must not matter.
            Case(name: "oblique, listener turned",
                 scene: scene(source: Vector3(6, 0, -8), sourceVelocity: Vector3(-10, 0, 5), at: Vector3(1, 0, 0))),
            Case(name: "doppler factor 0 (off)", scene: scene(sourceVelocity: Vector3(0, 0, 20), dopplerFactor: 0)),
        ]
    }

    /// 0.1 s to settle (a glide of the rate, a start), then 0.5 s measured.
    static let frames = 28800
    static let window = 4800..<28800

    func testOpenALSoftMatchesTheSpecificationFormula() throws {
        let al = try OpenALReference()
        var shifted = 0
        for c in Self.cases {
            let f = toneFrequency(try al.render(c.scene, frames: Self.frames), Self.window)
            let expected = TestTone.frequency * SpecFormula.openALSoftStep(c.pitch)
            XCTAssertEqual(f / expected, 1, accuracy: 2e-5, "\(c.name): \(f) Hz, the specification says \(expected) Hz")
            if abs(c.pitch - 1) > 0.02 { shifted += 1 }
        }
        XCTAssertEqual(shifted, Self.cases.count - 2, "every moving case shifts by more than 2 %")
    }

    func testEnsembleMatchesOpenALSoft() throws {
        let al = try OpenALReference()
        var worst = 0.0
        for c in Self.cases {
            let reference = toneFrequency(try al.render(c.scene, frames: Self.frames), Self.window)
            let ours = toneFrequency(try renderEnsemble(c.scene, frames: Self.frames), Self.window)
            XCTAssertEqual(ours / reference, 1, accuracy: 0.001, "\(c.name): Ensemble \(ours) Hz, OpenAL Soft \(reference) Hz")
            worst = max(worst, abs(ours / reference - 1))
        }
        print("OpenAL3D doppler: \(Self.cases.count) cases, worst |Ensemble / OpenAL Soft − 1| = " + String(format: "%.4f %%", worst * 100))
    }

    /// The same with Ensemble's cubic resampler: the doppler rate must not depend on the resampler.
    func testEnsembleCubicMatchesOpenALSoft() throws {
        let al = try OpenALReference()
        for c in Self.cases where c.name.hasPrefix("both") {
            let reference = toneFrequency(try al.render(c.scene, frames: Self.frames), Self.window)
            let ours = toneFrequency(try renderEnsemble(c.scene, frames: Self.frames, resampler: .cubic), Self.window)
            XCTAssertEqual(ours / reference, 1, accuracy: 0.001, "\(c.name): Ensemble \(ours) Hz, OpenAL Soft \(reference) Hz")
        }
    }
}
