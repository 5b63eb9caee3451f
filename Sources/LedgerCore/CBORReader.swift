import FoundationEssentials
import Glibc

/// A forward-only reader of CBOR items over borrowed bytes.
///
/// Decoding the replayed events goes through this reader directly, without
/// building a `CBORValue` tree, because rebuilds replay millions of events and
/// the allocation of a tree per event would dominate. It reads a `RawSpan`:
/// an array's bytes, or a value lent by LMDB straight from its memory map
/// (`Transaction.withValue`), so a scan of the log decodes each record where
/// it lies instead of copying it first. The reader is non-escapable: it
/// cannot outlive the bytes it borrows (the compiler checks this), which is
/// what makes reading LMDB's map safe once its transaction ends.
///
/// The bytes may come from anybody (a ledger kept by someone else, a damaged
/// file), so no input makes it trap: every declared length is checked against
/// the bytes left before it becomes an `Int`, and nesting is limited.
public struct CBORReader: ~Escapable {
    /// How deeply arrays and maps may nest in `skipItem` and `readValue`:
    /// the ledger writes five levels at most (a pinned template's options),
    /// and each level is a stack frame.
    public static let maximumDepth = 64

    /// The bytes read.
    public let span: RawSpan
    /// The offset of the next unread byte.
    public internal(set) var offset: Int

    /// A reader of `span` at `offset`; an offset outside it reads as its end.
    @_lifetime(copy span)
    public init(_ span: RawSpan, offset: Int = 0) {
        self.span = span
        self.offset = offset >= 0 && offset <= span.byteCount ? offset : span.byteCount
    }

    /// A reader of an array's bytes at `offset`.
    @_lifetime(borrow bytes)
    public init(_ bytes: borrowing [UInt8], offset: Int = 0) {
        let span = bytes.span.bytes
        self.span = span
        self.offset = offset >= 0 && offset <= span.byteCount ? offset : span.byteCount
    }

    /// The byte at `index`, which the caller has checked is inside the span.
    @inline(__always)
    public func byte(at index: Int) -> UInt8 {
        span.unsafeLoad(fromByteOffset: index, as: UInt8.self)
    }

    /// A copy of the bytes in `range` (inside the span).
    public func copyBytes(_ range: Range<Int>) -> [UInt8] {
        span.withUnsafeBytes { raw in Array(raw[range]) }
    }

    /// Whether the bytes in `range` (inside the span) equal `other`.
    @inline(__always)
    public func bytes(_ range: Range<Int>, equal other: [UInt8]) -> Bool {
        guard range.count == other.count else { return false }
        // Empty buffers may have no address at all: two empty runs are equal.
        guard !other.isEmpty else { return true }
        return span.withUnsafeBytes { raw in
            other.withUnsafeBytes { o in memcmp(raw.baseAddress! + range.lowerBound, o.baseAddress!, range.count) == 0 }
        }
    }

    /// Steps over one byte the caller has already read with `byte(at:)`.
    @inline(__always)
    mutating func skipByte() { offset = min(offset + 1, span.byteCount) }

    /// The number of bytes read from.
    public var count: Int { span.byteCount }

    public var isAtEnd: Bool { offset >= span.byteCount }

    /// How many bytes are left to read.
    public var remaining: Int { span.byteCount - offset }

    // MARK: - Heads

    /// The major type (0–7) of the next item, without consuming it.
    public func peekMajor() throws(CBORError) -> UInt8 {
        guard offset < span.byteCount else { throw .truncated(offset: offset) }
        return byte(at: offset) >> 5
    }

    /// Whether the next item is `null`; consumes it if so.
    public mutating func readNullIfPresent() throws(CBORError) -> Bool {
        guard offset < span.byteCount else { throw .truncated(offset: offset) }
        if byte(at: offset) == 0xF6 {
            offset += 1
            return true
        }
        return false
    }

    @inline(__always)
    mutating func readHead() throws(CBORError) -> (major: UInt8, info: UInt8, argument: UInt64) {
        guard offset < span.byteCount else { throw .truncated(offset: offset) }
        let initial = byte(at: offset)
        let major = initial >> 5
        let info = initial & 0x1F
        offset += 1
        switch info {
        case 0..<24:
            return (major, info, UInt64(info))
        case 24, 25, 26, 27:
            let width = 1 << Int(info - 24)
            guard offset + width <= span.byteCount else { throw .truncated(offset: offset) }
            var value: UInt64 = 0
            for i in 0..<width {
                value = (value << 8) | UInt64(byte(at: offset + i))
            }
            offset += width
            return (major, info, value)
        default:
            throw .unsupported("additional information \(info)", offset: offset - 1)
        }
    }

