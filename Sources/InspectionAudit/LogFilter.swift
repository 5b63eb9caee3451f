import FoundationEssentials
import InspectionDomain
import LedgerCore

/// Which events `jqc log` prints, and how each reads on one line.
///
/// Pure, so the selection rules can be tested with tables of records; the
/// CLI decides how to read the log (through a stream's index for
/// `--inspection`, else from `--since`'s position on).
public struct LogFilter: Sendable {
    /// `--since`: events at or after this moment.
    public var since: LogMoment?
    /// `--until`: events at or before this moment.
    public var until: LogMoment?
    /// `--actor`: a part of the actor's name, or its whole id, ignoring case.
    public var actor: String?
    /// `--type`: full type names (`inspection.field_set`) or families
    /// (`sync`, `inspection`); any of them matches.
    public var types: [String]
    /// `--limit`: at most this many events, the first ones in log order.
    public var limit: Int?

    public init(
        since: LogMoment? = nil, until: LogMoment? = nil, actor: String? = nil, types: [String] = [],
        limit: Int? = nil
    ) {
        self.since = since
        self.until = until
        self.actor = actor
        self.types = types
        self.limit = limit
    }

    /// The first position worth reading: `--since` as a position, else 1.
    public var firstPosition: UInt64 {
        if case .position(let position) = since { return max(1, position) }
        return 1
    }

    /// Whether no record after `position` can match, so a scan may stop:
    /// `--until` given as a position has been passed.
    public func isPast(position: UInt64) -> Bool {
        if case .position(let bound) = until { return position > bound }
        return false
    }

    /// Whether `record` is selected (the limit is the caller's to count).
    public func admits(_ record: EventRecord) -> Bool {
        if let since, !since.admitsAsLowerBound(position: record.position, recordedAt: record.recordedAt) {
            return false
        }
        if let until, !until.admitsAsUpperBound(position: record.position, recordedAt: record.recordedAt) {
            return false
        }
        if let actor, !Self.actor(record.actor, matches: actor) { return false }
        if !types.isEmpty, !types.contains(where: { Self.type(record.type, matches: $0) }) { return false }
        return true
    }

    /// Whether a hole in the log at `position` (a record removed or
    /// unreadable) is within the selection. Only position bounds can say:
    /// a hole has no time, actor or type, so with those filters it is left
    /// to `jqc audit` and `jqc verify` to report.
    public func admitsHole(at position: UInt64) -> Bool {
        guard actor == nil, types.isEmpty else { return false }
        for bound in [since, until].compactMap({ $0 }) {
            guard case .position = bound else { return false }
        }
        if case .position(let first) = since, position < first { return false }
        if case .position(let last) = until, position > last { return false }
        return true
    }

    /// Whether `wanted` names the actor, ignoring case: any part of its name
    /// (`Dana` finds "Dana Inspector"), its id only whole (`local:Dan` finds
    /// Dan, not Dana or Danai) or by its kind, the part up to the colon
    /// (`local:` finds every local actor); an empty text finds everyone.
    /// An id is typed to name one actor: a part of it naming others too
    /// would list someone else's events as theirs.
    public static func actor(_ actor: Actor, matches wanted: String) -> Bool {
        let folded = wanted.lowercased()
        if folded.isEmpty || actor.name.lowercased().contains(folded) { return true }
        let id = actor.id.lowercased()
        return id == folded || (folded.hasSuffix(":") && id.hasPrefix(folded))
    }

    /// `inspection.field_set` matches itself and the family `inspection`.
    static func type(_ type: String, matches wanted: String) -> Bool {
        type == wanted || type.hasPrefix(wanted + ".")
    }

    /// Whether `wanted` names an event type or family this program knows.
    public static func isKnownType(_ wanted: String) -> Bool {
        InspectionEventType.allCases.contains { type($0.rawValue, matches: wanted) }
    }

    /// The known families and types, for messages.
    public static var knownTypes: [String] {
        let names = InspectionEventType.allCases.map(\.rawValue)
        let families = Set(names.compactMap { $0.split(separator: ".").first.map(String.init) })
        return families.sorted() + names.sorted()
    }

    // MARK: - One line per event

