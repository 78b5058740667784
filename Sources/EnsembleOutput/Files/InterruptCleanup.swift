import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
#endif

/// Removes unfinished output files when a signal ends the process: SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
/// SIGUSR2, SIGPIPE (the reader of the output went away) and SIGXFSZ (`ulimit -f` reached).
///
/// Every `AtomicOutputFile` registers its temporary path here while it is being written (control thread). Once
/// `install` has run, these signals no longer end the process outright: a handler writes the signal's number to a
/// pipe (all a handler may safely do), and a watcher thread blocked on that pipe deletes the registered files under
/// the registry's lock (so a file being committed at that moment is either already renamed into place or never will
/// be) and exits quietly with 128 + the signal number (130 for SIGINT, 141 for SIGPIPE, 143 for SIGTERM…), as a
/// shell expects. A write interrupted by SIGPIPE or SIGXFSZ fails with EPIPE or EFBIG meanwhile. SIGKILL cannot be
/// caught: the next write of the same output removes what it left.
public enum InterruptCleanup {
    private struct Registry {
        var paths: [String] = []
        /// Set once a signal is being handled: nothing may be committed after that.
        var interrupted = false
    }

    private static let registry = Mutex(Registry())
    private static let installed = Mutex(false)

    /// The signals taken over.
    public static let signals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE, SIGXFSZ]

    /// Takes over `signals` for the rest of the process. Call once, before writing output; later calls do nothing.
    public static func install() {
        installed.withLock { installed in
            guard !installed else { return }
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else { return }
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            signalPipe = ends[1]
            let readEnd = ends[0]
            let watcher = Thread {
                var number: Int32 = 0
                while read(readEnd, &number, 4) != 4 {}
                removeAndExit(signal: number)
            }
            watcher.name = "InterruptCleanup"
            watcher.start()
            for number in signals {
                // glibc's signal() keeps the handler installed and restarts interrupted calls (BSD semantics).
                signal(number) { number in
                    var value = number
                    _ = write(signalPipe, &value, 4)
                }
            }
            installed = true
        }
    }
    /// Notes a temporary file that must not outlive an interruption.
    package static func register(_ path: String) {
        registry.withLock { $0.paths.append(path) }
    }

    /// Creates a temporary file that must not outlive an interruption and notes it, both under the registry's lock:
    /// `create` returns the file's descriptor and path (a negative descriptor and nil when it made no file). An
    /// interruption then either comes before the file exists or finds it noted; none is made once an interruption
    /// is under way (−1, `create` not called).
    package static func creatingRegistered(_ create: () -> (descriptor: Int32, path: String?)) -> Int32 {
        registry.withLock { registry in
            guard !registry.interrupted else { return -1 }
            let made = create()
            if let path = made.path { registry.paths.append(path) }
            return made.descriptor
        }
    }

    /// Forgets `path` (it was deleted).
    package static func unregister(_ path: String) {
        registry.withLock { registry in
            if let i = registry.paths.lastIndex(of: path) { registry.paths.remove(at: i) }
        }
    }

    /// Forgets `path` and runs `commit` (the rename into place) under the registry's lock, so an interruption
    /// either deletes the file or sees it committed, never neither. Returns false, without running `commit`, when an
    /// interruption is under way.
    package static func commit(_ path: String, _ commit: () -> Void) -> Bool {
        registry.withLock { registry in
            guard !registry.interrupted else { return false }
            if let i = registry.paths.lastIndex(of: path) { registry.paths.remove(at: i) }
            commit()
            return true
        }
    }

    private static func removeAndExit(signal number: Int32) {
        registry.withLock { registry in
            registry.interrupted = true
            for path in registry.paths { unlink(path) }
            registry.paths.removeAll()
        }
        // _exit, not exit: other threads are still running and atexit handlers must not race them.
        _exit(128 + number)
    }
}

/// The pipe's write end, read by the signal handler (set once by `install`, before any handler is installed).
nonisolated(unsafe) private var signalPipe: Int32 = -1
