/// Why a scene could not be loaded or rendered: one line naming the scene file and, where there is one,
/// the key at fault (`tracks[1].volume`).
public struct SceneError: Error, Sendable, Equatable, CustomStringConvertible {
    public let path: String
    public let message: String

    public init(path: String, _ message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { "\(path): \(message)" }
}
