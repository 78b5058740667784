// Made on the control thread (`make`, when a chain is set), carried by `BusCommand.order`, read on the render
// thread (`bus(at:)`, `isKey`).
import EnsembleFormats

/// The order in which the bus rack runs the chains of buses 1…16 in a span, and which buses key a compressor.
///
/// A compressor keyed by another bus (`CompressorSettings.sidechain`) reads that bus's levels for the span, so
/// the key bus's chain must have run first: the order is a topological order of the "key runs before keyed"
/// edges, ties going to the lower index (with no sidechain it is 1, 2, …, 16, the order the rack always had).
/// The master's chain always runs last, after every bus has mixed into it, so it may be keyed by any bus. The
/// chains run in this order; the buses still mix into the master in index order, so the master's sums (and
/// every scene without a sidechain) keep their bits whatever the order.
///
/// Fixed size, so the render side takes it without allocating: 16 nibbles and a bit mask.
package struct BusOrder: BitwiseCopyable, Sendable, Equatable {
    /// Nibble i (bits 4i…4i+3) holds the index − 1 of the i-th bus to run.
    package var packed: UInt64
    /// Bit b is set when bus b keys a compressor: the rack writes its key levels (`SidechainKeys`).
    package var keys: UInt32

    @_noLocks
    package init(packed: UInt64, keys: UInt32) {
        self.packed = packed
        self.keys = keys
    }

    /// 1, 2, …, 16 and no keys.
    package static var identity: BusOrder { @_noLocks get { BusOrder(packed: 0xFEDC_BA98_7654_3210, keys: 0) } }

    /// The index (1…16) of the `i`-th bus to run (i = 0…15).
    @inline(__always)
    @_noLocks
    package func bus(at i: Int) -> Int {
        Int(truncatingIfNeeded: (packed >> UInt64(truncatingIfNeeded: 4 * i)) & 0xF) + 1
    }

    /// Whether bus `b` keys a compressor.
    @inline(__always)
    @_noLocks
    package func isKey(_ b: Int) -> Bool {
        (keys >> UInt32(truncatingIfNeeded: b)) & 1 != 0
    }

    /// One sidechain: bus `key` (1…16) drives a compressor on bus `keyed` (0…16, 0 the master).
    package struct Edge: Equatable {
        package var key: Int
        package var keyed: Int

        package init(key: Int, keyed: Int) {
            self.key = key
            self.keyed = keyed
        }
    }

    /// The order honouring every `required` edge, and each `preferred` one (taken in turn) that keeps the order
    /// possible; nil when the required edges wait on each other in a circle. Every key of either list is marked.
    /// (Control side.)
    package static func make(required: [Edge], preferred: [Edge] = []) -> BusOrder? {
        guard var order = sorted(required) else { return nil }
        var edges = required
        for e in preferred {
            if let o = sorted(edges + [e]) {
                edges.append(e)
                order = o
            }
        }
        var packed: UInt64 = 0
        for (i, b) in order.enumerated() { packed |= UInt64(b - 1) << UInt64(4 * i) }
        var keys: UInt32 = 0
        for e in required + preferred { keys |= 1 << UInt32(e.key) }
        return BusOrder(packed: packed, keys: keys)
    }

    /// Buses 1…16 in a topological order of `edges` (Kahn's algorithm, the lowest ready index first), or nil for
    /// a cycle. Edges into the master are no constraint (it runs last).
    package static func sorted(_ edges: [Edge]) -> [Int]? {
        let buses = 1..<BusRack.count
        let constraints = edges.filter { $0.keyed != 0 && $0.key != $0.keyed }
        if edges.contains(where: { $0.key == $0.keyed }) { return nil }
        var waiting = [Int](repeating: 0, count: BusRack.count)
        for e in constraints { waiting[e.keyed] += 1 }
        var done = [Bool](repeating: false, count: BusRack.count)
        var order: [Int] = []
        while order.count < buses.count {
            guard let next = buses.first(where: { !done[$0] && waiting[$0] == 0 }) else { return nil }
            done[next] = true
            order.append(next)
            for e in constraints where e.key == next { waiting[e.keyed] -= 1 }
        }
        return order
    }
}
