/// Fixed-width big-endian keys. LMDB orders keys with `memcmp`, so big-endian
/// integers sort in numeric order and `MDB_APPEND` works for sequence numbers.
public enum BigEndian {
    public static func bytes(_ value: UInt64) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 8)
        for i in 0..<8 { out[i] = UInt8(truncatingIfNeeded: value >> UInt64(56 - 8 * i)) }
        return out
    }

    /// Appends the eight bytes of `value` to `buffer`.
    public static func append(_ value: UInt64, to buffer: inout [UInt8]) {
        for i in 0..<8 { buffer.append(UInt8(truncatingIfNeeded: value >> UInt64(56 - 8 * i))) }
    }

    /// The integer stored at `offset`, or nil when fewer than 8 bytes remain.
    public static func uint64(_ bytes: [UInt8], at offset: Int = 0) -> UInt64? {
        guard offset >= 0, bytes.count - offset >= 8 else { return nil }
        var value: UInt64 = 0
        for i in 0..<8 { value = value << 8 | UInt64(bytes[offset + i]) }
        return value
    }

    /// The same, of bytes lent in place.
    public static func uint64(_ bytes: RawSpan, at offset: Int = 0) -> UInt64? {
        guard offset >= 0, bytes.byteCount - offset >= 8 else { return nil }
        var value: UInt64 = 0
        for i in 0..<8 { value = value << 8 | UInt64(bytes.unsafeLoad(fromByteOffset: offset + i, as: UInt8.self)) }
        return value
    }

    /// Whether a key lent in place sorts before `bound` in LMDB's order
    /// (`memcmp` over the shorter length, then the shorter first), whatever
    /// its length: where a walk over a range of keys stops.
    public static func key(_ key: RawSpan, precedes bound: [UInt8]) -> Bool {
        for i in 0..<min(key.byteCount, bound.count) {
            let byte = key.unsafeLoad(fromByteOffset: i, as: UInt8.self)
            if byte != bound[i] { return byte < bound[i] }
        }
        return key.byteCount < bound.count
    }
}
