import FoundationEssentials

/// An id typed by a person: any prefix of the canonical text form (dashes
/// optional), like git's abbreviated hashes. One hex digit is a prefix too.
public struct IDPrefix: Hashable, Sendable, CustomStringConvertible {
    /// Lower-case hex digits, without dashes.
    public let digits: String

    /// Nil when the text holds anything but hex digits and dashes, or nothing.
    public init?(_ text: String) {
        let cleaned = text.lowercased().filter { $0 != "-" }
        guard !cleaned.isEmpty, cleaned.count <= 32, cleaned.allSatisfy(\.isHexDigit) else { return nil }
        digits = cleaned
    }

    public var description: String { digits }

    /// The smallest 16-byte-id key that can match: the digits padded with
    /// zeros to whole bytes. Never empty, so it is always a valid key to seek
    /// to (LMDB refuses an empty key, which a one-digit prefix used to give);
    /// ids that match start at or after it, and in key order they are
    /// contiguous, so a seek here and a stop at the first non-match finds all.
    public var lowestKey: [UInt8] {
        let even = digits.count % 2 == 0 ? digits : digits + "0"
        // Only hex digits reach here (checked by init), so decoding succeeds.
        return Hex.decode(even) ?? [0]
    }

    public func matches(_ id: UUID) -> Bool {
        Hex.encode(id.bytes).hasPrefix(digits)
    }

}
