// Render thread (asking for the priority) and control side (reading the outcome).
#if canImport(Glibc)
import Glibc
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
#endif

/// Whether the render thread of an `OpenALOutput` runs with real-time scheduling (`SCHED_FIFO`). Linux grants
/// it only with the privilege (`CAP_SYS_NICE`, an `RLIMIT_RTPRIO` limit, rtkit); without it the thread runs at
/// normal priority and a busy machine may cause underruns.
public enum RealTimePriority: Sendable, Equatable, CustomStringConvertible {
    /// The render thread has not started yet.
    case notStarted
    /// `SCHED_FIFO` at this priority.
    case granted(priority: Int32)
    /// `pthread_setschedparam` failed with this errno (typically EPERM); the thread runs at normal priority.
    case refused(errno: Int32)

    /// The `SCHED_FIFO` priority asked for (low: above normal threads, below the kernel's own).
    static let requested: Int32 = 10

    /// Asks for `SCHED_FIFO` for the calling thread.
    package static func request() -> RealTimePriority {
        var param = sched_param()
        param.sched_priority = requested
        let result = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param)
        return result == 0 ? .granted(priority: requested) : .refused(errno: result)
    }

    public var description: String {
        switch self {
        case .notStarted: return "not started"
        case let .granted(priority): return "real-time priority (SCHED_FIFO \(priority))"
        case let .refused(code): return "normal priority (SCHED_FIFO refused: \(String(cString: strerror(code))))"
        }
    }
}
