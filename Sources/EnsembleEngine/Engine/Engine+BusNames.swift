// Control side (any thread): buses known by name.
import EnsembleRender

extension Engine {
    /// Sets up a submix bus known as `name` (unity gain, centred, no effects) and returns it: the lowest-numbered
    /// bus that is neither set up nor named. Throws `EngineError.duplicateBusName` when a bus already has that name
    /// and `EngineError.busesExhausted` when every bus 1…`maxBuses` is taken. Numbered buses (`Bus(_:)`) still
    /// work beside named ones; `bus(named:)` finds a named one again.
    public func makeBus(named name: String) throws(EngineError) -> Bus {
        return try busControl.buses.withLock { buses throws(EngineError) -> Bus in
            if buses.contains(where: { $0.name == name }) { throw .duplicateBusName(name) }
            guard let index = (1..<buses.count).first(where: { !buses[$0].configured && buses[$0].name == nil }) else {
                throw .busesExhausted(limit: Self.maxBuses)
            }
            buses[index].name = name
            buses[index].configured = true
            mixer.prepareBus(index)
            send([.bus(.configure(bus: Int32(index)))])
            return Bus(unchecked: index)
        }
    }

    /// The bus made by `makeBus(named:)` with this name, nil when there is none.
    public func bus(named name: String) -> Bus? {
        busControl.buses.withLock { buses in
            buses.firstIndex { $0.name == name }.map { Bus(unchecked: $0) }
        }
    }

    /// The name `bus` was made with (`makeBus(named:)`), nil for a numbered bus and the master.
    public func name(of bus: Bus) -> String? {
        busControl.buses.withLock { $0[bus.index].name }
    }
}
