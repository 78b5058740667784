// Control side: the order compressor sidechains impose on a scene's buses.
import EnsembleRender

extension Scene {
    /// Refuses buses whose compressors key each other in a circle (`a` keyed by `b`, `b` keyed by `a`): each would
    /// have to run before the other. Names the first sidechain key, in file order, that closes a circle.
    func checkSidechainCycles(path: String) throws(SceneError) {
        let keys = sidechainKeys
        var seen = Set<[Int]>()
        for edge in keys where seen.insert([edge.keyed, edge.key]).inserted {
            // The edge keyed → key closes a circle when the key bus itself waits on the keyed one.
            guard let back = sidechainPath(from: edge.key, to: edge.keyed, keys) else { continue }
            let names = ([edge.keyed] + back).map { buses[$0].name }
            throw SceneError(path: path, "buses[\(edge.keyed)].effects[\(edge.effect)].sidechain: the buses would key "
                             + "each other in a circle (\(names.joined(separator: " keyed by "))): each would have to run before the other")
        }
    }

    /// Every compressor sidechain of the scene's buses, in file order: bus `keyed` (an index into `buses`) is
    /// keyed, by its chain's effect `effect`, on bus `key`. A pair of buses appears once (its first compressor), so a
    /// chain of many compressors costs the searches below nothing more.
    var sidechainKeys: [(keyed: Int, effect: Int, key: Int)] {
        var keys: [(keyed: Int, effect: Int, key: Int)] = []
        for (i, bus) in buses.enumerated() {
            for (j, effect) in bus.effects.enumerated() {
                if case let .compressor(settings) = effect, let key = settings.sidechain, !key.isMaster,
                   !keys.contains(where: { $0.keyed == i && $0.key == key.index - 1 }) {
                    keys.append((i, j, key.index - 1))
                }
            }
        }
        return keys
    }

    /// A chain of sidechain keys from bus `start` to bus `end` (each bus keyed by the next; both ends included), or
    /// nil when there is none.
    func sidechainPath(from start: Int, to end: Int, _ keys: [(keyed: Int, effect: Int, key: Int)]) -> [Int]? {
        var previous: [Int: Int] = [start: start]
        var queue = [start]
        while !queue.isEmpty {
            let bus = queue.removeFirst()
            if bus == end {
                var path: [Int] = []
                var at = end
                while at != start {
                    path.append(at)
                    at = previous[at]!
                }
                return [start] + path.reversed()
            }
            for edge in keys where edge.keyed == bus && previous[edge.key] == nil {
                previous[edge.key] = bus
                queue.append(edge.key)
            }
        }
        return nil
    }

    /// The indices of `buses` in the order their chains are installed: every bus after the buses its compressors
    /// listen to (a key bus must be set up, and its chain in place, before a chain keyed on it), otherwise in file
    /// order. Validation refused circles, so every bus is placed.
    package var chainInstallOrder: [Int] {
        let keys = sidechainKeys
        var placed = [Bool](repeating: false, count: buses.count)
        var order: [Int] = []
        while order.count < buses.count {
            // The first bus in file order whose keys are all placed; if a circle slipped through, file order.
            let next = buses.indices.first { i in
                !placed[i] && keys.allSatisfy { $0.keyed != i || placed[$0.key] || $0.key == i }
            } ?? buses.indices.first { !placed[$0] }!
            placed[next] = true
            order.append(next)
        }
        return order
    }
}
