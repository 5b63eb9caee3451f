import Foundation
import LMDB
import LedgerCore

/// An id typed by a person: any prefix of the canonical text form (dashes
/// optional), like git's abbreviated hashes.
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

    /// The whole bytes the prefix fixes, for seeking in a table keyed by ids.
    var bytePrefix: [UInt8] {
        Hex.decode(String(digits.prefix(digits.count / 2 * 2))) ?? []
    }

    public func matches(_ id: UUID) -> Bool {
        Hex.encode(id.bytes).hasPrefix(digits)
    }

    /// The ids in `table` (keyed by 16-byte ids) that start with this prefix,
    /// at most `limit` of them, found by seeking rather than scanning.
    func matches(in table: Table, _ transaction: Transaction, limit: Int = 10) throws -> [UUID] {
        var found: [UUID] = []
        let start = bytePrefix
        // A one-digit prefix fixes no whole byte: LMDB refuses empty keys, so scan from the start.
        try transaction.forEach(table, from: start.isEmpty ? nil : start) { key, _ in
            guard key.count >= 16, key.starts(with: start), let id = UUID(bytes: Array(key[0..<16])) else {
                return false
            }
            if matches(id), found.last != id { found.append(id) }
            return found.count < limit
        }
        return found
    }
}
