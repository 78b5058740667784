// Render thread: one per voice path with a filter (`VoiceEnvironments`); commands retarget it between spans, the
// voice's lane runs it during a span.

/// A `VoiceFilter` as the mixer runs it on one or two channels, with EFX's semantics (OpenAL Soft 1.19.1,
/// `CalcPanningAndFilters`): a low-pass is `gain` × a high shelf with `gainHF` at 5 kHz (`HighShelf`), a high-pass
/// `gain` × a low shelf with `gainLF` at 250 Hz (`LowShelf`), a band-pass both. A kind leaves the shelf it does
/// not have at gain 1 (`FilterSetup` sends it so), so every change, of kind too, is three gains ramping.
///
/// No zipper noise, and the same bits for any block size: the three gains ramp linearly on absolute output
/// frames (`LinearRamp`); the broadband gain is applied per frame, the shelves' gains are re-set at the start of
/// every `grid` frames of the timeline (frames that are multiples of 16) to the ramp's value there (or at the
/// retarget, for the cell it falls in), which the
/// state-variable shelves take without a transient (see `HighShelf`). While nothing ramps the coefficients are
/// set once. From `identityFrom` on every gain is 1 for good: the filter is an exact pass-through and callers
/// may skip it (a voice whose filter was removed is back on its plain path).
struct VoiceFilterState: BitwiseCopyable {
    /// Frames between coefficient updates while a shelf's gain ramps, on a grid of absolute frames: 0.33 ms at
    /// 48 kHz, short enough that the staircase of a 50 ms ramp is inaudible (a step of 1/150 of the change).
    static var grid: Int64 { @_noLocks get { 16 } }

    /// The broadband gain, and the shelves' gains at 5 kHz and 250 Hz.
    private(set) var gain = LinearRamp.constant(1)
    private(set) var gainHF = LinearRamp.constant(1)
    private(set) var gainLF = LinearRamp.constant(1)
    /// The first frame from which every gain is 1 for good (`Int64.max` while some gain is headed elsewhere).
    private(set) var identityFrom = Int64.min
    // One shelf of each kind per channel (channel 1 only for a stereo 2D voice), and the gains they were last set
    // to (before clamping), so a grid point whose gain has not changed costs nothing.
    private var high0: HighShelf
    private var high1: HighShelf
    private var low0: LowShelf
    private var low1: LowShelf
    private var appliedHF: Float = 1
    private var appliedLF: Float = 1
    /// Set by a retarget before the voice's first frame: the shelves it engages start from silence (the signal
    /// before a voice's start is silence) instead of priming on their first sample, as shelves leaving
    /// pass-through in the middle of a signal do.
    private var followsSilence = false

    /// A pass-through filter (every gain 1) for output at `sampleRate` Hz.
    @_noLocks
    init(sampleRate: Double) {
        high0 = HighShelf(sampleRate: sampleRate)
        high1 = high0
        low0 = LowShelf(sampleRate: sampleRate)
        low1 = low0
    }

    /// True when the filter leaves every frame from `frame` on untouched.
    @inline(__always)
    @_noLocks
    func isIdentity(from frame: Int64) -> Bool { frame >= identityFrom }

    /// Heads for `setup`'s gains (kind none: every gain 1), ramping from their values at `frame` over `rampFrames`.
    /// `beforeFirstFrame`: the voice has not sounded yet, so the filter starts from silence.
    @_noLocks
    mutating func retarget(_ setup: FilterSetup, at frame: Int64, rampFrames: Int, beforeFirstFrame: Bool) {
        followsSilence = beforeFirstFrame
        let off = setup.kind == FilterSetup.none
        gain = LinearRamp(from: gain.value(at: frame), to: off ? 1 : setup.gain, startFrame: frame, length: rampFrames)
        gainHF = LinearRamp(from: gainHF.value(at: frame), to: off ? 1 : setup.gainHF, startFrame: frame,
                            length: rampFrames)
        gainLF = LinearRamp(from: gainLF.value(at: frame), to: off ? 1 : setup.gainLF, startFrame: frame,
                            length: rampFrames)
        identityFrom = Swift.max(Self.unityFrom(gain, onGrid: false),
                                 Swift.max(Self.unityFrom(gainHF, onGrid: true), Self.unityFrom(gainLF, onGrid: true)))
    }

    /// The first frame from which `ramp` is 1 for good (or, for a shelf, the first grid point from which it is):
    /// `Int64.min` for a ramp that is 1 everywhere we still render, `Int64.max` for one that ends elsewhere.
    @_noLocks
    private static func unityFrom(_ ramp: LinearRamp, onGrid: Bool) -> Int64 {
        if ramp.to != 1 { return .max }
        if ramp.from == 1 || ramp.length == 0 { return ramp.startFrame }
        let end = ramp.startFrame + Int64(ramp.length)
        return onGrid ? gridFloor(end + grid - 1) : end
    }

    /// The grid point at or before `frame`.
    @inline(__always)
    @_noLocks
    static func gridFloor(_ frame: Int64) -> Int64 { frame & ~(grid - 1) }

    /// Filters `count` frames starting at output frame `frame` in place: `left` only when `channels` is 1,
    /// `left` and `right` when 2. Must see every frame the voice renders, in order.
    @_noLocks
    mutating func process(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, channels: Int,
                          frame: Int64, count n: Int) {
        let fromSilence = followsSilence
        followsSilence = false
        if n <= 0 || isIdentity(from: frame) { return }
        let end = frame + Int64(n)
        let first = Self.gridFloor(frame)
        let shelvesRamp = gainHF.varies(in: first, end) || gainLF.varies(in: first, end)
        var t = frame
        while t < end {
            // One run per grid cell while a shelf ramps, else the whole span: coefficients from the cell's start,
            // or from the last retarget if that came inside the cell (a span starts there: the gains before it are
            // the old ones, whichever span the rest of the cell falls in).
            let cell = Self.gridFloor(t)
            let runEnd = shelvesRamp ? Swift.min(end, cell + Self.grid) : end
            setShelves(hf: gainHF.value(at: Swift.max(cell, gainHF.startFrame)),
                       lf: gainLF.value(at: Swift.max(cell, gainLF.startFrame)))
            if fromSilence && t == frame {
                high0.followSilence()
                high1.followSilence()
                low0.followSilence()
                low1.followSilence()
            }
            let j = Int(t - frame), m = Int(runEnd - t)
            high0.process(left + j, count: m)
            low0.process(left + j, count: m)
            if channels == 2 {
                high1.process(right + j, count: m)
                low1.process(right + j, count: m)
            }
            t = runEnd
        }
        applyGain(left, frame: frame, count: n)
        if channels == 2 { applyGain(right, frame: frame, count: n) }
    }

    @_noLocks
    private mutating func setShelves(hf: Float, lf: Float) {
        if hf != appliedHF {
            appliedHF = hf
            high0.setGain(hf)
            high1.setGain(hf)
        }
        if lf != appliedLF {
            appliedLF = lf
            low0.setGain(lf)
            low1.setGain(lf)
        }
    }

    /// Multiplies by the broadband gain, per frame while it ramps (nothing at a constant 1).
    @_noLocks
    private func applyGain(_ x: UnsafeMutablePointer<Float>, frame: Int64, count n: Int) {
        if gain.varies(in: frame, frame + Int64(n)) {
            for j in 0..<n { x[j] *= gain.value(at: frame + Int64(j)) }
            return
        }
        let g = gain.value(at: frame)
        if g == 1 { return }
        for j in 0..<n { x[j] *= g }
    }
}
