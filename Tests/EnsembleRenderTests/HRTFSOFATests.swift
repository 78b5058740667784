import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleRender

/// SOFA files through libmysofa. A damaged one is one error. A real measurement set — `ENSEMBLE_SOFA_FILE`, else
/// MIT's KEMAR as Debian's libmysofa-utils installs it (the set OpenAL Soft's default was made from; the repository
/// ships none, measurement sets carry their own licences): its interaural cues at 0, ±30, ±90, 135 and 180° against
/// the installed `.mhr` default: ITD within 0.1 ms, ILD over 3–8 kHz within 3 dB, front and back apart by 3 dB RMS
/// over 4–12 kHz. CI installs libmysofa-utils; there (`ENSEMBLE_CI=1`) a missing set fails instead of skipping.
final class HRTFSOFATests: XCTestCase {
    func testADamagedSOFAFileIsOneError() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write([0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a] + [UInt8](repeating: 7, count: 600), to: "x.sofa")
        XCTAssertThrowsError(try HRTF(contentsOf: path)) { error in
            guard case .damaged(let p, let what)? = error as? HRTFError else { return XCTFail("\(error)") }
            XCTAssertEqual(p, path)
            XCTAssertTrue(what.contains("libmysofa"), what)
        }
    }

    func testAMeasuredSetAgreesWithTheDefault() throws {
        let environment = ProcessInfo.processInfo.environment
        let kemar = "/usr/share/libmysofa/MIT_KEMAR_normal_pinna.sofa"
        guard let path = environment["ENSEMBLE_SOFA_FILE"]
                ?? (FileManager.default.fileExists(atPath: kemar) ? kemar : nil) else {
            let why = "no SOFA set: install libmysofa-utils (\(kemar)) or set ENSEMBLE_SOFA_FILE"
            if environment["ENSEMBLE_CI"] == "1" { return XCTFail(why) }
            throw XCTSkip(why)
        }
        let sofa = try HRTF(contentsOf: path, sampleRate: 48000)
        XCTAssertEqual(sofa.sampleRate, 48000)
        XCTAssertEqual(sofa.azimuthCounts.count, 19)
        let mhr = try HRTFRenderTests.hrtf()
        let noise = HRTFRenderTests.noise(48000)
        var spectra: [Double: [Float]] = [:]
        for azimuth in [0.0, 30, -30, 90, -90, 135, 180] {
            let (sl, sr) = try HRTFRenderTests.renderStill(noise, azimuth: azimuth, frames: 4800 + 32768, set: sofa)
            let (ml, mr) = try HRTFRenderTests.renderStill(noise, azimuth: azimuth, frames: 4800 + 32768, set: mhr)
            let s = (Array(sl[4800...]), Array(sr[4800...])), m = (Array(ml[4800...]), Array(mr[4800...]))
            let itd = Double(HRTFRenderTests.lag(s.0, s.1)) / 48, itdDefault = Double(HRTFRenderTests.lag(m.0, m.1)) / 48
            let ild = HRTFMeasure.levelDifference(s.0, s.1, from: 3000, to: 8000)
            let ildDefault = HRTFMeasure.levelDifference(m.0, m.1, from: 3000, to: 8000)
            print(String(format: "sofa azimuth %.0f: ITD %.3f ms (default set %.3f), ILD 3-8 kHz %.2f dB (default set %.2f)",
                         azimuth, itd, itdDefault, ild, ildDefault))
            XCTAssertEqual(itd, itdDefault, accuracy: 0.1, "ITD at \(azimuth)°")
            XCTAssertEqual(ild, ildDefault, accuracy: 3, "ILD at \(azimuth)°")
            spectra[azimuth] = s.0
        }
        let frontBack = HRTFMeasure.spectrumDifference(spectra[0]!, spectra[180]!, from: 4000, to: 12000)
        print(String(format: "sofa front/back 4-12 kHz: %.1f dB RMS", frontBack))
        XCTAssertGreaterThanOrEqual(frontBack, 3)
    }
}