    @inline(__always)
    mutating func expectHead(major: UInt8, name: String) throws(CBORError) -> UInt64 {
        let start = offset
        let head = try readHead()
        guard head.major == major else {
            offset = start
            throw .unexpectedType(expected: name, found: byte(at: start), offset: start)
        }
        return head.argument
    }

    // MARK: - Items

    @inline(__always)
    public mutating func readUnsigned() throws(CBORError) -> UInt64 {
        try expectHead(major: 0, name: "unsigned integer")
    }

    public mutating func readInteger() throws(CBORError) -> Int64 {
        let start = offset
        let head = try readHead()
        switch head.major {
        case 0:
            guard head.argument <= UInt64(Int64.max) else { throw .outOfRange(offset: start) }
            return Int64(head.argument)
        case 1:
            guard head.argument <= UInt64(Int64.max) else { throw .outOfRange(offset: start) }
            return -1 - Int64(head.argument)
        default:
            offset = start
            throw .unexpectedType(expected: "integer", found: byte(at: start), offset: start)
        }
    }

    public mutating func readInt() throws(CBORError) -> Int {
        let start = offset
        guard let value = Int(exactly: try readInteger()) else { throw .outOfRange(offset: start) }
        return value
    }

    /// `declared` as an `Int`, once it is known to be at most `remaining`
    /// divided by `perItem` (the fewest bytes each unit takes). Call it only
    /// once the head is consumed (never as `boundedLength(try readHead…)`:
    /// `self` would be read before the argument, counting the head's bytes).
    @inline(__always)
    func boundedLength(_ declared: UInt64, perItem: Int = 1, head: Int) throws(CBORError) -> Int {
        guard declared <= UInt64(remaining / perItem) else {
            throw .lengthExceedsData(declared: declared, available: remaining, offset: head)
        }
        return Int(declared)
    }

    public mutating func readBytes() throws(CBORError) -> [UInt8] {
        let head = offset
        let declared = try expectHead(major: 2, name: "byte string")
        let count = try boundedLength(declared, head: head)
        let end = offset + count
        defer { offset = end }
        return copyBytes(offset..<end)
    }

    /// Where the content of the next byte string lies, stepped over without
    /// copying it.
    @inline(__always)
    mutating func byteStringRange() throws(CBORError) -> Range<Int> {
        try stringRange(major: 2, name: "byte string")
    }

    /// Where the UTF-8 of the next text string lies, stepped over without
    /// making a String (nor checking its UTF-8: compare it with known text).
    @inline(__always)
    mutating func textRange() throws(CBORError) -> Range<Int> {
        try stringRange(major: 3, name: "text string")
    }

    @inline(__always)
    private mutating func stringRange(major: UInt8, name: String) throws(CBORError) -> Range<Int> {
        let head = offset
        let declared = try expectHead(major: major, name: name)
        let count = try boundedLength(declared, head: head)
        offset += count
        return (offset - count)..<offset
    }

    public mutating func readText() throws(CBORError) -> String {
        let head = offset
        let declared = try expectHead(major: 3, name: "text string")
        let count = try boundedLength(declared, head: head)
        let start = offset
        let end = offset + count
        offset = end
        // Validating through a buffer pointer takes the standard library's
        // specialised path; over an ArraySlice it runs generic code that cost
        // a quarter of a replay.
        let text = span.withUnsafeBytes { raw in
            let utf8 = UnsafeRawBufferPointer(rebasing: raw[start..<end]).assumingMemoryBound(to: UInt8.self)
            // ASCII (nearly every text the ledger holds) is valid UTF-8 as it
            // is: decoding it skips the generic validation, which showed in
            // the profile of a rebuild.
            return Self.isASCII(utf8) ? String(decoding: utf8, as: UTF8.self) : String(validating: utf8, as: UTF8.self)
        }
        guard let text else { throw .invalidUTF8(offset: start) }
        return text
    }

