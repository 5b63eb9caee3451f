import FoundationEssentials
import LedgerCore

/// Reads one event payload straight off its bytes with `CBORReader`.
///
/// Rebuilding the views replays every event of the log, about a million a
/// second, so the decoders of the frequent events never build a `CBORValue`
/// tree: they walk the map once, switch on each key and read the value in
/// place. Every failure becomes `DomainError.malformedPayload` naming the
/// event type and version.
struct PayloadReader: ~Escapable {
    var reader: CBORReader
    let type: String
    let schemaVersion: Int

    @_lifetime(copy payload)
    init(_ payload: RawSpan, type: String, schemaVersion: Int, offset: Int = 0) {
        reader = CBORReader(payload, offset: offset)
        self.type = type
        self.schemaVersion = schemaVersion
    }

    @_lifetime(borrow payload)
    init(_ payload: borrowing [UInt8], type: String, schemaVersion: Int, offset: Int = 0) {
        reader = CBORReader(payload, offset: offset)
        self.type = type
        self.schemaVersion = schemaVersion
    }

    /// A reader of the same payload positioned at `offset`, for an item whose
    /// meaning depends on a key that deterministic order puts after it.
    @_lifetime(copy self)
    func rewound(to offset: Int) -> PayloadReader {
        PayloadReader(reader.span, type: type, schemaVersion: schemaVersion, offset: offset)
    }

    func malformed(_ reason: String) -> DomainError {
        .malformedPayload(type: type, schemaVersion: schemaVersion, reason: reason)
    }

    func malformed(_ error: CBORError) -> DomainError {
        malformed(error.description)
    }

    /// The value of a key that must be present. Inlined so that no generic
    /// metadata is instantiated per event (it showed in replay profiles).
    @inline(__always)
    func required<T>(_ value: T?, _ key: String) throws(DomainError) -> T {
        guard let value else { throw malformed("the key \"\(key)\" is missing") }
        return value
    }

    /// The value of a key that must be present, named by its key enum.
    @inline(__always)
    func required<T, Key: PayloadKey>(_ value: T?, _ key: Key) throws(DomainError) -> T {
        guard let value else { throw malformed("the key \"\(key.rawValue)\" is missing") }
        return value
    }

    /// Checks the payload was one item and nothing follows it.
    func finish() throws(DomainError) {
        guard reader.isAtEnd else { throw malformed("bytes follow the payload map at byte \(reader.offset)") }
    }

    // MARK: - Items

    mutating func mapCount() throws(DomainError) -> Int {
        do { return try reader.readMapHeader() } catch { throw malformed(error) }
    }

    mutating func arrayCount() throws(DomainError) -> Int {
        do { return try reader.readArrayHeader() } catch { throw malformed(error) }
    }

    mutating func text() throws(DomainError) -> String {
        do { return try reader.readText() } catch { throw malformed(error) }
    }

    mutating func isNull() throws(DomainError) -> Bool {
        do { return try reader.readNullIfPresent() } catch { throw malformed(error) }
    }

    mutating func nullableText() throws(DomainError) -> String? {
        try isNull() ? nil : try text()
    }

    mutating func int() throws(DomainError) -> Int {
        do { return try reader.readInt() } catch { throw malformed(error) }
    }

    mutating func int64() throws(DomainError) -> Int64 {
        do { return try reader.readInteger() } catch { throw malformed(error) }
    }

    mutating func nullableInt() throws(DomainError) -> Int? {
        try isNull() ? nil : try int()
    }

    mutating func bool() throws(DomainError) -> Bool {
        do { return try reader.readBool() } catch { throw malformed(error) }
    }

    mutating func double() throws(DomainError) -> Double {
        do { return try reader.readDouble() } catch { throw malformed(error) }
    }

    mutating func uuid(_ key: String) throws(DomainError) -> UUID {
        if let id = reader.readHyphenatedUUID() { return id }
        // Any other form Foundation reads is read as before.
        let text = try text()
        guard let id = UUID(uuidString: text) else { throw malformed("\"\(key)\" is \"\(text)\", not a UUID") }
        return id
    }

