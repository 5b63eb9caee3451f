/// A CBOR data item as a value, for payloads whose shape the reader does not
/// know in advance (tools, exports, tests).
///
/// Maps keep the order they were built in; `encoded()` always writes them in
/// deterministic order (RFC 8949 §4.2.1), so two equal payloads encode to the
/// same bytes and hash the same.
public enum CBORValue: Hashable, Sendable {
    case unsigned(UInt64)
    /// A negative integer stored as CBOR does: the value is `-1 - n`.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBORValue])
    case map([Entry])
    case bool(Bool)
    case null
    case double(Double)

    /// One key/value pair of a map.
    public struct Entry: Hashable, Sendable {
        public var key: CBORValue
        public var value: CBORValue
        public init(key: CBORValue, value: CBORValue) {
            self.key = key
            self.value = value
        }
    }

    /// An integer as the right CBOR major type.
    public static func integer(_ value: Int64) -> CBORValue {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(bitPattern: -1 - value))
    }

    /// A map with text keys.
    public static func textMap(_ pairs: [(String, CBORValue)]) -> CBORValue {
        .map(pairs.map { Entry(key: .text($0.0), value: $0.1) })
    }

    // MARK: - Access

    public var integerValue: Int64? {
        switch self {
        case .unsigned(let v) where v <= UInt64(Int64.max): Int64(v)
        case .negative(let n) where n <= UInt64(Int64.max): -1 - Int64(n)
        default: nil
        }
    }

    public var textValue: String? {
        if case .text(let t) = self { return t }
        return nil
    }

    /// The value stored under a text key of a map.
    public subscript(key: String) -> CBORValue? {
        guard case .map(let entries) = self else { return nil }
        for entry in entries where entry.key == .text(key) {
            return entry.value
        }
        return nil
    }

    // MARK: - Encoding

    /// The deterministic encoding of this item.
    public func encoded() -> [UInt8] {
        var writer = CBORWriter()
        write(to: &writer)
        return writer.bytes
    }

    public func write(to writer: inout CBORWriter) {
        switch self {
        case .unsigned(let v): writer.write(unsigned: v)
        case .negative(let n): writer.writeHead(major: 1, argument: n)
        case .bytes(let b): writer.write(bytes: b)
        case .text(let t): writer.write(text: t)
        case .array(let items):
            writer.writeArrayHeader(count: items.count)
            for item in items { item.write(to: &writer) }
        case .map(let entries):
            let encoded = entries.map { (key: $0.key.encoded(), value: $0.value) }
                .sorted { $0.key.lexicographicallyPrecedes($1.key) }
            writer.writeMapHeader(count: encoded.count)
            for entry in encoded {
                writer.write(encoded: entry.key)
                entry.value.write(to: &writer)
            }
        case .bool(let b): writer.write(bool: b)
        case .null: writer.writeNull()
        case .double(let d): writer.write(double: d)
        }
    }

    /// Decodes exactly one item that fills `bytes`.
    public init(decoding bytes: [UInt8]) throws(CBORError) {
        var reader = CBORReader(bytes)
        self = try reader.readValue()
        guard reader.isAtEnd else {
            throw .unsupported("trailing bytes after the item", offset: reader.offset)
        }
    }
}
