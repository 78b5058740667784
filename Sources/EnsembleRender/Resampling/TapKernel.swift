// Render thread: made per kernel call from the voice's cursor; the tables are built on the control thread.
import CMixKernel
import EnsembleFormats

/// The tables every resampler kernel reads, made once by the mixer (the sinc bank once per process, when first
/// needed: `SincSlot`).
package struct ResamplerTables: BitwiseCopyable {
    /// The Catmull-Rom weights (`Resampler.makeWeightTable`).
    package var cubic: UnsafePointer<Float>
    /// The sinc bank, once something on the engine resamples with sinc (`SincSlot`).
    package var sincSlot: SincSlot
    /// The bank: read only for sinc voices, which start after the slot is filled.
    package var sinc: SincBank { @_noLocks get { sincSlot.filled.bank } }
    /// What a cubic or linear `TapKernel` holds as its (unused) sinc table: no weights.
    let noSinc: SincBank.Table
    /// The `fastSinc` bank of this engine's output rate (`FastSincBank.slot(outputRate:)`): nil until a control
    /// thread prepares it, which it does before any voice that uses it starts.
    package var fastSinc: UnsafePointer<FastSincBank?>
    /// Taps gathered for frames whose taps cross a file's edges or loop seams (`SincBank.maxTaps` per channel).
    package var edgeLeft: UnsafeMutablePointer<Float>
    package var edgeRight: UnsafeMutablePointer<Float>
    /// Where a compact voice's frames are converted to Float before the kernels read them (`CompactWindow`).
    package var windowLeft: UnsafeMutablePointer<Float>
    package var windowRight: UnsafeMutablePointer<Float>
    /// Two channels' worth of one IMA4 packet, for packets a window wants only part of (`IMA4Packets`).
    package var packetScratch: UnsafeMutablePointer<Float>
    /// `IMA4Packets.table`.
    package var ima4: UnsafePointer<ensemble_ima4_tables>
    /// Steps below 1 that may take the 36-tap table on this engine (`SincBank.shortTableSteps(outputRate:)`); the
    /// others below 1 take the anti-image table.
    /// (Both sinc tiers use them; known from the rate alone, so without either bank built.)
    let shortLow: UInt64
    let shortHigh: UInt64
    /// The lane's decoded IMA4 windows (`IMA4WindowCache`), nil for tables of no lane.
    package var ima4Cache: UnsafeMutablePointer<IMA4WindowCache>? = nil
    /// Floats before `windowLeft`/`windowRight` and after their `windowFrames` that a conversion may overwrite:
    /// with `IMA4Packets.framesPerPacket` of them, IMA4 packets that a window wants only part of are decoded whole
    /// in place, with the rest of their run (`IMA4Packets.convert`).
    var windowSlack = 0

    /// Frames each window holds.
    package static var windowFrames: Int { @_noLocks get { 4096 } }

    /// Tables with `sinc` in their slot already (a new slot; the caller frees it with the buffers).
    package init(cubic: UnsafePointer<Float>, sinc: SincBank, edgeLeft: UnsafeMutablePointer<Float>,
                 edgeRight: UnsafeMutablePointer<Float>, windowLeft: UnsafeMutablePointer<Float>,
                 windowRight: UnsafeMutablePointer<Float>, packetScratch: UnsafeMutablePointer<Float>,
                 ima4: UnsafePointer<ensemble_ima4_tables>, windowSlack: Int = 0, outputRate: Double = 0,
                 ima4Cache: UnsafeMutablePointer<IMA4WindowCache>? = nil) {
        self.init(cubic: cubic, sincSlot: SincSlot(sinc), edgeLeft: edgeLeft,
                  edgeRight: edgeRight, windowLeft: windowLeft, windowRight: windowRight, packetScratch: packetScratch,
                  ima4: ima4, windowSlack: windowSlack, outputRate: outputRate, ima4Cache: ima4Cache)
    }

    /// Tables whose sinc bank is in `sincSlot`, filled or to be filled before a sinc voice starts.
    package init(cubic: UnsafePointer<Float>, sincSlot: SincSlot, edgeLeft: UnsafeMutablePointer<Float>,
                 edgeRight: UnsafeMutablePointer<Float>, windowLeft: UnsafeMutablePointer<Float>,
                 windowRight: UnsafeMutablePointer<Float>, packetScratch: UnsafeMutablePointer<Float>,
                 ima4: UnsafePointer<ensemble_ima4_tables>, windowSlack: Int = 0, outputRate: Double,
                 ima4Cache: UnsafeMutablePointer<IMA4WindowCache>? = nil) {
        self.cubic = cubic
        self.sincSlot = sincSlot
        noSinc = SincBank.Table(data: cubic, taps: 0)
        self.edgeLeft = edgeLeft
        self.edgeRight = edgeRight
        self.windowLeft = windowLeft
        self.windowRight = windowRight
        self.packetScratch = packetScratch
        self.ima4 = ima4
        self.windowSlack = windowSlack
        fastSinc = FastSincBank.slot(outputRate: outputRate)
        self.ima4Cache = ima4Cache
        (shortLow, shortHigh) = SincBank.shortTableSteps(outputRate: outputRate)
    }

    /// The sinc table for a step (32.32) on this engine: below 1 the anti-image table unless the 36-tap table's
    /// images land at 20 kHz or above (`shortLow`…`shortHigh`), else the bank's table for the step.
    @inline(__always)
    @_noLocks
    package func sincTable(step: UInt64) -> SincBank.Table {
        if step < 1 << 32, step < shortLow || step > shortHigh { return sinc.antiImage }
        return sinc.table(step: step)
    }

    /// The `fastSinc` table for a step (32.32) on this engine, chosen as `sincTable(step:)` chooses (the banks share
    /// their short table's band and steps). Its bank is prepared on the control side before any voice that uses
    /// it starts (`FastSincBank.prepare(outputRate:)`).
    @inline(__always)
    @_noLocks
    package func fastSincTable(step: UInt64) -> SincBank.Table {
        let bank = fastSinc.pointee.unsafelyUnwrapped
        if step < 1 << 32, step < shortLow || step > shortHigh { return bank.antiImage }
        return bank.table(step: step)
    }
}