    mutating func nullableUUID(_ key: String) throws(DomainError) -> UUID? {
        try isNull() ? nil : try uuid(key)
    }

    mutating func uuid<Key: PayloadKey>(_ key: Key) throws(DomainError) -> UUID { try uuid(key.rawValue) }

    mutating func nullableUUID<Key: PayloadKey>(_ key: Key) throws(DomainError) -> UUID? {
        try nullableUUID(key.rawValue)
    }

    mutating func digest(_ key: String) throws(DomainError) -> Digest256 {
        let text = try text()
        guard let digest = Digest256(hex: text) else { throw malformed("\"\(key)\" is not 64 hexadecimal digits") }
        return digest
    }

    mutating func digest<Key: PayloadKey>(_ key: Key) throws(DomainError) -> Digest256 { try digest(key.rawValue) }

    mutating func texts() throws(DomainError) -> [String] {
        let count = try arrayCount()
        var out: [String] = []
        out.reserveCapacity(count)
        for _ in 0..<count { out.append(try text()) }
        return out
    }

    // MARK: - Keys without strings

    /// Reads a map key and answers which of `Key`'s cases it names, or nil
    /// (having skipped the key) for one `Key` does not list.
    ///
    /// Keys are compared as UTF-8 bytes in place: making a `String` of every
    /// key, and validating it, was a third of the time of a replay.
    mutating func key<Key: PayloadKey>(_: Key.Type) throws(DomainError) -> Key? {
        let index = try matchText(Key.encodedKeys)
        return index.map { Key.allCases[Key.allCases.index(Key.allCases.startIndex, offsetBy: $0)] }
    }

    /// Reads a map key as text and answers which of `Key`'s cases it names,
    /// or nil: for the rare events, whose keys may be longer than `key(_:)`
    /// matches in place.
    mutating func namedKey<Key: PayloadKey>(_: Key.Type) throws(DomainError) -> Key? {
        Key(rawValue: try text())
    }

    /// Reads a text item; answers the index of the entry of `candidates` it
    /// equals byte for byte, or nil (`CBORReader.matchText`).
    mutating func matchText(_ candidates: [[UInt8]]) throws(DomainError) -> Int? {
        do { return try reader.matchText(candidates) } catch { throw malformed(error) }
    }

    /// Skips one item and answers where it started.
    @discardableResult
    mutating func skip() throws(DomainError) -> Int {
        do { return try reader.skipItem().lowerBound } catch { throw malformed(error) }
    }

    /// Reads one item as a tree (only for rare events, like `template.pinned`).
    mutating func value() throws(DomainError) -> CBORValue {
        do { return try reader.readValue() } catch { throw malformed(error) }
    }
}

/// The keys of one payload map: the one spelling of each key, which the
/// event's encoder, its JSON form and its decoder (`PayloadReader.key(_:)`,
/// `namedKey(_:)`) all use.
protocol PayloadKey: RawRepresentable<String>, CaseIterable {
    /// Every case's raw value as UTF-8, in `allCases` order.
    static var encodedKeys: [[UInt8]] { get }
}

extension PayloadKey {
    static func encode() -> [[UInt8]] { allCases.map { Array($0.rawValue.utf8) } }

    /// Every case's raw value, in `allCases` order.
    static var names: [String] { allCases.map(\.rawValue) }

    /// A CBOR map of these keys (encoded in deterministic order whatever the order here).
    static func map(_ pairs: [(Self, CBORValue)]) -> CBORValue {
        .textMap(pairs.map { ($0.0.rawValue, $0.1) })
    }

    /// A JSON object of these keys, in the order given.
    static func object(_ members: [(Self, JSONValue)]) -> JSONValue {
        .object(members.map { JSONValue.Member($0.0.rawValue, $0.1) })
    }
}
