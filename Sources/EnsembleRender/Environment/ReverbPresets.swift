// Control side: constant tables.
import EnsembleFormats

/// Named reverb environments: the iOS reverb unit's factory list and EFX's environments.
extension ReverbSettings {
    /// Every preset name, in the order `ensemble presets` lists them.
    public static var presetNames: [String] { presets.map(\.name) }

    /// The preset called `name` (case-insensitive), or nil for an unknown name.
    public static func preset(named name: String) -> ReverbSettings? {
        presets.first { $0.name.lowercased() == name.lowercased() }?.settings
    }

    /// A preset from EFX's ten reverb values (`efx-presets.h` order: density, diffusion, gain, gainHF, decay time,
    /// decay HF ratio, reflections gain and delay, late reverb gain and delay), each clamped to our ranges.
    private static func efx(_ density: Double, _ diffusion: Double, _ gain: Double, _ gainHF: Double,
                            _ decayTime: Double, _ decayHFRatio: Double, _ reflectionsGain: Double,
                            _ reflectionsDelay: Double, _ lateReverbGain: Double,
                            _ lateReverbDelay: Double) -> ReverbSettings {
        var s = ReverbSettings()
        s.density = min(max(density, 0), 1)
        s.diffusion = min(max(diffusion, 0), 1)
        s.gain = min(max(gain, 0), 1)
        s.gainHF = min(max(gainHF, 0), 1)
        s.decayTime = min(max(decayTime, 0.1), 20)
        s.decayHFRatio = min(max(decayHFRatio, 0.1), 2)
        s.reflectionsGain = min(max(reflectionsGain, 0), 3.16)
        s.reflectionsDelay = min(max(reflectionsDelay, 0), 0.3)
        s.lateReverbGain = min(max(lateReverbGain, 0), 10)
        s.lateReverbDelay = min(max(lateReverbDelay, 0), 0.1)
        return s
    }

