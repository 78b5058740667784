import Foundation
import EnsembleOutput

/// `render --plot out.svg` also draws `out.png` (a name without `.svg` gets `.png` added) when librsvg's
/// `rsvg-convert` is on the PATH, for viewers that show no SVG. The PNG is a courtesy: without the tool nothing is
/// said, and a conversion that fails is one `note:` line; neither fails the render. A plot written to standard
/// output, a device or a FIFO gets no PNG (there is no file to name it after).
enum PlotPicture {
    /// The PNG's path beside `svg`.
    static func pngPath(beside svg: String) -> String {
        svg.lowercased().hasSuffix(".svg") ? String(svg.dropLast(4)) + ".png" : svg + ".png"
    }

    /// The first executable `rsvg-convert` in `path` (a PATH value), or nil.
    static func converter(path: String?) -> String? {
        for folder in (path ?? "").split(separator: ":") where !folder.isEmpty {
            let candidate = "\(folder)/rsvg-convert"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Draws the PNG of the SVG just written to `svg`, if it is a regular file and `rsvg-convert` is installed.
    /// Returns a note for stderr when the conversion was tried and failed, nil otherwise.
    static func write(beside svg: String) -> String? {
        var info = stat()
        guard svg != "-", stat(svg, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
              let converter = converter(path: ProcessInfo.processInfo.environment["PATH"]) else { return nil }
        let png = pngPath(beside: svg)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: converter)
        process.arguments = ["--format", "png", svg]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return "note: \(png) not drawn: cannot run \(converter)"
        }
        // Read to the end before waiting, so a PNG larger than the pipe's buffer cannot stall the converter.
        let bytes = [UInt8](output.fileHandleForReading.readDataToEndOfFile())
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0, !bytes.isEmpty else {
            return "note: \(png) not drawn: rsvg-convert failed (status \(process.terminationStatus))"
        }
        do {
            try TextFileWriter.write(bytes: bytes, to: png)
        } catch {
            return "note: \(png) not drawn: \(error.detail)"
        }
        return nil
    }
}