    /// `     12  2026-11-29T12:10:59.203059Z  1d455db8  2b566894  dana (unverified): set Floors (2) = 4`:
    /// position, exact time, device, inspection, actor, what happened.
    /// The actor's name and the summary are person-written (or hold
    /// person-written values): shown through `TerminalText.singleLine`, so no
    /// control character or bidi override reaches the terminal and every
    /// event stays on its one line.
    public static func line(for record: EventRecord, summary: String) -> String {
        var bytes: [UInt8] = []
        appendLine(for: record, summary: summary, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the UTF-8 of `line(for:summary:)` to `out` (no newline): the
    /// form a listing of the whole log writes, into one reused buffer.
    ///
    /// With `claimedBy` (the record is another device's, not this ledger's),
    /// the actor reads as that device's claim (`EventWording.actor`).
    public static func appendLine(
        for record: EventRecord, summary: String, claimedBy device: UUID? = nil, to out: inout [UInt8]
    ) {
        appendLineStart(for: record, claimedBy: device, to: &out)
        appendSingleLine(summary, to: &out)
    }

    /// Appends what `appendLine` writes before the summary: position, time,
    /// device, inspection and actor, up to and including `": "`.
    public static func appendLineStart(for record: EventRecord, claimedBy device: UUID? = nil, to out: inout [UInt8]) {
        appendPosition(record.position, to: &out)
        out.append(contentsOf: "  ".utf8)
        record.recordedAt.appendISO8601(to: &out)
        out.append(contentsOf: "  ".utf8)
        record.device.appendShortLowercased(to: &out)
        out.append(contentsOf: "  ".utf8)
        record.stream.appendShortLowercased(to: &out)
        out.append(contentsOf: "  ".utf8)
        if let device {
            out.append(
                contentsOf: EventWording.claimed(record.actor, by: device, markingUnverified: true).utf8)
        } else {
            appendSingleLine(record.actor.name, to: &out)
            if !record.actor.verified { out.append(contentsOf: " (unverified)".utf8) }
        }
        out.append(contentsOf: ": ".utf8)
    }

    /// The position right-aligned in seven columns (wider when it is
    /// longer), its digits written in place rather than through a `String`.
    static func appendPosition(_ position: UInt64, to out: inout [UInt8]) {
        var digits = 1
        var rest = position / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        if digits < 7 { out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 7 - digits)) }
        appendDecimal(position, to: &out)
    }

    /// Appends the UTF-8 of `TerminalText.singleLine(text)`: the text as
    /// it is when `isShownAsIs` says so (nearly every name and summary of a
    /// listing), else through `singleLine`.
    public static func appendSingleLine(_ text: String, to out: inout [UInt8]) {
        let shownAsIs = text.utf8.withContiguousStorageIfAvailable(isShownAsIs) ?? isShownAsIs(Array(text.utf8))
        out.append(contentsOf: (shownAsIs ? text : TerminalText.singleLine(text)).utf8)
    }

    /// Whether `TerminalText.singleLine` leaves this text (valid UTF-8) as
    /// it is, decided on its bytes: no byte below 0x20 (so no line break or
    /// tab), no DEL, and none of the scalars `TerminalText.needsEscape`
    /// names above ASCII, which in UTF-8 are C2 80–9F (the C1 controls),
    /// D8 9C (U+061C), E2 80 8E–8F, E2 80 A8–AE (U+200E–F, U+2028–202E) and
    /// E2 81 A6–A9 (U+2066–2069). Summaries hold `…`, `→` and `—`, which a
    /// walk over the scalars made slow; a line written as bytes is checked
    /// here before it is kept as it is.
    public static func isShownAsIs(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if byte < 0x80 {
                if byte < 0x20 || byte == 0x7F { return false }
                index += 1
                continue
            }
            let next = index + 1 < count ? bytes[index + 1] : 0
            let third = index + 2 < count ? bytes[index + 2] : 0
            switch byte {
            case 0xC2 where next <= 0x9F: return false
            case 0xD8 where next == 0x9C: return false
            case 0xE2 where next == 0x80 && (third == 0x8E || third == 0x8F || (0xA8...0xAE).contains(third)):
                return false
            case 0xE2 where next == 0x81 && (0xA6...0xA9).contains(third): return false
            default: index += 1
            }
        }
        return true
    }

    /// `isShownAsIs` of an array's bytes.
    public static func isShownAsIs(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBufferPointer(isShownAsIs) }
}
