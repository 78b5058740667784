import CRenderMath
import EnsembleFormats

// Render thread: libm for the spatial update (once per voice per update, never per sample).

/// The libm functions the spatial update needs, callable from `@_noLocks` code: they are C (`CRenderMath`),
/// which the checker cannot see into, so each call says here that it is safe — libm's float functions take no
/// lock and allocate nothing.
enum RenderMath {
    @inline(__always) @_noLocks
    static func sqrt(_ x: Float) -> Float { _unsafePerformance { ensemble_sqrtf(x) } }
    @inline(__always) @_noLocks
    static func pow(_ x: Float, _ y: Float) -> Float { _unsafePerformance { ensemble_powf(x, y) } }
    @inline(__always) @_noLocks
    static func exp(_ x: Float) -> Float { _unsafePerformance { ensemble_expf(x) } }
    @inline(__always) @_noLocks
    static func atan2(_ y: Float, _ x: Float) -> Float { _unsafePerformance { ensemble_atan2f(y, x) } }
    @inline(__always) @_noLocks
    static func acos(_ x: Float) -> Float { _unsafePerformance { ensemble_acosf(x) } }
    @inline(__always) @_noLocks
    static func cos(_ x: Float) -> Float { _unsafePerformance { ensemble_cosf(x) } }
    @inline(__always) @_noLocks
    static func sin(_ x: Float) -> Float { _unsafePerformance { ensemble_sinf(x) } }
}
