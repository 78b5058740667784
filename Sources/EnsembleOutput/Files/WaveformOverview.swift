import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// Thread: whichever thread pulls rendered blocks (the offline render loop); never the render function itself.
///
/// The smallest and largest sample of each output channel in each pixel column of a plot, gathered block by
/// block while a mix is rendered, so the picture of a long mix costs `columns × channels × 2` floats however
/// long the mix is (the mix itself is never kept).
public struct WaveformOverview: Sendable, Equatable {
    /// Pixel columns across the whole mix.
    public let columns: Int
    /// Frames the mix lasts; frame f falls in column ⌊f · columns / frameCount⌋.
    public let frameCount: Int64
    /// Interleaved channels in the blocks given to `add`.
    public let channelCount: Int
    /// `minimum[channel][column]`: the lowest sample seen there (0 for a column no frame reached).
    public private(set) var minimum: [[Float]]
    /// `maximum[channel][column]`: the highest sample seen there (0 for a column no frame reached).
    public private(set) var maximum: [[Float]]
    /// Frames added so far.
    public private(set) var framesAdded: Int64 = 0

    /// An empty overview of `frameCount` frames in `columns` columns (both at least 1).
    public init(columns: Int, frameCount: Int64, channelCount: Int = 2) {
        self.columns = max(1, columns)
        self.frameCount = max(1, frameCount)
        self.channelCount = max(1, channelCount)
        minimum = Array(repeating: Array(repeating: 0, count: self.columns), count: self.channelCount)
        maximum = minimum
    }

    /// The column frame `frame` falls in.
    public func column(ofFrame frame: Int64) -> Int {
        // frame < 2^63 / columns for any mix shorter than millions of years, so the product cannot overflow.
        Int(min(max(frame, 0), frameCount - 1) * Int64(columns) / frameCount)
    }

    /// Adds the next frames of the mix, interleaved (`channelCount` samples a frame). Frames past `frameCount`
    /// are ignored.
    public mutating func add(interleaved samples: UnsafeBufferPointer<Float>) {
        let frames = samples.count / channelCount
        var f = 0
        while f < frames, framesAdded < frameCount {
            let column = self.column(ofFrame: framesAdded)
            // The frames up to the start of the next column all go to this one: one index computation per run.
            let nextStart = (Int64(column + 1) * frameCount + Int64(columns) - 1) / Int64(columns)
            let run = Int(min(Int64(frames - f), nextStart - framesAdded, frameCount - framesAdded))
            // A column's first frame sets its extremes; later frames widen them.
            let fresh = framesAdded == (Int64(column) * frameCount + Int64(columns) - 1) / Int64(columns)
            for c in 0..<channelCount {
                var lo = fresh ? Float.infinity : minimum[c][column]
                var hi = fresh ? -Float.infinity : maximum[c][column]
                for i in 0..<run {
                    let v = samples[(f + i) * channelCount + c]
                    if v < lo { lo = v }
                    if v > hi { hi = v }
                }
                minimum[c][column] = lo
                maximum[c][column] = hi
            }
            f += run
            framesAdded += Int64(run)
        }
    }

    /// The largest |sample| seen on `channel`.
    public func peak(channel: Int) -> Float {
        max(-(minimum[channel].min() ?? 0), maximum[channel].max() ?? 0)
    }
}
