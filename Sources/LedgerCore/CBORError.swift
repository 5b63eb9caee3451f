import FoundationEssentials

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
    /// Well-formed, but not in the deterministic encoding (RFC 8949 §4.2.1)
    /// the ledger writes: a longer head than the value needs, map keys out
    /// of order or repeated, a float wider than its value needs.
    case notDeterministic(String, offset: Int)

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
        case .notDeterministic(let what, let offset):
            "CBOR item at byte \(offset) is not in deterministic encoding: \(what)"
        }
    }
}
