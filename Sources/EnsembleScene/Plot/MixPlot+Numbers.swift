extension MixPlot {
    /// A scene value as a person writes it: the shortest decimal that reads back as the same `Float` (0.8, not
    /// 0.800000011920929, which is the `Float` 0.8 widened to a `Double`), without a trailing ".0" (2, not 2.0).
    public static func decimal(_ x: Float) -> String {
        let s = x.description
        return s.hasSuffix(".0") ? String(s.dropLast(2)) : s
    }

    /// Seconds as a person writes them: the shortest decimal that reads back as the same `Double` (0.5, 2).
    public static func decimal(_ x: Double) -> String {
        let s = x.description
        return s.hasSuffix(".0") ? String(s.dropLast(2)) : s
    }
}
