/// A JSON value that keeps numbers exactly as written and objects in order.
///
/// The domain reads and writes JSON itself instead of through
/// `JSONSerialization`, because that API turns numbers into `NSNumber`: it
/// cannot tell `5` from `5.0` (a field id must be a whole number), it rounds
/// decimals through `Double` (a `number` field must stay exact), and it confuses
/// `1` with `true`. Objects keep their member order so exports read in the
/// order the schemas document; equality ignores that order, as JSON does.
public enum JSONValue: Sendable, CustomStringConvertible {
    case null
    case bool(Bool)
    /// A number as its JSON literal text (`12.5`, `-3`, `1e-05`), never rounded.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([Member])

    /// One member of an object.
    public struct Member: Sendable, Equatable {
        public var key: String
        public var value: JSONValue

        public init(_ key: String, _ value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    // MARK: - Building

    /// An integer.
    public static func integer(_ value: some BinaryInteger) -> JSONValue {
        .number(String(value))
    }

    /// A binary floating-point number in its shortest round-trip form; JSON has
    /// no infinities or NaN, so those become `null`.
    public static func double(_ value: Double) -> JSONValue {
        guard value.isFinite else { return .null }
        if value == value.rounded(), abs(value) < 1e15 {
            return .number(String(Int64(value)))
        }
        return .number("\(value)")
    }

    /// An object from key/value pairs, in that order.
    public static func object(_ pairs: KeyValuePairs<String, JSONValue>) -> JSONValue {
        .object(pairs.map { Member($0.key, $0.value) })
    }

    /// A string, or `null` when absent.
    public static func optional(_ text: String?) -> JSONValue {
        text.map(JSONValue.string) ?? .null
    }

    // MARK: - Reading

    /// The member stored under `key`, if this is an object that has it.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let flag) = self { return flag }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The value as a whole number, when it is a number literal without a
    /// fraction or exponent (`5`, not `5.0` or `5e0`) that fits in `Int64`.
    public var integerValue: Int64? {
        guard case .number(let text) = self,
            !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" })
        else { return nil }
        return Int64(text)
    }

    /// The value as a `Double`, when it is a number.
    public var doubleValue: Double? {
        guard case .number(let text) = self else { return nil }
        return Double(text)
    }

    /// A short name of the value's kind, for error messages.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    public var description: String { serialized() }
}

// MARK: - Equality

extension JSONValue: Equatable {
    /// Numbers compare by their text as written (`1.0` and `1` differ, as they
    /// do in a hash of the bytes); objects compare regardless of member order.
    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.string(let x), .string(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)):
            guard x.count == y.count else { return false }
            for member in x {
                guard let other = y.first(where: { $0.key == member.key }), other.value == member.value else {
                    return false
                }
            }
            return true
        default: return false
        }
    }
}
