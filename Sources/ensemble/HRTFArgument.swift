/// `--hrtf [PATH]`: an option whose value may be left out. Before ArgumentParser reads the arguments, a bare
/// `--hrtf` not followed by a data set file (a name ending in `.mhr` or `.sofa`) becomes
/// `--hrtf=<installed default>` (`installedDefault`, which names no file), so
/// `ensemble render scene.json --hrtf -o out.wav` does not take `-o` as the path.
enum HRTFArgument {
    /// The value a bare `--hrtf` stands for.
    static let installedDefault = "<installed default>"

    static func normalized(_ arguments: [String]) -> [String] {
        var out: [String] = []
        var i = 0
        while i < arguments.count {
            let argument = arguments[i]
            if argument == "--" {
                out += arguments[i...]
                break
            }
            if argument == "--hrtf" {
                let next = i + 1 < arguments.count ? arguments[i + 1].lowercased() : ""
                if !(next.hasSuffix(".mhr") || next.hasSuffix(".sofa")) {
                    out.append("--hrtf=" + installedDefault)
                    i += 1
                    continue
                }
            }
            out.append(argument)
            i += 1
        }
        return out
    }
}
