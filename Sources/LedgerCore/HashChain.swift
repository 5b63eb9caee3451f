/// The hash chain that makes the log tamper-evident.
///
///     leaf(n)  = SHA-256(0x00 ‖ record bytes of n)        (an RFC 6962 leaf)
///     chain(n) = SHA-256(chain(n-1) ‖ leaf(n)),  chain(0) = 32 zero bytes
///
/// Hashing each record as an RFC 6962 leaf first means Merkle inclusion proofs
/// can be added later over the same leaves, without changing stored data.
public struct HashChain {
    /// The hasher it uses (one per thread), lent to the Merkle tree's code.
    public let hasher: SHA256Hasher

    public init(hasher: SHA256Hasher = SHA256Hasher()) {
        self.hasher = hasher
    }

    public func leaf(ofRecord bytes: [UInt8]) -> Digest256 {
        hasher.digest(prefix: 0x00, bytes, range: bytes.indices)
    }

    /// The leaf of a record stored at `range` inside a larger buffer.
    public func leaf(ofRecordIn buffer: [UInt8], range: Range<Int>) -> Digest256 {
        hasher.digest(prefix: 0x00, buffer, range: range)
    }

    /// The leaf of a record at `range` of bytes lent in place.
    public func leaf(ofRecordIn buffer: RawSpan, range: Range<Int>) -> Digest256 {
        hasher.digest(prefix: 0x00, buffer, range: range)
    }

    public func link(previous: Digest256, leaf: Digest256) -> Digest256 {
        hasher.digest(previous, leaf)
    }

    /// The chain value after appending the record `bytes` to `previous`.
    public func next(previous: Digest256, record bytes: [UInt8]) -> Digest256 {
        link(previous: previous, leaf: leaf(ofRecord: bytes))
    }
}

/// A point in the log that can be handed to someone else: its position and the
/// chain hash there. Later, `verify(against:)` proves the log still extends it.
public struct LedgerDigest: Hashable, Sendable, CustomStringConvertible {
    public var position: UInt64
    public var head: Digest256

    public init(position: UInt64, head: Digest256) {
        self.position = position
        self.head = head
    }

    /// Text form: `jqc-digest-v1:<position>:<64 hex digits>`.
    public var description: String { "jqc-digest-v1:\(position):\(head.hex)" }

    public init?(_ text: String) {
        let parts = text.trimmingWhitespace().split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "jqc-digest-v1", let position = UInt64(parts[1]),
            let head = Digest256(hex: String(parts[2]))
        else { return nil }
        self.init(position: position, head: head)
    }
}

extension String {
    func trimmingWhitespace() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }
        guard let start = firstIndex(where: { !isSpace($0) }), let end = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return self[start...end]
    }
}
