import FoundationEssentials
import LMDB
import LedgerCore

// Step 7 of `verify --full` (`Schemas/ledger-format.md` § What `verify`
// checks): the `carried` table. Every reference of every version-2
// `inspection.received` of the log resolves, at any depth, to an entry whose
// bytes hash to its key; and every entry's key is the leaf hash of its bytes.
// The reception's payload shape is read here as the ledger format states it
// (`records[].leaf`, 32-byte byte strings), without the domain's decoder:
// the store checks its own tables.

/// A problem of the `carried` table.
public enum CarriedFinding: Hashable, Sendable, CustomStringConvertible {
    /// A reference of the reception at `position` (or of a reception it
    /// carries) that the table does not hold.
    case missing(position: UInt64, leaf: Digest256)
    /// An entry whose bytes do not hash to its key.
    case damaged(position: UInt64, key: [UInt8])

    public var position: UInt64 {
        switch self {
        case .missing(let position, _), .damaged(let position, _): position
        }
    }

    public var key: String {
        switch self {
        case .missing(_, let leaf): "carried[\(leaf.hex)]"
        case .damaged(_, let key): "carried[\(Hex.encode(key))]"
        }
    }

    public var description: String {
        switch self {
        case .missing(let position, let leaf):
            "the reception at position \(position) carries the record with leaf \(leaf.hex), which the 'carried' "
                + "table does not hold: the table lost an entry. Restore the ledger from a backup (a backup copies the "
                + "table); the device that sent the records still holds them"
        case .damaged(_, let key):
            "the 'carried' table's entry \(Hex.encode(key)) holds bytes that do not hash to it: it was changed. "
                + "Restore the ledger from a backup (a backup copies the table)"
        }
    }
}

extension EventLog {
    static let receivedType = "inspection.received"
    /// The type as key 5 of a record holds it.
    static let encodedReceivedType = CheckedLayout.encoded(type: receivedType)

    /// Whether a record whose check passed with `layout` is one that
    /// `carriedReferences` reads references from (a version-2 or later
    /// `inspection.received`): the same test, on the bytes where they lie.
    static func referencesCarried(_ layout: CheckedLayout, in bytes: RawSpan) -> Bool {
        layout.schemaVersion >= 2 && layout.hasType(encodedReceivedType, in: bytes)
    }

    /// The leaves a stored record references by leaf hash: those of a
    /// version-2 `inspection.received`'s `records`; none for any other.
    static func carriedReferences(_ record: EventRecord) -> [Digest256] {
        guard record.type == receivedType, record.schemaVersion >= 2,
            let payload = try? CBORValue(decoding: record.payload), case .array(let records)? = payload["records"]
        else { return [] }
        return records.compactMap { entry in
            guard case .bytes(let bytes)? = entry["leaf"] else { return nil }
            return Digest256(bytes: bytes)
        }
    }

    /// Step 7: the first problem of the `carried` table, or nil. `last` is
    /// the log's last position (an entry no record names is reported just
    /// past it: every record before it is intact). `receptions` are the
    /// positions of the records that reference carried records, in log
    /// order (`TreeCheck` found them while checking every record): only
    /// those are read, since no other record has a reference to follow.
    static func carriedFinding(_ reader: LedgerReader, records last: UInt64, receptions: [UInt64]) throws
        -> CarriedFinding?
    {
        let chain = HashChain()
        var checked: Set<Digest256> = []
        var finding: CarriedFinding?
        receptions: for position in receptions {
            guard let record = try reader.record(at: position) else {
                throw LedgerError.invalidEvent(
                    "verify found a reception at position \(position) and then could not read it again in the same "
                        + "read transaction; this is a bug in jqc, please report it")
            }
            var pending = carriedReferences(record)
            while let leaf = pending.popLast() {
                guard checked.insert(leaf).inserted else { continue }
                guard let bytes = try reader.carriedRecord(leaf) else {
                    finding = .missing(position: record.position, leaf: leaf)
                    break receptions
                }
                guard chain.leaf(ofRecord: bytes) == leaf else {
                    finding = .damaged(position: record.position, key: leaf.bytes)
                    break receptions
                }
                // A record it carries that does not decode is left to the
                // reading of the reception, which names it.
                if let carried = try? EventRecord(decoding: bytes) { pending += carriedReferences(carried) }
            }
        }
        if let finding { return finding }
        try reader.forEachCarried { key, value in
            if chain.leaf(ofRecord: value).bytes != key { finding = .damaged(position: last + 1, key: key) }
            return finding == nil
        }
        return finding
    }
}
