import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput

/// Why a scene could not be loaded or rendered: one line naming the scene file and, where there is one,
/// the key at fault (`tracks[1].volume`).
public struct SceneError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The scene file at fault.
    public let path: String
    /// What is wrong, starting with the key at fault where there is one (`tracks[1].volume: 1.5 is out of range …`).
    public let message: String

    /// An error about the scene at `path`.
    public init(path: String, _ message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { "\(path): \(message)" }
}
