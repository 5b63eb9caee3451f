/// The header fields of a request or a response, in the order they were
/// written or received.
///
/// Order is kept because HTTP gives meaning to repeated fields (several
/// `Set-Cookie` lines) and because a request is easier to check against a
/// server log when it reads as it was sent. Names compare case-insensitively,
/// as HTTP requires. Printing the headers never shows a credential: see
/// `Redaction`.
public struct HTTPHeaders: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    /// One `Name: value` line.
    public struct Field: Sendable, Equatable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Every field, in order.
    public private(set) var fields: [Field]

    public init(_ fields: [Field] = []) {
        self.fields = fields
    }

    /// Fields in the order written: `["Accept": "application/json"]`.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// The first value of `name`, whatever its case, or nil.
    public subscript(name: String) -> String? {
        fields.first { Self.sameName($0.name, name) }?.value
    }

    /// Every value of `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { Self.sameName($0.name, name) }.map(\.value)
    }

    /// Whether a field named `name` is present.
    public func contains(_ name: String) -> Bool {
        fields.contains { Self.sameName($0.name, name) }
    }

    /// Adds a field after the others, keeping any of the same name.
    public mutating func append(_ name: String, _ value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Replaces every field named `name` with one holding `value`.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        append(name, value)
    }

    /// Removes every field named `name`.
    public mutating func remove(_ name: String) {
        fields.removeAll { Self.sameName($0.name, name) }
    }

    /// Header names are ASCII tokens, so lowercasing is the whole of
    /// HTTP's case-insensitive comparison.
    static func sameName(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && a.lowercased() == b.lowercased()
    }
}

// MARK: - Printing, with credentials redacted

extension HTTPHeaders: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// One `Name: value` per line, with credential values redacted.
    public var description: String { redactedLines.joined(separator: "\n") }

    public var debugDescription: String { description }

    /// `dump` and debuggers see the redacted lines, never the raw values.
    public var customMirror: Mirror { Mirror(self, unlabeledChildren: redactedLines, displayStyle: .collection) }

    private var redactedLines: [String] {
        fields.map { "\($0.name): \(Redaction.headerValue($0.value, name: $0.name))" }
    }

    /// A request or a response as printed: its first line, these headers
    /// when there are any, and what stands for its body in parentheses.
    func printedMessage(firstLine: String, body: String) -> String {
        ([firstLine] + redactedLines + ["(\(body))"]).joined(separator: "\n")
    }
}
