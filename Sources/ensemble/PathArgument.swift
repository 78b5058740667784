import Ensemble
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A file named on the command line, as the library opens it and as messages name it.
///
/// A name that is UTF-8 (nearly all) is used as it is. One that is not (`RawArguments`) is opened by its raw bytes
/// and handed to the library as `/dev/fd/N`; messages still name it as typed, with the bytes that are not UTF-8
/// written `\xFF` (`PathNames`).
struct InputPath {
    /// What messages call the file.
    let display: String
    /// What the library opens.
    let path: String
    /// The folder relative names in the file (a scene's tracks) are taken from, as the library can open it.
    let folder: String

    init(_ argument: String) throws(AudioFileError) {
        guard let raw = RawArguments.original(of: argument) else {
            display = argument
            path = argument
            let parent = (argument as NSString).deletingLastPathComponent
            folder = parent.isEmpty ? "." : parent
            return
        }
        display = RawArguments.escaped(raw)
        // O_PATH: nothing is read through this descriptor, and a FIFO does not block; the library reopens it.
        let descriptor = open(PathNames.cString(raw), openPathOnly | O_CLOEXEC)
        guard descriptor >= 0 else { throw PathNames.openError(errno, display) }
        path = "/dev/fd/\(descriptor)"
        PathNames.register(path, shownAs: display)
        let (parent, _) = PathNames.split(raw)
        folder = try PathNames.openableFolder(parent, of: display)
    }
}

/// An output named on the command line. A name that is not UTF-8 is written by the library under a stand-in name
/// in the same folder (with the same extension, which chooses the container), then renamed to the real bytes by
/// `commit`; a stand-in left by a signal is removed like the library's own temporary files.
struct OutputPath {
    /// What messages call the output.
    let display: String
    /// What the library writes.
    let path: String
    /// The folder's descriptor, the stand-in's name and the real name, for an output whose name is not UTF-8.
    private let rename: (folder: Int32, standIn: String, name: [UInt8])?
    /// Stand-ins made so far (main thread, while the command reads its arguments).
    nonisolated(unsafe) private static var standIns = 0
    /// Whether the library writes a stand-in that `commit` renames (the name is not UTF-8).
    var isStandIn: Bool { rename != nil }

    init(_ argument: String) throws(AudioFileError) {
        guard let raw = RawArguments.original(of: argument) else {
            display = argument
            path = argument
            rename = nil
            return
        }
        display = RawArguments.escaped(raw)
        let (parent, name) = PathNames.split(raw)
        let folder = open(PathNames.cString(parent), openPathOnly | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else {
            let code = errno
            throw AudioFileError(.writeFailed, path: display, code == ENOENT || code == ENOTDIR
                                 ? "directory '\(RawArguments.escaped(parent))' does not exist" : errnoText(code))
        }
        var info = stat()
        if fstatat(folder, PathNames.cString(name), &info, 0) == 0, info.st_mode & S_IFMT != S_IFREG {
            throw AudioFileError(.writeFailed, path: display, info.st_mode & S_IFMT == S_IFDIR ? "is a directory"
                                 : "a device or FIFO whose name is not UTF-8 cannot be written to; name it by a link")
        }
        // The extension, when it is UTF-8, chooses the container as it would for any other name.
        let dot = name.lastIndex(of: UInt8(ascii: "."))
        let suffix = dot.flatMap { String(validating: name[$0...], as: UTF8.self) } ?? ""
        // Numbered: one command may write several such outputs into one folder (render's -o, --events, --plot).
        Self.standIns += 1
        let standIn = ".ensemble-\(getpid())-output\(Self.standIns)\(suffix)"
        path = "/dev/fd/\(folder)/\(standIn)"
        rename = (folder, standIn, name)
        PathNames.register(path, shownAs: display)
        PathNames.register("/dev/fd/\(folder)", shownAs: RawArguments.escaped(parent))
        InterruptCleanup.register(path)
    }

    /// Puts a finished output whose name is not UTF-8 under that name (nothing to do for any other).
    func commit() throws(AudioFileError) {
        guard let rename else { return }
        var code: Int32 = 0
        let committed = InterruptCleanup.commit(path) {
            if renameat(rename.folder, rename.standIn, rename.folder, PathNames.cString(rename.name)) != 0 { code = errno }
        }
        guard committed, code == 0 else {
            unlinkat(rename.folder, rename.standIn, 0)
            throw AudioFileError(.writeFailed, path: display, "cannot put the finished file in place: \(errnoText(code))")
        }
    }
}

/// The names messages give the `/dev/fd/N` paths that stand for command-line names that are not UTF-8.
enum PathNames {
    nonisolated(unsafe) private static var shown: [(path: String, display: String)] = []

    static func register(_ path: String, shownAs display: String) { shown.append((path, display)) }

    /// `path` as messages name it: a stand-in, or a path inside a stand-in folder, becomes the name as typed.
    static func display(_ path: String) -> String {
        for (standIn, display) in shown {
            if path == standIn { return display }
            if path.hasPrefix(standIn + "/") { return display + path.dropFirst(standIn.count) }
        }
        return path
    }

    /// `error` naming what the user typed instead of a stand-in.
    static func display(_ error: AudioFileError) -> AudioFileError {
        AudioFileError(error.kind, path: display(error.path), error.detail)
    }

    /// The folder part (`.` when there is none) and the last component of a raw path.
    static func split(_ raw: [UInt8]) -> (folder: [UInt8], name: [UInt8]) {
        guard let slash = raw.lastIndex(of: UInt8(ascii: "/")) else { return (Array(".".utf8), raw) }
        return (slash == 0 ? Array("/".utf8) : Array(raw[..<slash]), Array(raw[(slash + 1)...]))
    }

    /// A path the library can open for the raw `folder`: itself when it is UTF-8, else a descriptor's `/dev/fd/N`.
    static func openableFolder(_ folder: [UInt8], of display: String) throws(AudioFileError) -> String {
        if let text = String(validating: folder, as: UTF8.self) { return text }
        let descriptor = open(cString(folder), openPathOnly | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw openError(errno, display) }
        register("/dev/fd/\(descriptor)", shownAs: RawArguments.escaped(folder))
        return "/dev/fd/\(descriptor)"
    }

    /// Raw path bytes as the C calls take them, NUL-terminated.
    static func cString(_ raw: [UInt8]) -> [CChar] { raw.map { CChar(bitPattern: $0) } + [0] }

    /// The error the library gives for a file it cannot open, in its words.
    static func openError(_ code: Int32, _ display: String) -> AudioFileError {
        switch code {
        case ENOENT, ENOTDIR: return AudioFileError(.notFound, path: display, "no such file")
        default: return AudioFileError(.unreadable, path: display, errnoText(code))
        }
    }
}

/// Linux's O_PATH (a descriptor that names a file without opening it for I/O), which Glibc's Swift module does not
/// export (it is a _GNU_SOURCE name); the same value on every Linux architecture Swift supports.
private let openPathOnly: Int32 = 0o10000000
