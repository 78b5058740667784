import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
#endif

/// Removes unfinished output files when the process is interrupted (SIGINT) or terminated (SIGTERM).
///
/// Every `AtomicOutputFile` registers its temporary path here while it is being written (control thread). Once
/// `install` has run, the two signals no longer kill the process outright: a dispatch source takes each on a
/// dispatch thread, which deletes the registered files under the registry's lock (so a file being committed at that
/// moment is either already renamed into place or never will be) and exits with 128 + the signal number (130,
/// 143), as a shell expects.
public enum InterruptCleanup {
    private struct Registry {
        var paths: [String] = []
        /// Set once a signal is being handled: nothing may be committed after that.
        var interrupted = false
    }

    private static let registry = Mutex(Registry())
    private static let sources = Mutex<[DispatchSourceSignal]>([])

    /// Takes over SIGINT and SIGTERM for the rest of the process. Call once, before writing output; later calls
    /// do nothing.
    public static func install() {
        sources.withLock { sources in
            guard sources.isEmpty else { return }
            for number in [SIGINT, SIGTERM] {
                // The default action would kill the process before the source could run.
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { removeAndExit(signal: number) }
                source.resume()
                sources.append(source)
            }
        }
    }

    /// Notes a temporary file that must not outlive an interruption.
    static func register(_ path: String) {
        registry.withLock { $0.paths.append(path) }
    }

    /// Forgets `path` (it was deleted).
    static func unregister(_ path: String) {
        registry.withLock { registry in
            if let i = registry.paths.lastIndex(of: path) { registry.paths.remove(at: i) }
        }
    }

    /// Forgets `path` and runs `commit` (the rename into place) under the registry's lock, so an interruption
    /// either deletes the file or sees it committed, never neither. Returns false, without running `commit`, when an
    /// interruption is under way.
    static func commit(_ path: String, _ commit: () -> Void) -> Bool {
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
