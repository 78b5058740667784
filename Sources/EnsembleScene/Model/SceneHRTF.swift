// Control side: part of the scene model (the `hrtf` key).
import EnsembleFormats
import EnsembleRender

/// The scene's `hrtf` key: render positioned sources for headphones, through the installed default data set
/// (`"hrtf": true`) or a data set file, OpenAL Soft's `.mhr` or SOFA (`"hrtf": "path/to/file.mhr"`, relative to the scene's
/// folder).
public enum SceneHRTF: Sendable, Equatable {
    /// OpenAL Soft's installed default (`HRTF.installedDefault(sampleRate:)`).
    case installedDefault
    /// A data set file (absolute, resolved against the scene's folder).
    case file(String)

    /// Loads the data set for an engine at `sampleRate` (resampled when it was measured at another rate).
    public func load(sampleRate: Double) throws(HRTFError) -> HRTF {
        switch self {
        case .installedDefault: try HRTF.installedDefault(sampleRate: sampleRate)
        case let .file(path): try HRTF(contentsOf: path, sampleRate: sampleRate).resampled(to: sampleRate)
        }
    }
}
