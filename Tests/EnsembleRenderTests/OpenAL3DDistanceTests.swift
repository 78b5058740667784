// Test thread: distance attenuation against OpenAL Soft, level at distance d relative to the level at the
// reference distance, for the seven distance models (engine-wide and per source).
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Checked against OpenAL Soft: for each distance model and distances from 0.5 to 100 m, the level at
/// distance d relative to the level at the reference distance matches OpenAL Soft's within 0.1 dB. The source
/// is straight ahead of the listener, so each renderer's own panning is the same at every distance and cancels
/// in the ratio.
///
/// The `testOpenAL…` methods check the harness itself: OpenAL Soft's measured ratios against the OpenAL 1.1
/// specification's formulas computed by hand (§3.4 distance models, §4.3.3 AL_MIN_GAIN/AL_MAX_GAIN clamp — so
/// a gain above 1 near the source, as the unclamped models give below the reference distance, plays at 1).
final class OpenAL3DDistanceTests: XCTestCase {
    static let distances: [Float] = [0.5, 1, 2, 5, 10, 20, 50, 100]
    static let reference: Float = 1
    /// Below the largest distance, so the clamped models' clamp and the linear models' zero are exercised.
    static let maxDistance: Float = 50
    static let rolloffs: [Float] = [1, 2]

    /// One row of the table: a model, a rolloff and a distance, and what each side measured.
    struct Row {
        var model: DistanceModel
        var rolloff: Float
        var distance: Float
        /// Spec formula, clamped to 0…1 (AL_MIN_GAIN, AL_MAX_GAIN), relative to the same at the reference distance.
        var expectedGain: Double
        /// Measured level relative to the level at the reference distance, dB (−∞: silent).
        var measuredDB: Double
    }

    /// A source straight ahead of a listener at the origin facing −z, `distance` away.
    static func scene(model: DistanceModel, rolloff: Float, distance: Float, perSource: Bool) -> Scene3D {
        var source = SpatialSource(position: Vector3(0, 0, -distance), referenceDistance: reference,
                                   maxDistance: maxDistance, rolloff: rolloff)
        var settings = SpatialSettings(distanceModel: model)
        if perSource {
            // AL_EXT_source_distance_model: the source's own model wins over the context's.
            source.distanceModel = model
            settings.distanceModel = model == .none ? .inverseClamped : .none
        }
        var scene = Scene3D(source: source, settings: settings)
        if perSource {
            // Also away from the origin and turned: the listener at (3, 1, 2) facing +x (so "straight ahead" is
            // +x), which the listener-space transform of both renderers must undo.
            scene.listener = Listener(position: Vector3(3, 1, 2), at: Vector3(1, 0, 0), up: Vector3(0, 1, 0))
            scene.source.position = Vector3(3 + distance, 1, 2)
        }
        return scene
    }

    static func expected(_ model: DistanceModel, rolloff: Float, distance: Float) -> Double {
        func g(_ d: Float) -> Double {
            SpecFormula.clamped(SpecFormula.distanceGain(model, distance: Double(d), reference: Double(reference),
                                                         max: Double(maxDistance), rolloff: Double(rolloff)))
        }
        return g(distance) / g(reference)
    }

    /// The table measured with `render` (OpenAL Soft or Ensemble) for `models` × `rolloffs` × `distances`.
    static func table(models: [DistanceModel], rolloffs: [Float], distances: [Float], perSource: Bool,
                      _ render: (Scene3D) throws -> [Float]) rethrows -> [Row] {
        var rows: [Row] = []
        for model in models {
            for rolloff in rolloffs {
                let atReference = try render(scene(model: model, rolloff: rolloff, distance: reference, perSource: perSource))
                for d in distances {
                    let x = try render(scene(model: model, rolloff: rolloff, distance: d, perSource: perSource))
                    rows.append(Row(model: model, rolloff: rolloff, distance: d,
                                    expectedGain: expected(model, rolloff: rolloff, distance: d),
                                    measuredDB: levelRatioDB(x, over: atReference)))
                }
            }
        }
        return rows
    }

    /// The per-source variant's smaller grid: below the reference, between, at the clamp, beyond it.
    static let perSourceDistances: [Float] = [0.5, 2, 20, 100]
    static let perSourceRolloff: Float = 1.5

    // MARK: OpenAL Soft against the specification (the harness)

    func testOpenALSoftMatchesTheSpecificationFormulas() throws {
        let al = try OpenALReference()
        let rows = try Self.table(models: DistanceModel.allCases, rolloffs: Self.rolloffs, distances: Self.distances,
                                  perSource: false) { try al.render($0, frames: levelFrames) }
        XCTAssertEqual(rows.count, 7 * 2 * 8)
        assertMatchesSpecification(rows)
    }

