import FoundationEssentials

// MARK: - A bundle's record, read as an outside verifier reads it

/// A CBOR value of a record in a bundle, read by the strict reader both
/// bundle tools use: definite lengths, shortest heads, no tags, only false,
/// true and null among simple values (and floats), map keys unsigned
/// integers or text in the bytewise order of their encodings.
enum BundleCBOR: Equatable {
    case unsigned(UInt64)
    case negative
    case bytes([UInt8])
    case text(String)
    case array([BundleCBOR])
    case map([(BundleCBOR, BundleCBOR)])
    case bool(Bool)
    case null
    case float

    static func == (a: BundleCBOR, b: BundleCBOR) -> Bool {
        switch (a, b) {
        case (.unsigned(let x), .unsigned(let y)): x == y
        case (.bytes(let x), .bytes(let y)): x == y
        case (.text(let x), .text(let y)): x.utf8.elementsEqual(y.utf8)
        default: false
        }
    }

    /// The value of a text key of a map.
    subscript(text key: String) -> BundleCBOR? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.0 == .text(key) }?.1
    }

    struct NotARecord: Error {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// The item at `start` and the offset after it.
    static func item(_ data: [UInt8], _ start: Int, depth: Int) throws(NotARecord) -> (BundleCBOR, Int) {
        guard depth <= StrictJSON.maximumDepth else { throw NotARecord("nests too deep") }
        guard start < data.count else { throw NotARecord("ends early") }
        var i = start
        let major = data[i] >> 5
        let info = data[i] & 0x1F
        i += 1
        if major == 7 { return try simple(info, data, i) }
        let value = try argument(info, data, &i)
        switch major {
        case 0: return (.unsigned(value), i)
        case 1:
            if value > UInt64(Int64.max) { throw NotARecord("a negative integer out of range") }
            return (.negative, i)
        case 2, 3:
            guard value <= UInt64(data.count - i) else { throw NotARecord("ends early") }
            let raw = Array(data[i..<i + Int(value)])
            if major == 2 { return (.bytes(raw), i + Int(value)) }
            guard let text = String(validating: raw, as: UTF8.self) else { throw NotARecord("text that is not UTF-8") }
            return (.text(text), i + Int(value))
        case 4:
            var items: [BundleCBOR] = []
            for _ in 0..<value {
                let (element, next) = try item(data, i, depth: depth + 1)
                items.append(element)
                i = next
            }
            return (.array(items), i)
        case 5: return try pairs(count: value, data, i, depth: depth)
        default:
            throw NotARecord("a tag")
        }
    }

    /// A simple value or float (major type 7) whose head's low bits are
    /// `info`, its bytes from `i`.
    private static func simple(_ info: UInt8, _ data: [UInt8], _ i: Int) throws(NotARecord) -> (BundleCBOR, Int) {
        switch info {
        case 20: return (.bool(false), i)
        case 21: return (.bool(true), i)
        case 22: return (.null, i)
        case 25, 26, 27:
            let width = 1 << Int(info - 24)
            guard i + width <= data.count else { throw NotARecord("ends early") }
            return (.float, i + width)
        default: throw NotARecord("a simple value other than false, true, null or a float")
        }
    }

    /// A head's argument (a length or an integer) in its shortest form;
    /// `i` moves past the bytes it takes.
    private static func argument(_ info: UInt8, _ data: [UInt8], _ i: inout Int) throws(NotARecord) -> UInt64 {
        if info < 24 { return UInt64(info) }
        guard info <= 27 else { throw NotARecord("an indefinite length or reserved head") }
        let width = 1 << Int(info - 24)
        guard i + width <= data.count else { throw NotARecord("ends early") }
        var value: UInt64 = 0
        for byte in data[i..<i + width] { value = value << 8 | UInt64(byte) }
        i += width
        let shortest: UInt64 = width == 1 ? 24 : UInt64(1) << UInt64(4 * width)
        if value < shortest { throw NotARecord("a length or integer not in its shortest form") }
        return value
    }

    /// A map of `count` pairs from `start`: keys unsigned integers or text,
    /// in the bytewise order of their encodings, none repeated.
    private static func pairs(
        count: UInt64, _ data: [UInt8], _ start: Int, depth: Int
    ) throws(NotARecord) -> (BundleCBOR, Int) {
        var i = start
        var pairs: [(BundleCBOR, BundleCBOR)] = []
        var previous: ArraySlice<UInt8>?
        for _ in 0..<count {
            let keyStart = i
            guard i < data.count, data[i] >> 5 == 0 || data[i] >> 5 == 3 else {
                throw NotARecord("a map key that is neither an unsigned integer nor text")
            }
            let (key, afterKey) = try item(data, i, depth: depth + 1)
            let encoded = data[keyStart..<afterKey]
            if let previous, !previous.lexicographicallyPrecedes(encoded) {
                throw NotARecord("map keys out of order or repeated")
            }
            previous = encoded
            let (element, next) = try item(data, afterKey, depth: depth + 1)
            pairs.append((key, element))
            i = next
        }
        return (.map(pairs), i)
    }
}

