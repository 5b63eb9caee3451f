/// The white space trimmed from the ends of a typed value, decided from each
/// scalar's Unicode properties.
///
/// These are Foundation's `CharacterSet.whitespaces` and
/// `.whitespacesAndNewlines`, which the jqc binary cannot use: it links only
/// FoundationEssentials (the rest of Foundation cost every process about half
/// a millisecond of start-up). A test holds both to Foundation's sets for
/// every Unicode scalar.
public enum TrimmedSpace: Sendable {
    /// Spaces and tabs: the space separators (Zs), U+0009 and U+200B ZERO
    /// WIDTH SPACE (a space separator in early Unicode, and still in the set).
    case spaces
    /// Unicode's White_Space (spaces, tabs, line and paragraph breaks,
    /// U+0085) and U+200B.
    case spacesAndNewlines

    /// Whether `scalar` is trimmed.
    public func contains(_ scalar: Unicode.Scalar) -> Bool {
        if scalar == "\u{200B}" { return true }
        switch self {
        case .spaces: return scalar == "\t" || scalar.properties.generalCategory == .spaceSeparator
        case .spacesAndNewlines: return scalar.properties.isWhitespace
        }
    }
}

extension StringProtocol {
    /// The text without the scalars of `space` at either end.
    public func trimming(_ space: TrimmedSpace) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !space.contains($0) }),
            let last = scalars.lastIndex(where: { !space.contains($0) })
        else { return "" }
        return String(String.UnicodeScalarView(scalars[first...last]))
    }
}
