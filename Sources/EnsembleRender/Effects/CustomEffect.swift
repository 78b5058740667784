// Control side makes and installs a CustomEffect; the render thread calls its effect through `EffectChain` and
// writes its parameters when a `BusCommand.parameter` is applied. No other thread touches the effect.
import Synchronization
import CRenderMath

/// An application's `AudioEffect`, handed to the engine with its parameters: put it in a bus's chain with
/// `EffectSpec.custom(_:)` or on a track's insert with `Track.setInsert(_:)`, and change its parameters with
/// `Engine.setParameter(_:to:of:)` or `Engine.scheduleParameter(_:to:of:at:)`.
///
/// The effect is taken with `sending`: from then on it belongs to the engine and only the render thread calls it,
/// so it need not be `Sendable` and must not be reached through another reference the application kept (a class
/// instance shared elsewhere would race). The handle itself is `Sendable` and may be used from any thread.
/// A handle can be installed once (one chain on one bus, or one track's insert, for its whole life): a chain
/// change fades the old chain while the new one starts, and one effect's state cannot be in both; make a new
/// `CustomEffect` for a new chain or insert. The effect and its parameters live as long as the handle, any chain
/// or insert holding it (freed on the control side), or a parameter change still on its way; a replaced effect
/// nobody holds is released, so installing a new one per shot does not grow the engine.
public final class CustomEffect: @unchecked Sendable {
    // @unchecked: `box` is used by one thread at a time (the control side until `install`, then only the render
    // thread); `parameters` is written at `init` and afterwards only by the render thread applying commands.
    package let box: AnyEffectBox
    /// The render side's parameter array (`parameterCount` floats), preallocated.
    package let parameters: UnsafeMutablePointer<Float>
    /// How many parameters the effect has (the length of the `parameters` given to `init`).
    public let parameterCount: Int
    private let installed = Atomic<Bool>(false)
    private let allocating = Atomic<Int>(0)
    private let reported = Atomic<Bool>(false)

    /// Wraps `effect` with its parameters' initial values (any number, each finite). Throws
    /// `EngineError.invalidParameter` naming `parameters[i]` for a value that is not finite.
    public init<E: AudioEffect>(_ effect: sending E, parameters: [Float] = []) throws(EngineError) {
        for (i, v) in parameters.enumerated() where !v.isFinite {
            throw .invalidParameter(name: "parameters[\(i)]", value: Double(v), expected: "a finite value")
        }
        box = EffectBox(effect)
        parameterCount = parameters.count
        self.parameters = .allocate(capacity: max(parameters.count, 1))
        self.parameters.initialize(repeating: 0, count: max(parameters.count, 1))
        for (i, v) in parameters.enumerated() { self.parameters[i] = v }
    }

    deinit { parameters.deallocate() }

    /// Debug builds: how many `process` calls allocated on the heap, counted when the process links the
    /// allocation counter (the engine's tests; see the "Custom effects and generated sources" article). 0 in a release build, and
    /// whenever the effect keeps to the render-thread rules.
    public var allocatingCalls: Int { allocating.load(ordering: .relaxed) }

    /// Control side (the engine's event thread): true the first time it is asked after a `process` call allocated,
    /// so the engine warns once per effect.
    package func takeAllocationReport() -> Bool {
        allocatingCalls > 0 && !reported.exchange(true, ordering: .relaxed)
    }

    /// Control side: prepares the effect for `format` and marks the handle installed. Throws the effect's error,
    /// or `invalidParameter` for a handle installed before (nothing is changed then).
    package func install(_ format: EffectFormat, name: String) throws(EngineError) {
        guard installed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            throw .invalidParameter(name: name, value: 0,
                                    expected: "a CustomEffect not installed before (one bus chain or track insert each)")
        }
        do throws(EngineError) {
            try box.prepare(format)
        } catch {
            installed.store(false, ordering: .releasing)
            throw error
        }
    }

    /// Control side: undoes `install` after a later effect of the same `setEffects` refused (never run since).
    package func uninstall() { installed.store(false, ordering: .releasing) }

    /// Whether `install` has succeeded on this handle.
    package var isInstalled: Bool { installed.load(ordering: .acquiring) }

    /// Render thread: runs the effect on one pair's span. In a debug build, counts the call when it allocated.
    @inline(never)
    package func run(_ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, _ n: Int, frame: Int64,
                     pair: Int) {
        let block = EffectBlock(left: l, right: r, frames: n, frame: frame, pair: pair,
                                parameters: UnsafePointer(parameters), parameterCount: parameterCount)
        #if DEBUG
        let before = ensemble_thread_allocations()
        box.process(block)
        if before != UInt64.max && ensemble_thread_allocations() != before {
            allocating.add(1, ordering: .relaxed)
        }
        #else
        box.process(block)
        #endif
    }

    /// Render thread: runs the effect's `reset`.
    @inline(never)
    package func reset() { box.reset() }
}

extension CustomEffect: Equatable {
    /// The same handle (effects compare by identity: two handles are two effects, whatever they hold).
    public static func == (a: CustomEffect, b: CustomEffect) -> Bool { a === b }
}

/// Type erasure for the effect a `CustomEffect` holds: one class call per block instead of an existential.
package class AnyEffectBox {
    package func prepare(_ format: EffectFormat) throws(EngineError) {}
    package func process(_ block: EffectBlock) {}
    package func reset() {}
}

/// The effect itself, stored in place and called directly by its own type.
final class EffectBox<E: AudioEffect>: AnyEffectBox {
    var effect: E

    init(_ effect: sending E) { self.effect = effect }

    override func prepare(_ format: EffectFormat) throws(EngineError) { try effect.prepare(format) }
    override func process(_ block: EffectBlock) { effect.process(block) }
    override func reset() { effect.reset() }
}

/// Render thread: calls a custom effect held as an opaque, retained `Unmanaged<CustomEffect>` by a chain.
///
/// `@_noLocks` cannot see through a call into code it does not know (the application's), so the call is wrapped
/// in `_unsafePerformance`: the compiler checks the built-in effects, and an application's effect is checked at
/// run time in debug builds instead (`CustomEffect.allocatingCalls`).
enum CustomEffectCall {
    @_noLocks
    static func process(_ effect: UnsafeMutableRawPointer, _ l: UnsafeMutablePointer<Float>,
                        _ r: UnsafeMutablePointer<Float>, _ n: Int, frame: Int64, pair: Int) {
        _unsafePerformance {
            Unmanaged<CustomEffect>.fromOpaque(effect)._withUnsafeGuaranteedRef {
                $0.run(l, r, n, frame: frame, pair: pair)
            }
        }
    }

    @_noLocks
    static func reset(_ effect: UnsafeMutableRawPointer) {
        _unsafePerformance { Unmanaged<CustomEffect>.fromOpaque(effect)._withUnsafeGuaranteedRef { $0.reset() } }
    }
}
