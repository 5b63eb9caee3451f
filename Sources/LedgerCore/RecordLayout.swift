extension EventRecord.Key {
    /// The key's name on the format page (`Schemas/ledger-format.md` § A record).
    public var name: String {
        switch self {
        case .format: "format"
        case .position: "position"
        case .id: "id"
        case .stream: "stream"
        case .streamVersion: "stream version"
        case .type: "type"
        case .schemaVersion: "schema version"
        case .actorID: "actor id"
        case .actorName: "actor name"
        case .device: "device"
        case .recordedAt: "recorded at"
        case .payload: "payload"
        case .actorVerified: "actor verified"
        case .previousInStream: "previous in stream"
        }
    }
}

extension EventRecord {
    /// Checks every byte of an encoded record against the format page, as
    /// `verify --full` does for each record whose chain link holds, and
    /// answers its header:
    ///
    /// - the map has 13 keys (format 1; format 2 at stream version 1) or 14
    ///   (format 2 at stream version ≥ 2, key 13 the back-link), in order;
    /// - each value has its key's type (uint, 16-byte ids, text, an integer
    ///   time, a map payload with text keys, a bool, a 32-byte link);
    /// - the whole record, payload included, is in deterministic encoding
    ///   (`CBORReader.skipDeterministicItem`), and nothing follows the map.
    ///
    /// A record format newer than this code reads is `RecordError.unknownFormat`;
    /// anything else is `malformed` (a layout the format does not define) or
    /// `notDeterministic` (the right values, but not the one encoding of them).
    public static func checkedHeader(ofEncoded bytes: RawSpan, at offset: Int = 0) throws(RecordError)
        -> RecordHeader
    {
        var header: RecordHeader?
        _ = try checkedLayout(ofEncoded: bytes, at: offset, header: &header)
        // `checkedLayout` sets the header whenever it returns rather than throws.
        return header!
    }

    /// The same check, answering what the record's layout says beyond its
    /// header: its position, where its type lies and its schema version.
    /// `verify --full`'s second thread runs it on every record and keeps
    /// only this, so nothing is copied out of the record (no id, stream or
    /// back-link array per record).
    public static func checkedLayout(ofEncoded bytes: RawSpan, at offset: Int = 0) throws(RecordError)
        -> CheckedLayout
    {
        var header: RecordHeader?
        return try checkedLayout(ofEncoded: bytes, at: offset, header: &header, copying: false)
    }

    /// The check itself; fills `header` when `copying`.
    static func checkedLayout(
        ofEncoded bytes: RawSpan, at offset: Int, header: inout RecordHeader?, copying: Bool = true
    ) throws(RecordError) -> CheckedLayout {
        var r = CBORReader(bytes, offset: offset)
        do {
            let keys = try r.readDeterministicHead()
            guard keys.major == 5 else { throw RecordError.malformed("the record is not a CBOR map") }
            guard keys.argument == 13 || keys.argument == 14 else {
                throw RecordError.malformed("the record has \(keys.argument) keys, a record has 13 or 14")
            }
            let format = try field(.format, &r) { r throws(CBORError) in try r.deterministicUnsigned() }
            guard reads(format: format) else { throw RecordError.unknownFormat(format) }
            let position = try field(.position, &r) { r throws(CBORError) in try r.deterministicUnsigned() }
            let id = try field(.id, &r) { r throws(CBORError) in
                try r.deterministicBytes(count: 16, copying: copying)
            }
            let stream = try field(.stream, &r) { r throws(CBORError) in
                try r.deterministicBytes(count: 16, copying: copying)
            }
            let version = try field(.streamVersion, &r) { r throws(CBORError) in try r.deterministicUnsigned() }
            guard version >= 1 else { throw RecordError.malformed("key 4 (stream version) is 0; versions start at 1") }
            let expected = format >= 2 && version >= 2 ? 14 : 13
            guard keys.argument == expected else {
                throw RecordError.malformed(
                    expected == 14
                        ? "a format-2 record of stream version \(version) has 14 keys, this one 13: key 13 (the back-link) is missing"
                        : format == 1
                            ? "a format-1 record has 13 keys, this one 14"
                            : "a format-2 record of stream version 1 has 13 keys, this one 14: it has a back-link where none belongs"
                )
            }
            let type = try field(.type, &r) { r throws(CBORError) in try r.deterministicText() }
            let schemaVersion = try field(.schemaVersion, &r) { r throws(CBORError) in try r.deterministicUnsigned() }
            try field(.actorID, &r) { r throws(CBORError) in try r.deterministicText() }
            try field(.actorName, &r) { r throws(CBORError) in try r.deterministicText() }
            try field(.device, &r) { r throws(CBORError) in try r.deterministicBytes(count: 16, copying: false) }
            try field(.recordedAt, &r) { r throws(CBORError) in
                let start = r.offset
                let head = try r.readDeterministicHead()
                guard head.major <= 1, head.argument <= UInt64(Int64.max) else {
                    throw CBORError.unexpectedType(expected: "integer", found: r.byte(at: start), offset: start)
                }
            }
            try field(.payload, &r) { r throws(CBORError) in try r.skipDeterministicItem(textKeys: true) }
            try field(.actorVerified, &r) { r throws(CBORError) in _ = try r.readBool() }
            var link: [UInt8]?
            if keys.argument == 14 {
                link = try field(.previousInStream, &r) { r throws(CBORError) in
                    try r.deterministicBytes(count: 32, copying: copying)
                }
            }
            guard r.isAtEnd else {
                throw RecordError.malformed("\(r.remaining) bytes follow the record's map")
            }
            if copying {
                header = RecordHeader(
                    format: format, position: position, id: id, stream: stream, streamVersion: version,
                    previousInStream: link)
            }
            return CheckedLayout(position: position, type: type, schemaVersion: schemaVersion)
        } catch let error as RecordError {
            throw error
        } catch {
            throw .malformed("\(error)")
        }
    }

