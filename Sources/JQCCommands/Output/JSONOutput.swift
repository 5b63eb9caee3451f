import FoundationEssentials
import InspectionDomain
import LedgerCore

/// Renders `--json` results: the one path every command's JSON output takes.
///
/// Commands build a `JSONValue` (the domain's exact JSON value, most often a
/// result type's `jsonValue`), and this prints it indented with every
/// object's keys sorted, so the output is stable for scripts and tests.
/// Numbers are printed as their literal text: a decimal answer keeps its
/// digits, a score of 87.5 prints `87.5`, a count prints as an integer. The
/// shapes are the JSON Schemas in `Schemas/cli/` (see `Schemas/cli-json.md`).
enum JSONOutput {
    static func render(_ value: JSONValue) -> String {
        value.sortingKeys().prettyPrinted()
    }

    static func render(_ value: some JSONRepresentable) -> String {
        render(value.jsonValue)
    }

    static func render(_ values: [some JSONRepresentable]) -> String {
        render(.array(values.map(\.jsonValue)))
    }
}

extension Invocation {
    /// Prints `value` as the command's `--json` result.
    func printJSON(_ value: JSONValue) { stdout.line(JSONOutput.render(value)) }

    func printJSON(_ value: some JSONRepresentable) { stdout.line(JSONOutput.render(value)) }

    func printJSON(_ values: [some JSONRepresentable]) { stdout.line(JSONOutput.render(values)) }
}

/// A result a command prints with `--json`.
protocol JSONRepresentable {
    var jsonValue: JSONValue { get }
}

extension JSONValue {
    /// A time as RFC 3339 text with six fractional digits, or `null`.
    static func time(_ time: Timestamp?) -> JSONValue { .optional(time?.iso8601) }

    /// An id as lower-case UUID text, or `null`.
    static func id(_ id: UUID?) -> JSONValue { .optional(id?.lowercased) }

    /// A whole number, or `null`.
    static func integer(_ value: (some BinaryInteger)?) -> JSONValue { value.map { .integer($0) } ?? .null }

    /// A binary floating-point number (shortest round-trip text), or `null`.
    static func double(_ value: Double?) -> JSONValue { value.map { .double($0) } ?? .null }

    /// An array of strings.
    static func strings(_ values: [String]) -> JSONValue { .array(values.map(JSONValue.string)) }
}
