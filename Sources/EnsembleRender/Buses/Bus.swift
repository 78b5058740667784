// Control side: a plain value, made and compared on any thread.
import EnsembleFormats

/// A handle for one of the engine's buses: the master (`Bus.master`, the output itself) or one of the
/// `Bus.submixCount` submix buses, 1…16, that collect the tracks and effects routed to them, run their effect
/// chain, and mix into the master.
///
/// Make a named bus with `Engine.makeBus(named:)` (it picks a free number and sets the bus up; `Engine.bus(named:)`
/// finds it again), or a numbered handle with `try Bus(3)` (throws `EngineError.invalidParameter` outside 1…16),
/// set up with `Engine.setBus(_:settings:)` or `Engine.setEffects(_:on:)` before routing anything to it: routing
/// to, or scheduling on, a bus that was never set up throws `EngineError.unknownBus`. Scenes make their buses by
/// name; the n-th bus of a scene is `Bus(n)`. The handle is the number alone: names live in the engine.
public struct Bus: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// How many submix buses there are (1…`submixCount`).
    static var submixCount: Int { BusRack.count - 1 }

    /// 0 for the master, 1…`Bus.submixCount` for a submix bus.
    public let index: Int

    /// The master bus: the engine's output, with an effect chain of its own (`Engine.setEffects(_:on: .master)`).
    public static let master = Bus(unchecked: 0)

    /// Submix bus `index`, 1…`Bus.submixCount`.
    public init(_ index: Int) throws(EngineError) {
        guard index >= 1, index <= Bus.submixCount else {
            throw .invalidParameter(name: "bus", value: Double(index), expected: "1…\(Bus.submixCount)")
        }
        self.index = index
    }

    package init(unchecked index: Int) { self.index = index }

    /// Every submix bus, 1…`Bus.submixCount` (not the master).
    public static var submixes: [Bus] { (1...Bus.submixCount).map { Bus(unchecked: $0) } }

    /// Whether this is the master.
    public var isMaster: Bool { index == 0 }

    /// Orders by index (the master first).
    public static func < (lhs: Bus, rhs: Bus) -> Bool { lhs.index < rhs.index }

    public var description: String { index == 0 ? "master" : "bus \(index)" }
}
