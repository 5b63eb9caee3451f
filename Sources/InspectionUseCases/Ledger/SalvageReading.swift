import FoundationEssentials
import InspectionDomain
import LedgerCore

/// What one reading of a damaged store gave: the verified prefix and why it
/// ended. Built from the raw entries a reader printed (`jqc salvage-read`:
/// one `POSITION HEX` line per entry, `# COUNT` for the table's count, `! WHY`
/// where it stopped), checked link by link: hostile bytes, every line.
public struct SalvageReading: Sendable {
    public var events: [PendingEvent] = []
    public var lastHash: Digest256?
    public var firstBreak: String?
    /// Records the reader printed after the first break.
    public var seenAfterBreak = 0
    /// How many records the store's `events` table counts, if it could say.
    public var storedCount: UInt64?
    /// The `carried` table's entries whose bytes hash to their key (`carried
    /// KEY VALUE` lines): what the salvaged receptions reference.
    public var carried = CarriedRecords()
    /// Entries of the `carried` table left out: not hex, or not hashing to
    /// their key.
    public var carriedLeftOut = 0

    public init() {}

    /// Checks the reader's `output`; `stopped`, when the reader did not end
    /// cleanly, is what it said (its last line of stderr, or how it ended).
    public init(output: Data, stopped: String?) {
        var salvage = SalvageReading()
        var link = Link()
        for line in output.split(separator: UInt8(ascii: "\n")) {
            if line.starts(with: Self.carriedPrefix.utf8) {
                salvage.takeCarried(line)
                continue
            }
            if salvage.firstBreak != nil {
                salvage.seenAfterBreak += 1
                continue
            }
            if line.first == UInt8(ascii: "#") {
                salvage.storedCount = UInt64(String(decoding: line.dropFirst(2), as: UTF8.self))
                continue
            }
            if line.first == UInt8(ascii: "!") {
                salvage.firstBreak =
                    "the store could not be read past position \(link.expected - 1): "
                    + Self.reason(String(decoding: line.dropFirst(2), as: UTF8.self))
                continue
            }
            salvage.takeEntry(line, link: &link)
        }
        if salvage.firstBreak == nil, let stopped {
            salvage.firstBreak =
                "the store could not be read past position \(link.expected - 1): " + Self.reason(stopped)
        }
        self = salvage
    }

    /// Where the chain stands while the reader's entries are checked: the
    /// hash of the last record kept and the position the next must hold.
    private struct Link {
        var previous = Digest256.zero
        var expected: UInt64 = 1
        let chain = HashChain()
    }

    /// Keeps a `carried KEY VALUE` line's entry if its bytes hash to its key.
    private mutating func takeCarried(_ line: Data.SubSequence) {
        // Content-addressed: an entry is kept only when its bytes are
        // its key's, whatever became of the events.
        let fields = line.split(separator: UInt8(ascii: " "))
        if fields.count == 3, let key = Self.hexBytes(fields[1]), let value = Self.hexBytes(fields[2]),
            CarriedRecords.leaf(of: value).bytes == key
        {
            carried.insert(value)
        } else {
            carriedLeftOut += 1
        }
    }

    /// Checks one `POSITION HEX` entry against the chain: kept when it links,
    /// else the first break (and, past an entry that was read, counted after it).
    private mutating func takeEntry(_ line: Data.SubSequence, link: inout Link) {
        let expected = link.expected
        let fields = line.split(separator: UInt8(ascii: " "))
        guard fields.count == 2, let position = UInt64(String(decoding: fields[0], as: UTF8.self)),
            let value = Self.hexBytes(fields[1]), value.count > 32,
            let stored = Digest256(bytes: Array(value[0..<32]))
        else {
            firstBreak = "the entry after position \(expected - 1) could not be read"
            return
        }
        func broken(_ why: String) {
            firstBreak = why
            seenAfterBreak += 1
        }
        guard position == expected else { return broken("position \(expected) is missing") }
        let chain = link.chain
        guard
            chain.link(previous: link.previous, leaf: chain.leaf(ofRecordIn: value, range: 32..<value.count)) == stored
        else {
            return broken("record \(position) fails its chain check (it was changed after it was written)")
        }
        // Its link holds: the record is judged as `verify --full` judges it,
        // and one the format does not define is not copied (nor laundered
        // into a well-formed copy).
        let record: EventRecord
        do {
            _ = try EventRecord.checkedHeader(ofEncoded: value.span.bytes, at: 32)
            record = try EventRecord(decoding: value, at: 32)
        } catch {
            return broken("record \(position) is not a record this program reads (\(error))")
        }
        guard record.position == position else {
            return broken("record \(position) holds the record written as \(record.position)")
        }
        events.append(record.event)
        lastHash = stored
        link.previous = stored
        link.expected += 1
    }

    /// How a reader prints an entry of the `carried` table: `carried KEY VALUE`
    /// (both hex), after the events.
    public static let carriedPrefix = "carried "

    /// What the reader said when it stopped, without the advice around it.
    static func reason(_ text: String) -> String {
        var why = text
        if why.hasPrefix("jqc: ") { why = String(why.dropFirst(5)) }
        if let damage = why.utf8.firstRange(of: "is damaged: ".utf8) { why = String(why[damage.upperBound...]) }
        if let advice = why.utf8.firstRange(of: ". Nothing was changed.".utf8) {
            why = String(why[..<advice.lowerBound])
        }
        return TerminalText.singleLine(why)
    }

    static func hexBytes(_ text: Data.SubSequence) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 2)
        var high: UInt8?
        for c in text {
            let nibble: UInt8
            switch c {
            case 48...57: nibble = c - 48
            case 97...102: nibble = c - 87
            default: return nil
            }
            if let h = high {
                bytes.append(h << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return bytes
    }
}