    func testOpenALSoftPerSourceModelMatchesTheSpecificationFormulas() throws {
        let al = try OpenALReference()
        let rows = try Self.table(models: DistanceModel.allCases, rolloffs: [Self.perSourceRolloff],
                                  distances: Self.perSourceDistances, perSource: true) { try al.render($0, frames: levelFrames) }
        assertMatchesSpecification(rows)
    }

    private func assertMatchesSpecification(_ rows: [Row], file: StaticString = #filePath, line: UInt = #line) {
        for r in rows {
            let what = "\(r.model) rolloff \(r.rolloff) at \(r.distance) m"
            if r.expectedGain == 0 {
                XCTAssertEqual(r.measuredDB, -.infinity, "\(what): silent", file: file, line: line)
            } else {
                // Both sides are the same float samples times a gain: only float rounding separates them.
                XCTAssertEqual(r.measuredDB, dB(r.expectedGain), accuracy: 0.01, what, file: file, line: line)
            }
        }
        // The grid does reach the interesting places: silence (linear beyond its end), a clamp to 1 near the
        // source, and attenuation by more than 50 dB.
        XCTAssertTrue(rows.contains { $0.expectedGain == 0 }, file: file, line: line)
        XCTAssertTrue(rows.contains { $0.distance < Self.reference && $0.expectedGain == 1 && $0.model != .none }, file: file, line: line)
        XCTAssertTrue(rows.contains { $0.measuredDB < -50 && $0.measuredDB.isFinite }, file: file, line: line)
    }

    // MARK: Ensemble against OpenAL Soft

    func testEnsembleMatchesOpenALSoftForEveryDistanceModel() throws {
        let al = try OpenALReference()
        let reference = try Self.table(models: DistanceModel.allCases, rolloffs: Self.rolloffs, distances: Self.distances,
                                       perSource: false) { try al.render($0, frames: levelFrames) }
        let ours = try Self.table(models: DistanceModel.allCases, rolloffs: Self.rolloffs, distances: Self.distances,
                                  perSource: false) { try renderEnsemble($0, frames: levelFrames) }
        assertMatch(ours, reference)
    }

    func testEnsemblePerSourceDistanceModelMatchesOpenALSoft() throws {
        let al = try OpenALReference()
        let reference = try Self.table(models: DistanceModel.allCases, rolloffs: [Self.perSourceRolloff],
                                       distances: Self.perSourceDistances, perSource: true) { try al.render($0, frames: levelFrames) }
        let ours = try Self.table(models: DistanceModel.allCases, rolloffs: [Self.perSourceRolloff],
                                  distances: Self.perSourceDistances, perSource: true) { try renderEnsemble($0, frames: levelFrames) }
        assertMatch(ours, reference)
    }

    /// Below this level (relative to the reference distance) Ensemble may rightly be silent where OpenAL Soft is
    /// not: a voice whose audibility (volume × its loudest speaker's 3D gain) is under
    /// `Engine.Configuration.virtualThreshold` (0.001, −60 dB, by default) goes virtual. Straight ahead on stereo
    /// the loudest speaker is about 3 dB below the distance gain, so that is a distance gain under about −57 dB;
    /// −50 dB leaves room for any pan law. (Only the deepest cases, exponent models with rolloff ≥ 1.5 far out, are
    /// that quiet.)
    static let virtualBelowDB = -50.0

    private func assertMatch(_ ours: [Row], _ reference: [Row], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(ours.count, reference.count, file: file, line: line)
        var compared: [Double] = [], virtual = 0
        for (e, a) in zip(ours, reference) {
            let what = "\(a.model) rolloff \(a.rolloff) at \(a.distance) m: Ensemble \(e.measuredDB) dB, OpenAL Soft \(a.measuredDB) dB"
            if a.measuredDB == -.infinity {
                // OpenAL Soft is silent (a linear model past its end): Ensemble must be too, or below −120 dB.
                XCTAssertLessThan(e.measuredDB, -120, what, file: file, line: line)
            } else if a.measuredDB < Self.virtualBelowDB && e.measuredDB == -.infinity {
                virtual += 1 // a virtual voice: silent by design
            } else {
                XCTAssertEqual(e.measuredDB, a.measuredDB, accuracy: 0.1, what, file: file, line: line)
                compared.append(abs(e.measuredDB - a.measuredDB))
            }
        }
        XCTAssertGreaterThan(compared.count, ours.count * 3 / 4, "most cases are compared level for level", file: file, line: line)
        print("OpenAL3D distance: \(ours.count) cases, \(compared.count) compared (worst |Ensemble − OpenAL Soft| = "
              + String(format: "%.4f dB", compared.max() ?? 0) + "), \(virtual) virtual in Ensemble, the rest silent in both")
    }
}