    /// The table behind `presetNames` and `preset(named:)`.
    ///
    /// The first thirteen are the names of the iOS reverb unit's factory presets (`AUReverb2`'s
    /// `kReverbRoomType_…`). Apple publishes no parameter values for them: these are our own plausible choices,
    /// in EFX's terms — rooms and chambers short and bright, halls longer and darker, the cathedral longest, the
    /// plate dense, bright and without early reflections. The rest are OpenAL Soft's `efx-presets.h` environments
    /// (EAX 2's list), their values copied from that header (public data), clamped to our ranges.
    package static let presets: [(name: String, settings: ReverbSettings)] = [
        // iOS factory names, our values.
        ("smallRoom", efx(0.5, 1, 0.3162, 0.8, 0.5, 0.8, 0.3, 0.005, 1.0, 0.008)),
        ("mediumRoom", efx(0.7, 1, 0.3162, 0.75, 0.8, 0.75, 0.28, 0.008, 1.0, 0.012)),
        ("largeRoom", efx(0.9, 1, 0.3162, 0.7, 1.3, 0.7, 0.25, 0.012, 1.0, 0.018)),
        ("mediumHall", efx(1, 1, 0.3162, 0.65, 1.8, 0.7, 0.2, 0.018, 1.1, 0.025)),
        ("largeHall", efx(1, 1, 0.3162, 0.6, 2.6, 0.65, 0.18, 0.024, 1.1, 0.033)),
        ("plate", efx(0.6, 1, 0.3162, 1.0, 1.6, 0.9, 0, 0.0, 1.2, 0.003)),
        ("mediumChamber", efx(0.8, 1, 0.3162, 0.8, 1.2, 0.8, 0.4, 0.01, 1.0, 0.015)),
        ("largeChamber", efx(1, 1, 0.3162, 0.75, 1.9, 0.8, 0.35, 0.014, 1.0, 0.02)),
        ("cathedral", efx(1, 1, 0.3162, 0.6, 6.0, 0.55, 0.2, 0.03, 1.0, 0.045)),
        ("largeRoom2", efx(1, 1, 0.3162, 0.7, 1.6, 0.6, 0.25, 0.015, 1.0, 0.022)),
        ("mediumHall2", efx(1, 1, 0.3162, 0.7, 2.0, 0.8, 0.2, 0.02, 1.1, 0.028)),
        ("mediumHall3", efx(1, 1, 0.3162, 0.6, 2.3, 0.6, 0.2, 0.022, 1.1, 0.03)),
        ("largeHall2", efx(1, 1, 0.3162, 0.65, 3.2, 0.75, 0.18, 0.03, 1.1, 0.04)),
        // efx-presets.h.
        ("generic", efx(1.0000, 1.0000, 0.3162, 0.8913, 1.4900, 0.8300, 0.0500, 0.0070, 1.2589, 0.0110)),
        ("paddedCell", efx(0.1715, 1.0000, 0.3162, 0.0010, 0.1700, 0.1000, 0.2500, 0.0010, 1.2691, 0.0020)),
        ("room", efx(0.4287, 1.0000, 0.3162, 0.5929, 0.4000, 0.8300, 0.1503, 0.0020, 1.0629, 0.0030)),
        ("bathroom", efx(0.1715, 1.0000, 0.3162, 0.2512, 1.4900, 0.5400, 0.6531, 0.0070, 3.2734, 0.0110)),
        ("livingRoom", efx(0.9766, 1.0000, 0.3162, 0.0010, 0.5000, 0.1000, 0.2051, 0.0030, 0.2805, 0.0040)),
        ("stoneRoom", efx(1.0000, 1.0000, 0.3162, 0.7079, 2.3100, 0.6400, 0.4411, 0.0120, 1.1003, 0.0170)),
        ("auditorium", efx(1.0000, 1.0000, 0.3162, 0.5781, 4.3200, 0.5900, 0.4032, 0.0200, 0.7170, 0.0300)),
        ("concertHall", efx(1.0000, 1.0000, 0.3162, 0.5623, 3.9200, 0.7000, 0.2427, 0.0200, 0.9977, 0.0290)),
        ("cave", efx(1.0000, 1.0000, 0.3162, 1.0000, 2.9100, 1.3000, 0.5000, 0.0150, 0.7063, 0.0220)),
        ("arena", efx(1.0000, 1.0000, 0.3162, 0.4477, 7.2400, 0.3300, 0.2612, 0.0200, 1.0186, 0.0300)),
        ("hangar", efx(1.0000, 1.0000, 0.3162, 0.3162, 10.0500, 0.2300, 0.5000, 0.0200, 1.2560, 0.0300)),
        ("carpetedHallway", efx(0.4287, 1.0000, 0.3162, 0.0100, 0.3000, 0.1000, 0.1215, 0.0020, 0.1531, 0.0300)),
        ("hallway", efx(0.3645, 1.0000, 0.3162, 0.7079, 1.4900, 0.5900, 0.2458, 0.0070, 1.6615, 0.0110)),
        ("stoneCorridor", efx(1.0000, 1.0000, 0.3162, 0.7612, 2.7000, 0.7900, 0.2472, 0.0130, 1.5758, 0.0200)),
        ("alley", efx(1.0000, 0.3000, 0.3162, 0.7328, 1.4900, 0.8600, 0.2500, 0.0070, 0.9954, 0.0110)),
        ("forest", efx(1.0000, 0.3000, 0.3162, 0.0224, 1.4900, 0.5400, 0.0525, 0.1620, 0.7682, 0.0880)),
        ("city", efx(1.0000, 0.5000, 0.3162, 0.3981, 1.4900, 0.6700, 0.0730, 0.0070, 0.1427, 0.0110)),
        ("mountains", efx(1.0000, 0.2700, 0.3162, 0.0562, 1.4900, 0.2100, 0.0407, 0.3000, 0.1919, 0.1000)),
        ("quarry", efx(1.0000, 1.0000, 0.3162, 0.3162, 1.4900, 0.8300, 0.0000, 0.0610, 1.7783, 0.0250)),
        ("plain", efx(1.0000, 0.2100, 0.3162, 0.1000, 1.4900, 0.5000, 0.0585, 0.1790, 0.1089, 0.1000)),
        ("parkingLot", efx(1.0000, 1.0000, 0.3162, 1.0000, 1.6500, 1.5000, 0.2082, 0.0080, 0.2652, 0.0120)),
        ("sewerPipe", efx(0.3071, 0.8000, 0.3162, 0.3162, 2.8100, 0.1400, 1.6387, 0.0140, 3.2471, 0.0210)),
        ("underwater", efx(0.3645, 1.0000, 0.3162, 0.0100, 1.4900, 0.1000, 0.5963, 0.0070, 7.0795, 0.0110)),
        ("drugged", efx(0.4287, 0.5000, 0.3162, 1.0000, 8.3900, 1.3900, 0.8760, 0.0020, 3.1081, 0.0300)),
        ("dizzy", efx(0.3645, 0.6000, 0.3162, 0.6310, 17.2300, 0.5600, 0.1392, 0.0200, 0.4937, 0.0300)),
        ("psychotic", efx(0.0625, 0.5000, 0.3162, 0.8404, 7.5600, 0.9100, 0.4864, 0.0200, 2.4378, 0.0300)),
    ]
}
