// Render thread (pan ramps), and the tests that hold it to libm.
import EnsembleFormats

/// cos(xπ/2) and sin(xπ/2) for x in 0…1 by their Taylor polynomials in u = xπ/2 up to u¹² and u¹³ (the next terms
/// are below 1e-8 on the quarter wave), exact at x = 0; Double throughout, rounded once to Float.
package enum QuarterWave {
    @inline(__always)
    @_noLocks
    package static func cos(_ x: Double) -> Float {
        let u = x * (Double.pi / 2)
        return Float(series(u * u, 2, 12, 30, 56, 90, 132))
    }

    @inline(__always)
    @_noLocks
    package static func sin(_ x: Double) -> Float {
        let u = x * (Double.pi / 2)
        return Float(u * series(u * u, 6, 20, 42, 72, 110, 156))
    }

    /// 1 − v/a·(1 − v/b·(1 − … (1 − v/f))): the Taylor series of cos (a…f = 1·2, 3·4, …) or of sin(u)/u
    /// (2·3, 4·5, …) in v = u², summed from its smallest term.
    @inline(__always)
    @_noLocks
    private static func series(_ v: Double, _ a: Double, _ b: Double, _ c: Double, _ d: Double, _ e: Double,
                               _ f: Double) -> Double {
        var s = 1 - v * (1 / f)
        s = 1 - v * (1 / e) * s
        s = 1 - v * (1 / d) * s
        s = 1 - v * (1 / c) * s
        s = 1 - v * (1 / b) * s
        return 1 - v * (1 / a) * s
    }
}