    /// Whether every byte is below 0x80, eight at a time.
    @inline(__always)
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let raw = UnsafeRawBufferPointer(bytes)
        var i = 0
        var high: UInt64 = 0
        while i + 8 <= raw.count {
            high |= raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < raw.count {
            high |= UInt64(raw[i])
            i += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    /// Reads a text string, reusing an equal string from `cache` if it holds one.
    public mutating func readText(cache: inout TextCache) throws(CBORError) -> String {
        let start = offset
        let declared = try expectHead(major: 3, name: "text string")
        let count = try boundedLength(declared, head: start)
        let textStart = offset
        let end = offset + count
        if let cached = span.withUnsafeBytes({ raw in
            cache.lookup(UnsafeRawBufferPointer(rebasing: raw[textStart..<end]))
        }) {
            offset = end
            return cached
        }
        offset = start
        let text = try readText()
        cache.remember(copyBytes(textStart..<end), text)
        return text
    }

    /// Reads a 16-byte byte string as a UUID without an intermediate array.
    @inline(__always)
    public mutating func readUUID() throws(CBORError) -> UUID? {
        let start = offset
        let count = try expectHead(major: 2, name: "byte string")
        guard count == 16 else {
            offset = start
            return nil
        }
        guard remaining >= 16 else { throw .truncated(offset: offset) }
        let o = offset
        offset += 16
        return UUID(uuid: span.unsafeLoadUnaligned(fromByteOffset: o, as: uuid_t.self))
    }

    /// Reads a text string that is a UUID in the hyphenated form jqc writes
    /// (36 characters, hex digits of either case), straight off the bytes:
    /// `UUID(uuidString:)` makes a String and parses it with `sscanf`, which
    /// showed in a rebuild's profile. Anything else (another form, another
    /// item, a length not in its shortest head) reads nothing and answers
    /// nil, so the caller can read it as text.
    public mutating func readHyphenatedUUID() -> UUID? {
        // A 36-byte text string's deterministic head: 0x78 0x24.
        guard remaining >= 38, byte(at: offset) == 0x78, byte(at: offset + 1) == 36 else { return nil }
        let start = offset + 2
        var high: UInt64 = 0
        var low: UInt64 = 0
        var digits = 0
        for index in 0..<36 {
            let c = byte(at: start + index)
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard c == UInt8(ascii: "-") else { return nil }
                continue
            }
            guard let value = Hex.nibble(c) else { return nil }
            if digits < 16 { high = high << 4 | UInt64(value) } else { low = low << 4 | UInt64(value) }
            digits += 1
        }
        assert(digits == 32)
        offset = start + 36
        func octet(_ word: UInt64, _ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: word >> (56 - 8 * index)) }
        return UUID(
            uuid: (
                octet(high, 0), octet(high, 1), octet(high, 2), octet(high, 3), octet(high, 4), octet(high, 5),
                octet(high, 6), octet(high, 7), octet(low, 0), octet(low, 1), octet(low, 2), octet(low, 3),
                octet(low, 4), octet(low, 5), octet(low, 6), octet(low, 7)
            ))
    }

    /// The number of items of an array; never more than the bytes left.
    public mutating func readArrayHeader() throws(CBORError) -> Int {
        let head = offset
        let declared = try expectHead(major: 4, name: "array")
        return try boundedLength(declared, head: head)
    }

    /// The number of entries of a map; never more than half the bytes left
    /// (a key and a value take a byte each at least).
    @inline(__always)
    public mutating func readMapHeader() throws(CBORError) -> Int {
        let head = offset
        let declared = try expectHead(major: 5, name: "map")
        return try boundedLength(declared, perItem: 2, head: head)
    }

    public mutating func readBool() throws(CBORError) -> Bool {
        guard offset < span.byteCount else { throw .truncated(offset: offset) }
        switch byte(at: offset) {
        case 0xF4:
            offset += 1
            return false
        case 0xF5:
            offset += 1
            return true
        default:
            throw .unexpectedType(expected: "boolean", found: byte(at: offset), offset: offset)
        }
    }

    /// Reads a float of any width, or an integer, as a `Double`.
    public mutating func readDouble() throws(CBORError) -> Double {
        guard offset < span.byteCount else { throw .truncated(offset: offset) }
        let start = offset
        switch byte(at: offset) {
        case 0xF9:
            let head = try readHead()
            #if arch(x86_64) || arch(arm64)
                return Double(Float16(bitPattern: UInt16(head.argument)))
            #else
                throw .unsupported("half-precision float", offset: start)
            #endif
        case 0xFA:
            let head = try readHead()
            return Double(Float(bitPattern: UInt32(head.argument)))
        case 0xFB:
            let head = try readHead()
            return Double(bitPattern: head.argument)
        default:
            let major = byte(at: offset) >> 5
            if major == 0 || major == 1 {
                return Double(try readInteger())
            }
            throw .unexpectedType(expected: "number", found: byte(at: start), offset: start)
        }
    }

