import Foundation

/// Why a CBOR item could not be read.
public enum CBORError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes ended in the middle of an item.
    case truncated(offset: Int)
    /// An item of another type was found where the reader expected `expected`.
    case unexpectedType(expected: String, found: UInt8, offset: Int)
    /// The item uses a feature this ledger never writes (indefinite lengths,
    /// tags, reserved additional information).
    case unsupported(String, offset: Int)
    /// A text string was not valid UTF-8.
    case invalidUTF8(offset: Int)
    /// A number does not fit the type asked for.
    case outOfRange(offset: Int)
    /// A string, array or map declares more bytes or items than the data
    /// has left (every item takes at least one byte).
    case lengthExceedsData(declared: UInt64, available: Int, offset: Int)
    /// Arrays and maps nest deeper than `CBORReader.maximumDepth`.
    case nestedTooDeeply(offset: Int)

    public var description: String {
        switch self {
        case .truncated(let offset): "CBOR data ends early at byte \(offset)"
        case .unexpectedType(let expected, let found, let offset):
            "expected a CBOR \(expected) at byte \(offset), found initial byte 0x\(String(found, radix: 16))"
        case .unsupported(let what, let offset): "unsupported CBOR \(what) at byte \(offset)"
        case .invalidUTF8(let offset): "CBOR text at byte \(offset) is not valid UTF-8"
        case .outOfRange(let offset): "CBOR number at byte \(offset) is out of range"
        case .lengthExceedsData(let declared, let available, let offset):
            "CBOR item at byte \(offset) declares a length of \(declared) but only \(available) bytes follow"
        case .nestedTooDeeply(let offset):
            "CBOR arrays and maps nest deeper than \(CBORReader.maximumDepth) levels at byte \(offset)"
        }
    }
}

/// A forward-only reader of CBOR items over a byte array.
///
/// Decoding the replayed events goes through this reader directly, without
/// building a `CBORValue` tree, because rebuilds replay millions of events and
/// the allocation of a tree per event would dominate.
///
/// The bytes may come from anybody (a ledger kept by someone else, a damaged
/// file), so no input makes it trap: every declared length is checked against
/// the bytes left before it becomes an `Int`, and nesting is limited.
public struct CBORReader: Sendable {
    /// How deeply arrays and maps may nest in `skipItem` and `readValue`:
    /// the ledger writes five levels at most (a pinned template's options),
    /// and each level is a stack frame.
    public static let maximumDepth = 64

    public let bytes: [UInt8]
    /// The offset of the next unread byte.
    public private(set) var offset: Int

    /// A reader at `offset`; an offset outside the bytes reads as their end.
    public init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset >= 0 && offset <= bytes.count ? offset : bytes.count
    }

    public var isAtEnd: Bool { offset >= bytes.count }

    /// How many bytes are left to read.
    public var remaining: Int { bytes.count - offset }

    // MARK: - Heads

    /// The major type (0–7) of the next item, without consuming it.
    public func peekMajor() throws(CBORError) -> UInt8 {
        guard offset < bytes.count else { throw .truncated(offset: offset) }
        return bytes[offset] >> 5
    }

    /// Whether the next item is `null`; consumes it if so.
    public mutating func readNullIfPresent() throws(CBORError) -> Bool {
        guard offset < bytes.count else { throw .truncated(offset: offset) }
        if bytes[offset] == 0xF6 {
            offset += 1
            return true
        }
        return false
    }

    @inline(__always)
    mutating func readHead() throws(CBORError) -> (major: UInt8, info: UInt8, argument: UInt64) {
        guard offset < bytes.count else { throw .truncated(offset: offset) }
        let initial = bytes[offset]
        let major = initial >> 5
        let info = initial & 0x1F
        offset += 1
        switch info {
        case 0..<24:
            return (major, info, UInt64(info))
        case 24, 25, 26, 27:
            let width = 1 << Int(info - 24)
            guard offset + width <= bytes.count else { throw .truncated(offset: offset) }
            var value: UInt64 = 0
            for i in 0..<width {
                value = (value << 8) | UInt64(bytes[offset + i])
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
            throw .unexpectedType(expected: name, found: bytes[start], offset: start)
        }
        return head.argument
    }

    // MARK: - Items

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
            throw .unexpectedType(expected: "integer", found: bytes[start], offset: start)
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
        return Array(bytes[offset..<end])
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
        let text = bytes.withUnsafeBufferPointer { buffer in
            String(validating: UnsafeBufferPointer(rebasing: buffer[start..<end]), as: UTF8.self)
        }
        guard let text else { throw .invalidUTF8(offset: start) }
        return text
    }

    /// Reads a text string, reusing an equal string from `cache` if it holds one.
    public mutating func readText(cache: inout TextCache) throws(CBORError) -> String {
        let start = offset
        let declared = try expectHead(major: 3, name: "text string")
        let count = try boundedLength(declared, head: start)
        let textStart = offset
        let end = offset + count
        if let cached = cache.lookup(bytes, textStart..<end) {
            offset = end
            return cached
        }
        offset = start
        let text = try readText()
        cache.remember(Array(bytes[textStart..<end]), text)
        return text
    }

    /// Reads a 16-byte byte string as a UUID without an intermediate array.
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
        let b = bytes
        return UUID(
            uuid: (
                b[o], b[o + 1], b[o + 2], b[o + 3], b[o + 4], b[o + 5], b[o + 6], b[o + 7], b[o + 8], b[o + 9],
                b[o + 10], b[o + 11], b[o + 12], b[o + 13], b[o + 14], b[o + 15]
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
    public mutating func readMapHeader() throws(CBORError) -> Int {
        let head = offset
        let declared = try expectHead(major: 5, name: "map")
        return try boundedLength(declared, perItem: 2, head: head)
    }

    public mutating func readBool() throws(CBORError) -> Bool {
        guard offset < bytes.count else { throw .truncated(offset: offset) }
        switch bytes[offset] {
        case 0xF4:
            offset += 1
            return false
        case 0xF5:
            offset += 1
            return true
        default:
            throw .unexpectedType(expected: "boolean", found: bytes[offset], offset: offset)
        }
    }

    /// Reads a float of any width, or an integer, as a `Double`.
    public mutating func readDouble() throws(CBORError) -> Double {
        guard offset < bytes.count else { throw .truncated(offset: offset) }
        let start = offset
        switch bytes[offset] {
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
            let major = bytes[offset] >> 5
            if major == 0 || major == 1 {
                return Double(try readInteger())
            }
            throw .unexpectedType(expected: "number", found: bytes[start], offset: start)
        }
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
            switch bytes[offset] {
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

/// A few recently read texts, by their bytes, for `CBORReader.readText(cache:)`.
public struct TextCache: Sendable {
    private var entries: [(bytes: [UInt8], text: String)] = []
    private var next = 0
    private static let capacity = 32

    public init() {}

    func lookup(_ buffer: [UInt8], _ range: Range<Int>) -> String? {
        for entry in entries where entry.bytes.count == range.count {
            if buffer.withUnsafeBufferPointer({ b in
                entry.bytes.withUnsafeBufferPointer { e in
                    memcmp(b.baseAddress! + range.lowerBound, e.baseAddress!, range.count) == 0
                }
            }) {
                return entry.text
            }
        }
        return nil
    }

    mutating func remember(_ bytes: [UInt8], _ text: String) {
        guard !bytes.isEmpty else { return }
        if entries.count < Self.capacity {
            entries.append((bytes, text))
        } else {
            entries[next] = (bytes, text)
            next = (next + 1) % Self.capacity
        }
    }
}
