/// The release of the Ensemble library and of the `ensemble` command built with it.
public enum EnsembleVersion {
    /// The version as `major.minor.patch` (semantic versioning; 0.x while the API may still change). The one place
    /// it is written: `ensemble --version` prints it.
    public static let current = "0.1.0"
}
