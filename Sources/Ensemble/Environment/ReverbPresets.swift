// Control side: constant tables.

/// Named reverb environments: the iOS reverb unit's factory list and EFX's environments.
extension ReverbSettings {
    /// Every preset name, in the order `ensemble presets` lists them.
    public static var presetNames: [String] { presets.map(\.name) }

    /// The preset called `name` (case-insensitive), or nil for an unknown name.
    public static func preset(named name: String) -> ReverbSettings? {
        presets.first { $0.name.lowercased() == name.lowercased() }?.settings
    }

    // TODO(reverb helper): the full tables.
    static let presets: [(name: String, settings: ReverbSettings)] = [
        ("generic", ReverbSettings()),
    ]
}
