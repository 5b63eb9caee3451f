import FoundationEssentials
import Glibc

extension CBORReader {
    // MARK: - Deterministic encoding (RFC 8949 §4.2.1)

    /// Reads a head, which must be in its shortest form (a float's width is
    /// checked by `skipDeterministicItem`, which knows its value).
    @inline(__always)
    public mutating func readDeterministicHead() throws(CBORError) -> (major: UInt8, info: UInt8, argument: UInt64) {
        let start = offset
        let head = try readHead()
        if head.major != 7 {
            let shortest: Bool
            switch head.info {
            case 24: shortest = head.argument >= 24
            case 25: shortest = head.argument > 0xFF
            case 26: shortest = head.argument > 0xFFFF
            case 27: shortest = head.argument > 0xFFFF_FFFF
            default: shortest = true
            }
            guard shortest else {
                throw .notDeterministic(
                    "its head takes more bytes than the value \(head.argument) needs", offset: start)
            }
        }
        return head
    }

    /// Skips one item, checking on the way that it is exactly what
    /// deterministic encoding writes: shortest heads, definite lengths, valid
    /// UTF-8, map keys in bytewise order of their encodings and not repeated,
    /// floats in the narrowest width that holds them (NaN as 0xF97E00), no
    /// tags and no simple values but false, true and null. With `textKeys`,
    /// the item must be a map whose keys are text strings. Hashing the stored
    /// bytes then covers the one encoding of their value: nothing is re-encoded.
    @discardableResult
    public mutating func skipDeterministicItem(textKeys: Bool = false) throws(CBORError) -> Range<Int> {
        if textKeys {
            guard offset < span.byteCount else { throw .truncated(offset: offset) }
            guard byte(at: offset) >> 5 == 5 else {
                throw .unexpectedType(expected: "map", found: byte(at: offset), offset: offset)
            }
        }
        return try skipDeterministicItem(depth: 0, textKeys: textKeys)
    }

    @discardableResult
    mutating func skipDeterministicItem(depth: Int, textKeys: Bool = false) throws(CBORError) -> Range<Int> {
        let start = offset
        let head = try readDeterministicHead()
        switch head.major {
        case 0, 1:
            break
        case 2:
            offset += try boundedLength(head.argument, head: start)
        case 3:
            let count = try boundedLength(head.argument, head: start)
            let textStart = offset
            offset += count
            let valid = span.withUnsafeBytes { raw in
                let utf8 = UnsafeRawBufferPointer(rebasing: raw[textStart..<(textStart + count)])
                    .assumingMemoryBound(to: UInt8.self)
                return Self.isASCII(utf8) || String(validating: utf8, as: UTF8.self) != nil
            }
            guard valid else { throw .invalidUTF8(offset: textStart) }
        case 4:
            guard depth < Self.maximumDepth else { throw .nestedTooDeeply(offset: start) }
            for _ in 0..<(try boundedLength(head.argument, head: start)) {
                try skipDeterministicItem(depth: depth + 1)
            }
        case 5:
            guard depth < Self.maximumDepth else { throw .nestedTooDeeply(offset: start) }
            var previous: Range<Int>?
            for _ in 0..<(try boundedLength(head.argument, perItem: 2, head: start)) {
                if textKeys, offset < span.byteCount, byte(at: offset) >> 5 != 3 {
                    throw .unexpectedType(expected: "text key", found: byte(at: offset), offset: offset)
                }
                let key = try skipDeterministicItem(depth: depth + 1)
                if let previous, !precedes(previous, key) {
                    throw .notDeterministic("its map keys are out of order or repeated", offset: key.lowerBound)
                }
                previous = key
                try skipDeterministicItem(depth: depth + 1)
            }
        case 6:
            throw .unsupported("tag", offset: start)
        default:
            try checkSimple(head, at: start)
        }
        return start..<offset
    }

    /// False, true, null, or a float in the narrowest width that holds it.
    private func checkSimple(_ head: (major: UInt8, info: UInt8, argument: UInt64), at start: Int) throws(CBORError) {
        switch head.info {
        case 20, 21, 22:
            return
        case 25:
            let bits = UInt16(truncatingIfNeeded: head.argument)
            // A half-precision NaN has all exponent bits and a non-zero fraction.
            if bits & 0x7C00 == 0x7C00, bits & 0x03FF != 0, bits != 0x7E00 {
                throw .notDeterministic("a NaN other than 0xF97E00", offset: start)
            }
        case 26:
            let value = Double(Float(bitPattern: UInt32(truncatingIfNeeded: head.argument)))
            if value.isNaN || Self.fitsHalf(value) {
                throw .notDeterministic("a single-precision float that half precision holds", offset: start)
            }
        case 27:
            let value = Double(bitPattern: head.argument)
            if value.isNaN || Double(Float(value)) == value {
                throw .notDeterministic("a double-precision float that a narrower width holds", offset: start)
            }
        default:
            throw .unsupported("simple value \(head.info == 24 ? head.argument : UInt64(head.info))", offset: start)
        }
    }

    private static func fitsHalf(_ value: Double) -> Bool {
        #if arch(x86_64) || arch(arm64)
            return Double(Float16(value)) == value
        #else
            return false
        #endif
    }

    /// Whether the encoded item at `a` comes before the one at `b` in
    /// bytewise order (a prefix first).
    @inline(__always)
    private func precedes(_ a: Range<Int>, _ b: Range<Int>) -> Bool {
        // Keys of different lengths or types differ in their first byte (the head).
        let first = (byte(at: a.lowerBound), byte(at: b.lowerBound))
        if first.0 != first.1 { return first.0 < first.1 }
        return span.withUnsafeBytes { raw in
            let common = min(a.count, b.count)
            // Compared only when both keys have bytes (common > 0), so the span has an address.
            let order =
                common == 0 ? 0 : memcmp(raw.baseAddress! + a.lowerBound, raw.baseAddress! + b.lowerBound, common)
            return order < 0 || (order == 0 && a.count < b.count)
        }
    }
}
