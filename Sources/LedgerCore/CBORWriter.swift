/// Appends CBOR items (RFC 8949) to a byte buffer in the deterministic form of
/// §4.2.1: shortest argument encodings, definite lengths only.
///
/// Writers that emit maps directly must write the keys in deterministic order
/// themselves (`CBORValue` sorts for you); `CBORWriter.sortedTextKeys` gives
/// that order for text keys.
public struct CBORWriter: Sendable {
    /// The bytes written so far.
    public internal(set) var bytes: [UInt8]

    public init(reservingCapacity capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    // MARK: - Heads

    @inline(__always)
    mutating func writeHead(major: UInt8, argument: UInt64) {
        let m = major << 5
        switch argument {
        case 0..<24:
            bytes.append(m | UInt8(argument))
        case 24...0xFF:
            bytes.append(m | 24)
            bytes.append(UInt8(argument))
        case 0x100...0xFFFF:
            bytes.append(m | 25)
            bytes.append(UInt8(truncatingIfNeeded: argument >> 8))
            bytes.append(UInt8(truncatingIfNeeded: argument))
        case 0x1_0000...0xFFFF_FFFF:
            bytes.append(m | 26)
            for shift in stride(from: 24, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: argument >> UInt64(shift)))
            }
        default:
            bytes.append(m | 27)
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: argument >> UInt64(shift)))
            }
        }
    }

    // MARK: - Items

    public mutating func write(unsigned value: UInt64) {
        writeHead(major: 0, argument: value)
    }

    public mutating func write(integer value: Int64) {
        if value >= 0 {
            writeHead(major: 0, argument: UInt64(value))
        } else {
            // CBOR encodes a negative n as major type 1 with argument -1 - n.
            writeHead(major: 1, argument: UInt64(bitPattern: -1 - value))
        }
    }

    public mutating func write(bytes value: some Collection<UInt8>) {
        writeHead(major: 2, argument: UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    public mutating func write(text value: String) {
        var value = value
        value.withUTF8 { utf8 in
            writeHead(major: 3, argument: UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    public mutating func writeArrayHeader(count: Int) {
        writeHead(major: 4, argument: UInt64(count))
    }

    public mutating func writeMapHeader(count: Int) {
        writeHead(major: 5, argument: UInt64(count))
    }

    public mutating func write(bool value: Bool) {
        bytes.append(value ? 0xF5 : 0xF4)
    }

    public mutating func writeNull() {
        bytes.append(0xF6)
    }

    /// Writes a float in the shortest of half, single or double precision that
    /// keeps its value exactly, as deterministic encoding requires.
    public mutating func write(double value: Double) {
        #if arch(x86_64) || arch(arm64)
            let half = Float16(value)
            if Double(half) == value || (value.isNaN) {
                let bits = value.isNaN ? UInt16(0x7E00) : half.bitPattern
                bytes.append(0xF9)
                bytes.append(UInt8(bits >> 8))
                bytes.append(UInt8(bits & 0xFF))
                return
            }
        #endif
        let single = Float(value)
        if Double(single) == value {
            let bits = single.bitPattern
            bytes.append(0xFA)
            for shift in stride(from: 24, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: bits >> UInt32(shift)))
            }
            return
        }
        let bits = value.bitPattern
        bytes.append(0xFB)
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift)))
        }
    }

    /// Appends an item that is already encoded (for example a stored payload).
    public mutating func write(encoded item: some Collection<UInt8>) {
        bytes.append(contentsOf: item)
    }

    /// Orders text map keys as deterministic CBOR does: by their encoded
    /// bytes, which for text means shorter keys first, then bytewise.
    public static func sortedTextKeys(_ keys: [String]) -> [String] {
        keys.sorted { a, b in
            let ua = a.utf8.count
            let ub = b.utf8.count
            if ua != ub { return ua < ub }
            return a.utf8.lexicographicallyPrecedes(b.utf8)
        }
    }
}
