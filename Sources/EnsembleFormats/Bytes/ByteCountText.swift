import Foundation

/// Sizes in messages, written the one way a person would: `512 bytes`, `3.4 kB`, `12 MB`, `2.1 GB`.
///
/// Decimal units (1 kB = 1000 bytes, as disk makers and `df -H` count). Below 10 of a unit one decimal is shown,
/// from 10 whole units, rounded to the nearest; since a unit is used only from 1 of it, a size that is not zero never
/// reads as "0 MB".
package enum ByteCountText {
    private static let units = ["kB", "MB", "GB", "TB", "PB", "EB"]

    /// `bytes` as text; a negative count (never a size) is printed as a plain number of bytes.
    package static func describe(_ bytes: Int64) -> String {
        guard bytes >= 1000 else { return bytes == 1 ? "1 byte" : "\(bytes) bytes" }
        var value = Double(bytes) / 1000
        var unit = 0
        // Up a unit while the figure would round to four digits (999_999 bytes is "1.0 MB", not "1000 kB").
        while unit < units.count - 1, value.rounded() >= 1000 {
            value /= 1000
            unit += 1
        }
        let tenths = (value * 10).rounded() / 10
        let figure = tenths < 10 ? String(format: "%.1f", tenths) : String(Int(value.rounded()))
        return "\(figure) \(units[unit])"
    }

    /// `bytes` as text (`Int` sizes, as memory is counted).
    package static func describe(_ bytes: Int) -> String { describe(Int64(bytes)) }
}