/// A record of a bundle: the map of Schemas/ledger-format.md § A record,
/// its keys checked for their types.
struct BundleRecord {
    var format: UInt64
    var position: UInt64
    var eventID: [UInt8]
    var stream: [UInt8]
    var streamVersion: UInt64
    var type: String
    var device: [UInt8]
    var payload: BundleCBOR
    var backLink: [UInt8]?

    init(_ raw: [UInt8]) throws(BundleCBOR.NotARecord) {
        let (value, end) = try BundleCBOR.item(raw, 0, depth: 0)
        guard end == raw.count else { throw .init("bytes after the record") }
        guard case .map(let pairs) = value else { throw .init("not a map") }
        let keys = pairs.map(\.0)
        let expected = (0..<UInt64(pairs.count)).map(BundleCBOR.unsigned)
        guard pairs.count == 13 || pairs.count == 14, keys == expected else {
            throw .init("not keys 0 to 12 (and 13)")
        }
        var values: [BundleCBOR] = pairs.map(\.1)
        func uint(_ key: Int) throws(BundleCBOR.NotARecord) -> UInt64 {
            guard case .unsigned(let v) = values[key] else { throw .init("key \(key) is not of its type") }
            return v
        }
        func bytes(_ key: Int, _ count: Int) throws(BundleCBOR.NotARecord) -> [UInt8] {
            guard case .bytes(let v) = values[key], v.count == count else {
                throw .init("key \(key) is not of its type")
            }
            return v
        }
        func text(_ key: Int) throws(BundleCBOR.NotARecord) -> String {
            guard case .text(let v) = values[key] else { throw .init("key \(key) is not of its type") }
            return v
        }
        // In key order, as the tools check them.
        format = try uint(0)
        position = try uint(1)
        eventID = try bytes(2, 16)
        stream = try bytes(3, 16)
        streamVersion = try uint(4)
        type = try text(5)
        _ = try uint(6)
        _ = try text(7)
        _ = try text(8)
        device = try bytes(9, 16)
        switch values[10] {
        case .unsigned, .negative: break
        default: throw .init("key 10 is not of its type")
        }
        guard case .map = values[11] else { throw .init("key 11 is not of its type") }
        payload = values[11]
        guard case .bool = values[12] else { throw .init("key 12 is not of its type") }
        backLink = values.count == 14 ? try bytes(13, 32) : nil
        values.removeAll()
        guard format == 1 || format == 2 else { throw .init("an unknown record format") }
        guard position >= 1, streamVersion >= 1 else { throw .init("position or stream version 0") }
        guard (backLink != nil) == (format == 2 && streamVersion >= 2) else {
            throw .init("key 13 where the format and stream version do not call for it, or none where they do")
        }
    }

    /// A 16-byte id as a lower-case UUID.
    static func uuidText(_ raw: [UInt8]) -> String {
        let hex = raw.map { String($0, radix: 16).leftPadded(2) }.joined()
        let c = Array(hex)
        let groups: [ArraySlice<Character>] = [c[0..<8], c[8..<12], c[12..<16], c[16..<20], c[20..<32]]
        return groups.map { String($0) }.joined(separator: "-")
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