    /// Reads a text string and answers the index of the entry of
    /// `candidates` it equals byte for byte, or nil: how payload decoders
    /// match a key or a name against the few they know. A text of 24 bytes
    /// or more (never one of those short names) is skipped. A short text,
    /// the usual case, is compared where it lies a word at a time, with no
    /// call to `skipItem` or `memcmp` (which were a tenth of a rebuild's
    /// payload decoding); errors are the ones `skipItem` throws.
    public mutating func matchText(_ candidates: [[UInt8]]) throws(CBORError) -> Int? {
        let start = offset
        guard start < span.byteCount else { throw .truncated(offset: start) }
        let initial = byte(at: start)
        guard initial >> 5 == 3 else {
            throw .unexpectedType(expected: "text string", found: initial, offset: start)
        }
        let length = Int(initial & 0x1F)
        guard length < 24 else {
            _ = try skipItem()
            return nil
        }
        let body = start + 1
        guard length <= span.byteCount - body else {
            throw .lengthExceedsData(declared: UInt64(length), available: span.byteCount - body, offset: start)
        }
        offset = body + length
        return span.withUnsafeBytes { raw in
            let text = UnsafeRawBufferPointer(rebasing: raw[body..<(body + length)])
            for index in candidates.indices where candidates[index].count == length {
                if candidates[index].withUnsafeBytes({ Self.sameShortBytes($0, text) }) { return index }
            }
            return nil
        }
    }

    /// Whether two runs of the same length (under 24 bytes) hold the same
    /// bytes: eight at a time, then one at a time.
    @inline(__always)
    static func sameShortBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        assert(a.count == b.count)
        var i = 0
        while i + 8 <= a.count {
            guard
                a.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                    == b.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            else { return false }
            i += 8
        }
        while i < a.count {
            guard a[i] == b[i] else { return false }
            i += 1
        }
        return true
    }

    /// Skips one whole item, however deeply nested, and returns its bytes'
    /// range so a caller can keep the encoded item as it is.
    @discardableResult
    public mutating func skipItem() throws(CBORError) -> Range<Int> {
        try skipItem(depth: 0)
    }

    @discardableResult
    mutating func skipItem(depth: Int) throws(CBORError) -> Range<Int> {
        let start = offset
        let head = try readHead()
        switch head.major {
        case 0, 1:
            break
        case 2, 3:
            offset += try boundedLength(head.argument, head: start)
        case 4:
            guard depth < Self.maximumDepth else { throw .nestedTooDeeply(offset: start) }
            for _ in 0..<(try boundedLength(head.argument, head: start)) { try skipItem(depth: depth + 1) }
        case 5:
            guard depth < Self.maximumDepth else { throw .nestedTooDeeply(offset: start) }
            for _ in 0..<(try boundedLength(head.argument, perItem: 2, head: start)) {
                try skipItem(depth: depth + 1)
                try skipItem(depth: depth + 1)
            }
        case 6:
            throw .unsupported("tag", offset: start)
        default:
            // Simple values and floats: the head already consumed them.
            break
        }
        return start..<offset
    }

    /// Reads the next item as a generic value.
    public mutating func readValue() throws(CBORError) -> CBORValue {
        try readValue(depth: 0)
    }

    mutating func readValue(depth: Int) throws(CBORError) -> CBORValue {
        let start = offset
        let major = try peekMajor()
        switch major {
        case 0: return .unsigned(try readUnsigned())
        case 1:
            let head = try readHead()
            return .negative(head.argument)
        case 2: return .bytes(try readBytes())
        case 3: return .text(try readText())
        case 4:
            guard depth < Self.maximumDepth else { throw .nestedTooDeeply(offset: start) }
            let count = try readArrayHeader()
            var items: [CBORValue] = []
            items.reserveCapacity(min(count, 1024))
            for _ in 0..<count { items.append(try readValue(depth: depth + 1)) }
            return .array(items)
        case 5:
            guard depth < Self.maximumDepth else { throw .nestedTooDeeply(offset: start) }
            let count = try readMapHeader()
            var entries: [CBORValue.Entry] = []
            entries.reserveCapacity(min(count, 1024))
            for _ in 0..<count {
                let key = try readValue(depth: depth + 1)
                let value = try readValue(depth: depth + 1)
                entries.append(.init(key: key, value: value))
            }
            return .map(entries)
        case 7:
            switch byte(at: offset) {
            case 0xF4, 0xF5: return .bool(try readBool())
            case 0xF6:
                offset += 1
                return .null
            case 0xF9, 0xFA, 0xFB: return .double(try readDouble())
            default: throw .unsupported("simple value", offset: start)
            }
        default:
            throw .unsupported("tag", offset: start)
        }
    }
}
