import ArgumentParsing
import FoundationEssentials
import InspectionUseCases
import LedgerCore

/// The name given with `--as`, as it is recorded.
///
/// Surrounding white space is dropped, and a name must keep at least one
/// visible character: `--as " "` or a name of nothing but zero-width and
/// control characters would record events by nobody an auditor could read.
/// Control characters inside a name are kept as typed (the log records what
/// was given) and every text output shows them as escapes (`TerminalText`).
enum ActorName {
    /// The trimmed `--as` name of `parsed`, nil when none was given.
    static func parse(_ parsed: ParsedCommand) throws(UsageError) -> String? {
        guard let given = try parsed.value(of: JQC.actingAs) else { return nil }
        let scalars = given.unicodeScalars
        let start = scalars.firstIndex { !isTrimmed($0) } ?? scalars.endIndex
        let end = scalars[start...].lastIndex { !isTrimmed($0) }.map { scalars.index(after: $0) } ?? start
        let name = String(scalars[start..<end])
        guard name.unicodeScalars.contains(where: isVisible) else {
            throw parsed.invalid(
                JQC.actingAs, value: given,
                reason: "a name needs at least one visible character; give the inspector's name, e.g. --as \"Dana\"")
        }
        return name
    }

    /// Whether `scalar` is trimmed from a name: white space and line breaks
    /// as Foundation's `whitespacesAndNewlines` has them (`TrimmedSpace`).
    static func isTrimmed(_ scalar: Unicode.Scalar) -> Bool { TrimmedSpace.spacesAndNewlines.contains(scalar) }

    /// Whether `scalar` puts ink on the screen: not white space, not a
    /// control, format (zero-width, bidi) or unassigned code point.
    static func isVisible(_ scalar: Unicode.Scalar) -> Bool { LedgerSettings.isVisible(scalar) }
}