/// One output frame from `taps` contiguous source frames (`before` of them before the cursor's frame), for a
/// resampler and step: the sinc or fastSinc table chosen for the step, the cubic, or linear interpolation. Every path that
/// computes a frame (the in-memory fast and edge loops, the streamed window, the WSOLA grains) goes through
/// `frame`, so a sample has the same bits whichever path made it.
struct TapKernel: BitwiseCopyable {
    let quality: ResamplerQuality
    let table: SincBank.Table
    let cubic: UnsafePointer<Float>
    let taps: Int
    let before: Int

    @_noLocks
    init(_ cursor: SourceCursor, _ tables: ResamplerTables) {
        self.init(cursor.quality, step: cursor.step, tables)
    }

    @_noLocks
    init(_ quality: ResamplerQuality, step: UInt64, _ tables: ResamplerTables) {
        self.quality = quality
        cubic = tables.cubic
        switch quality {
        case .sinc:
            table = tables.sincTable(step: step)
            taps = table.taps
            before = table.before
        case .fastSinc:
            table = tables.fastSincTable(step: step)
            taps = table.taps
            before = table.before
        case .cubic:
            table = tables.noSinc // unused (the sinc bank may not be built)
            taps = 4
            before = 1
        case .linear:
            table = tables.noSinc // unused
            taps = 2
            before = 0
        }
    }

    @inline(__always)
    @_noLocks
    private init(_ other: TapKernel, quality: ResamplerQuality) {
        self.quality = quality
        table = other.table
        cubic = other.cubic
        taps = other.taps
        before = other.before
    }

    /// The same kernel with `quality` spelled out, for loops specialised on it (`quality` must be this one's).
    @inline(__always)
    @_noLocks
    func `as`(_ quality: ResamplerQuality) -> TapKernel { TapKernel(self, quality: quality) }

    /// Taps after the cursor's frame.
    var after: Int { @_noLocks get { taps - 1 - before } }

    /// The frame at fraction `fraction` past tap `before` of `l` (and `r` when `stereo`).
    @inline(__always)
    @_noLocks
    func frame(_ l: UnsafePointer<Float>, _ r: UnsafePointer<Float>, stereo: Bool, _ fraction: UInt32) -> (Float, Float) {
        switch quality {
        case .sinc, .fastSinc:
            return stereo ? SincBank.stereo(l, r, table, fraction) : (SincBank.sample(l, table, fraction), 0)
        case .cubic:
            let w = Resampler.row(cubic, fraction)
            let sl = Self.catmullRom(l[0], l[1], l[2], l[3], w)
            return (sl, stereo ? Self.catmullRom(r[0], r[1], r[2], r[3], w) : 0)
        case .linear:
            // t is the fraction's top 24 bits, exact in a Float; t = 0 gives the sample itself.
            let t = Float(fraction >> 8) * 0x1p-24
            let sl = l[0] + (l[1] - l[0]) * t
            return (sl, stereo ? r[0] + (r[1] - r[0]) * t : 0)
        }
    }

    /// The cubic's one sample from four taps and a weight row (`Resampler.makeWeightTable`), summed as
    /// (w0·s0 + w2·s2) + (w1·s1 + w3·s3): the order the four-frame kernel's transposed sum uses, so both give
    /// the same bits.
    @inline(__always)
    @_noLocks
    static func catmullRom(_ s0: Float, _ s1: Float, _ s2: Float, _ s3: Float, _ w: UnsafePointer<Float>) -> Float {
        (s0 * w[0] + s2 * w[2]) + (s1 * w[1] + s3 * w[3])
    }
}
