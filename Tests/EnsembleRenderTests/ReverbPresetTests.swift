import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The preset table: the iOS factory names and EFX's environments, every one valid, looked up case-insensitively,
/// the EFX ones carrying efx-presets.h's values.
final class ReverbPresetTests: XCTestCase {
    func testNamesAreTheIOSListAndTheEFXEnvironments() {
        let ios = ["smallRoom", "mediumRoom", "largeRoom", "mediumHall", "largeHall", "plate", "mediumChamber",
                   "largeChamber", "cathedral", "largeRoom2", "mediumHall2", "mediumHall3", "largeHall2"]
        let efx = ["generic", "paddedCell", "room", "bathroom", "livingRoom", "stoneRoom", "auditorium", "concertHall",
                   "cave", "arena", "hangar", "carpetedHallway", "hallway", "stoneCorridor", "alley", "forest", "city",
                   "mountains", "quarry", "plain", "parkingLot", "sewerPipe", "underwater", "drugged", "dizzy",
                   "psychotic"]
        XCTAssertEqual(ReverbSettings.presetNames, ios + efx)
        for name in ReverbSettings.presetNames {
            let s = ReverbSettings.preset(named: name)
            XCTAssertNotNil(s, name)
            XCTAssertNil(s?.problem(), name)
            XCTAssertEqual(ReverbSettings.preset(named: name.uppercased()), s, name)
            XCTAssertEqual(ReverbSettings.preset(named: name.lowercased()), s, name)
            XCTAssertNoThrow(try EffectSpec.reverb(preset: name), name)
        }
        XCTAssertNil(ReverbSettings.preset(named: "broomCupboard"))
        // The generic environment is EFX's default (efx.h rounds 0.3162, 0.8913, 1.2589 to two decimals).
        let generic = try! XCTUnwrap(ReverbSettings.preset(named: "GENERIC")), defaults = ReverbSettings()
        for (a, b) in [(generic.gain, defaults.gain), (generic.gainHF, defaults.gainHF), (generic.decayTime, defaults.decayTime),
                       (generic.lateReverbGain, defaults.lateReverbGain), (generic.reflectionsDelay, defaults.reflectionsDelay)] {
            XCTAssertEqual(a, b, accuracy: 0.005)
        }
    }

    /// Spot checks against efx-presets.h (EFX_REVERB_PRESET_CAVE, _UNDERWATER, _MOUNTAINS).
    func testEFXValues() throws {
        let cave = try XCTUnwrap(ReverbSettings.preset(named: "cave"))
        XCTAssertEqual(cave.decayTime, 2.91)
        XCTAssertEqual(cave.decayHFRatio, 1.3)
        XCTAssertEqual(cave.reflectionsGain, 0.5)
        XCTAssertEqual(cave.lateReverbDelay, 0.022)
        let underwater = try XCTUnwrap(ReverbSettings.preset(named: "underwater"))
        XCTAssertEqual(underwater.density, 0.3645)
        XCTAssertEqual(underwater.gainHF, 0.01)
        XCTAssertEqual(underwater.lateReverbGain, 7.0795)
        let mountains = try XCTUnwrap(ReverbSettings.preset(named: "Mountains"))
        XCTAssertEqual(mountains.diffusion, 0.27)
        XCTAssertEqual(mountains.reflectionsDelay, 0.3)
        XCTAssertEqual(mountains.lateReverbDelay, 0.1)
    }
}
