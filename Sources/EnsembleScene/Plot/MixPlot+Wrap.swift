extension MixPlot {
    /// `text` broken into lines of at most `columns` characters, so that a lane's name and summary are shown whole.
    /// A summary's items (separated by " · ") stay together where they fit, the "·" ending the line before the
    /// break (even if that makes it two characters longer); an item too long for a line breaks at its spaces, and a
    /// word too long for a line after its last hyphen that fits, else into line-long pieces.
    public static func wrapped(_ text: String, columns: Int) -> [String] {
        let width = max(columns, 1)
        var lines: [String] = []
        var line = ""
        for item in text.components(separatedBy: " · ") {
            if line.isEmpty {
                line = item
            } else if line.count + 3 + item.count <= width {
                line += " · " + item
                continue
            } else {
                lines.append(line + " ·")
                line = item
            }
            // A new line starts with `item`: break it if it is too long.
            if line.count > width {
                var pieces = words(line, width)
                line = pieces.removeLast()
                lines += pieces
            }
        }
        lines.append(line)
        return lines
    }

    /// `text` (no separators) broken at spaces into lines of at most `width` characters; never empty.
    private static func words(_ text: String, _ width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            var word = Substring(word)
            if !line.isEmpty && line.count + 1 + word.count <= width {
                line += " " + word
                continue
            }
            if !line.isEmpty { lines.append(line) }
            while word.count > width {
                // After its last hyphen that fits, else a line's worth.
                let head = word.prefix(width)
                let cut = head.lastIndex(of: "-").map { head.distance(from: head.startIndex, to: $0) + 1 } ?? width
                lines.append(String(word.prefix(cut)))
                word = word.dropFirst(cut)
            }
            line = String(word)
        }
        return lines + [line]
    }
}
