// Control side (the thread loading the scene).
import Foundation

/// The whole scene file, decoded by Foundation's `JSONDecoder` (which reports syntax errors) and read from there by
/// `Scene.read`, which gets its `SceneContext` through the decoder's `userInfo`.
struct SceneDocument: Decodable {
    static let contextKey = CodingUserInfoKey(rawValue: "Ensemble.SceneContext")!

    let scene: Scene

    init(from decoder: any Decoder) throws {
        guard let context = decoder.userInfo[Self.contextKey] as? SceneContext else {
            preconditionFailure("SceneDocument is decoded by Scene.parse, which sets its context")
        }
        scene = try Scene.read(SceneField(decoder: decoder, key: "", context: context))
    }

    /// Decodes `data` as the scene file at `path`, relative file paths resolved against `folder`.
    static func decode(_ data: Data, folder: String, path: String) throws(SceneError) -> Scene {
        let decoder = JSONDecoder()
        decoder.userInfo[contextKey] = SceneContext(path: path, folder: folder, scene: Scene())
        do {
            return try decoder.decode(SceneDocument.self, from: data).scene
        } catch let error as SceneError {
            throw error
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            throw SceneError(path: path, "not valid JSON")
        } catch {
            throw SceneError(path: path, "not a valid scene: \(error)")
        }
    }
}