    /// Reads a key, which must be `key`, and its value with `value`; a CBOR
    /// problem is named by the key it is in.
    @discardableResult
    @inline(__always)
    static func field<T>(_ key: Key, _ r: inout CBORReader, _ value: (inout CBORReader) throws(CBORError) -> T)
        throws(RecordError) -> T
    {
        let at = r.offset
        guard r.remaining > 0, r.byte(at: at) == UInt8(key.rawValue) else {
            let found = r.remaining > 0 ? "0x" + String(r.byte(at: at), radix: 16) : "the end of the record"
            throw .malformed("key \(key.rawValue) (\(key.name)) is missing: \(found) where it belongs")
        }
        r.skipByte()
        do {
            return try value(&r)
        } catch {
            switch error {
            case .notDeterministic(let what, let offset):
                throw .notDeterministic(
                    "key \(key.rawValue) (\(key.name))\(offset > at + 1 ? ", \(offset - at - 1) bytes into its value" : ""): \(what)"
                )
            default:
                throw .malformed("key \(key.rawValue) (\(key.name)): \(error)")
            }
        }
    }
}

extension CBORReader {
    @inline(__always)
    mutating func deterministicUnsigned() throws(CBORError) -> UInt64 {
        let start = offset
        let head = try readDeterministicHead()
        guard head.major == 0 else {
            throw .unexpectedType(expected: "unsigned integer", found: byte(at: start), offset: start)
        }
        return head.argument
    }

    @discardableResult
    mutating func deterministicBytes(count: Int, copying: Bool = true) throws(CBORError) -> [UInt8] {
        let start = offset
        guard offset < span.byteCount, byte(at: offset) >> 5 == 2 else {
            throw .unexpectedType(
                expected: "byte string", found: offset < span.byteCount ? byte(at: offset) : 0, offset: start)
        }
        let range = try skipDeterministicItem()
        guard range.count == count + 1 + (count >= 24 ? 1 : 0) else {
            throw .unexpectedType(expected: "\(count)-byte string", found: byte(at: start), offset: start)
        }
        return copying ? copyBytes((range.upperBound - count)..<range.upperBound) : []
    }

    /// Skips a text string in deterministic encoding; answers where the
    /// whole item (head and text) lies.
    @discardableResult
    mutating func deterministicText() throws(CBORError) -> Range<Int> {
        let start = offset
        guard offset < span.byteCount, byte(at: offset) >> 5 == 3 else {
            throw .unexpectedType(
                expected: "text string", found: offset < span.byteCount ? byte(at: offset) : 0, offset: start)
        }
        return try skipDeterministicItem()
    }
}

/// What `EventRecord.checkedLayout` found besides a passing check: enough
/// to tell a record's type without decoding it or copying a byte.
public struct CheckedLayout: Hashable, Sendable {
    /// Key 1.
    public var position: UInt64
    /// Where key 5's value (the type, head and text, in deterministic
    /// encoding) lies in the bytes checked.
    public var type: Range<Int>
    /// Key 6.
    public var schemaVersion: UInt64

    /// Whether the type is `encodedType`, the deterministic encoding of a
    /// type name (`CheckedLayout.encoded(type:)`), in `bytes` (the bytes checked).
    public func hasType(_ encodedType: [UInt8], in bytes: RawSpan) -> Bool {
        guard type.count == encodedType.count else { return false }
        return bytes.withUnsafeBytes { raw in raw[type].elementsEqual(encodedType) }
    }

    /// A type name as a record's key 5 holds it (a text string's head, then
    /// its UTF-8), to compare with `hasType`.
    public static func encoded(type name: String) -> [UInt8] {
        var writer = CBORWriter(reservingCapacity: name.utf8.count + 9)
        writer.write(text: name)
        return writer.bytes
    }
}
