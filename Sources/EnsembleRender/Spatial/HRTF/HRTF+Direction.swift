// Any thread: the blended response for one direction, as the renderer computes it (for tests and tools).
import EnsembleFormats

extension HRTF {
    /// The response the renderer uses for a source in `direction` (listener coordinates: +x right, +y up, −z
    /// ahead): the four measured directions around it blended bilinearly in elevation and azimuth, the delays
    /// blended and rounded to whole samples (`HRIRTable.blend`). A zero direction (a source on the listener's
    /// head) is heard equally in both ears, undelayed.
    public func response(towards direction: Vector3) -> HRIR {
        let table = HRIRTable(self)
        defer { table.deallocate() }
        var l = [Float](repeating: 0, count: responseLength), r = l
        let delays = l.withUnsafeMutableBufferPointer { lp in
            r.withUnsafeMutableBufferPointer { rp in
                table.blend(direction, left: lp.baseAddress!, right: rp.baseAddress!)
            }
        }
        return HRIR(left: l, right: r, leftDelay: Float(delays.left), rightDelay: Float(delays.right))
    }
}
