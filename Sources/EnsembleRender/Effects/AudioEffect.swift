// The effect protocol: built-in processors and application effects implement it alike. `prepare` runs on the
// control side, `process` and `reset` on the render thread.

/// What an effect is prepared for, once, on the control side before it is installed.
public struct EffectFormat: Sendable, Equatable {
    /// Frames per second of the mix.
    public var sampleRate: Double
    /// The largest `EffectBlock.frames` `process` will ever be given (the engine's block size).
    public var maxFrames: Int
    /// Channel pairs the chain runs on: 1 for stereo, 3 for 5.1, 4 for 7.1 (always 1 on a track's insert, which
    /// processes the voice's own signal). `process` is called once per pair and span, pair 0 first
    /// (`EffectBlock.pair`); an effect keeps state of its own for each pair.
    public var channelPairs: Int

    /// A format with these values.
    public init(sampleRate: Double, maxFrames: Int, channelPairs: Int) {
        self.sampleRate = sampleRate
        self.maxFrames = maxFrames
        self.channelPairs = channelPairs
    }
}

/// One span of one channel pair, processed in place, with its place in time and the effect's parameters.
///
/// Valid only during the `process` call it is given to: the pointers belong to the engine.
public struct EffectBlock {
    /// The pair's two channels, `frames` samples each, to be replaced by the effect's output.
    public let left: UnsafeMutablePointer<Float>
    /// See `left`.
    public let right: UnsafeMutablePointer<Float>
    /// Samples in each channel: 1…`EffectFormat.maxFrames`. A block may be split at any frame (a timed command
    /// falls there), so an effect must give the same output for one span of 100 frames as for 40 then 60.
    public let frames: Int
    /// Output frame of the first sample (the engine's frame count since its start): sample j is frame `frame + j`.
    public let frame: Int64
    /// Which channel pair (0 = front left/right; see `EffectFormat.channelPairs`).
    public let pair: Int
    /// The effect's parameters as they stand for the whole block (a timed change splits the block at its frame).
    public let parameters: UnsafePointer<Float>
    /// How many parameters there are (`CustomEffect.parameterCount`; 0 for a built-in effect).
    public let parameterCount: Int
    /// The sidechain key's levels for these frames, for the built-in compressor (`SidechainKeys`); nil otherwise.
    package var key: UnsafeMutablePointer<Float>? = nil

    /// A block over the given memory (the engine makes them; tests may too).
    @_noLocks
    public init(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frames: Int, frame: Int64,
                pair: Int = 0, parameters: UnsafePointer<Float>, parameterCount: Int) {
        self.left = left
        self.right = right
        self.frames = frames
        self.frame = frame
        self.pair = pair
        self.parameters = parameters
        self.parameterCount = parameterCount
    }
}

/// A processor in a bus's effect chain: the built-in effects (`BiquadSection`, `DelayLine`, `Limiter`, `Reverb`,
/// `Compressor`) and an application's own
/// (wrapped in a `CustomEffect` and installed with `EffectSpec.custom`, or on a track's insert with
/// `Track.setInsert`, where it processes each of the track's voices before its gains, pan and sends).
///
/// **`prepare(_:)`** runs once, on the control side (the thread calling `Engine.setEffects` or `Track.setInsert`),
/// before the effect is installed: allocate every buffer here, for `EffectFormat.maxFrames` and `channelPairs`.
///
/// **`process(_:)` and `reset()`** run on the render thread, which is real time: the whole mix waits for them.
/// In them an effect may read and write its own stored state and the block's memory, read `block.parameters`,
/// and compute. It must not allocate (no growing an array, no `String`, no new class instance, no closure that
/// captures), take a lock (`Mutex`, `DispatchQueue.sync`, `print`, file or network I/O), wait, call into the
/// Objective-C or Swift runtime's dynamic casts, or touch memory another thread writes without atomics. Output
/// must follow from the input, the state, `block.frame` and the parameters only, so a render gives the same bytes
/// for any block size and thread count (compute phases from `block.frame`, never from a count of calls).
///
/// Built-in effects are checked by the compiler (`@_noLocks` on their `process`); an application's effect is
/// checked in a debug build: each `process` call that allocates is counted (`CustomEffect.allocatingCalls`), when
/// the process links the allocation counter (the engine's tests do; see the "Custom effects and generated sources" article).
///
/// A processor whose output goes non-finite or runs away (beyond 10⁹) is `reset()` and the block silenced, as
/// for the built-ins. On an insert, `reset()` also runs when a new voice of the track starts, before its first block.
public protocol AudioEffect {
    /// Control side, once, before the effect is installed: allocates for `format`. Throws `EngineError` (for
    /// instance `.invalidParameter`) to refuse a format; `Engine.setEffects` then throws it, changing nothing.
    mutating func prepare(_ format: EffectFormat) throws(EngineError)
    /// Render thread: replaces `block`'s samples by the effect's output (see the protocol's rules).
    mutating func process(_ block: EffectBlock)
    /// Render thread: back to the state `prepare` left (silent history), without allocating (after a runaway
    /// block, and on an insert before each new voice of the track).
    mutating func reset()
}
