import ArgumentParser
import Ensemble

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the OpenAL playback devices; the default one is marked with *.",
        discussion: "Pass a name to `ensemble play --device`. Prints nothing (exit 0) when OpenAL has no device."
    )

    @Flag(help: "Let OpenAL Soft and ALSA print their own diagnostics (silenced otherwise).")
    var verbose = false

    func run() throws {
        BackendLogs.quiet(unless: verbose)
        let fallback = OpenALDevice.defaultDeviceName()
        for name in OpenALDevice.availableDevices() {
            print(name == fallback ? "* \(name)" : "  \(name)")
        }
    }
}
