import Foundation
import LMDB
import LedgerCore
import LedgerTestSupport
import Testing

@_spi(RawAppend) @testable import LedgerStore

/// The indexes are checked entry by entry against the records that name them
/// (issue 11.1): a planted or edited entry misleads every read through it.
@Suite struct IndexVerificationTests {
    let directory = TemporaryDirectory()
    var store: String { directory.appending("store") }

    /// Two streams of five events each, interleaved (positions 1…10: stream
    /// A at odd positions, B at even ones).
    func makeLog() throws -> (a: UUID, b: UUID) {
        let log = try EventLog(directory: store)
        let clock = ManualClock()
        let (a, b) = (UUID(), UUID())
        for i in 0..<10 {
            clock.advance(microseconds: 10)
            try log.append([SampleEvents.event(stream: i % 2 == 0 ? a : b, note: "event \(i)", at: clock.now())])
        }
        log.close()
        return (a, b)
    }

    func tamper(_ body: (Transaction, _ ids: Table, _ streams: Table, _ events: Table) throws -> Void) throws {
        let env = try Environment(directory: store)
        let ids = try #require(try env.table("event_ids"))
        let streams = try #require(try env.table("stream_index"))
        let events = try #require(try env.table("events"))
        try env.write { txn in try body(txn, ids, streams, events) }
        env.close()
    }

    func verify() throws -> VerificationReport {
        let log = try EventLog(directory: store)
        defer { log.close() }
        return try log.verify()
    }

    func streamKey(_ stream: UUID, _ version: UInt64) -> [UInt8] { stream.bytes + BigEndian.bytes(version) }

    func id(at position: UInt64) throws -> UUID {
        let log = try EventLog(directory: store)
        defer { log.close() }
        return try #require(try log.record(at: position)).id
    }

    /// Steps 3 to 5 read `stream_index` on another thread only in a read
    /// transaction of the very snapshot the walk read: not beside a write
    /// transaction (another snapshot), nor without the log. The sums and
    /// the order finding are the same every way.
    @Test func theStreamIndexIsReadBesideOnlyInTheSameSnapshot() throws {
        let (a, _) = try makeLog()
        // A gap in A's versions: an order finding to compare as well.
        try tamper { txn, _, streams, _ in _ = try txn.delete(streams, streamKey(a, 2)) }
        let log = try EventLog(directory: store)
        defer { log.close() }
        let beside = try log.read { try AfterWalk.work($0, beside: log, heads: []) }
        let here = try log.read { try AfterWalk.work($0, beside: nil, heads: []) }
        let inWrite = try log.write { try AfterWalk.work($0.reader, beside: log, heads: []) }
        #expect(beside.streamsReadBeside && !here.streamsReadBeside && !inWrite.streamsReadBeside)
        #expect(beside.sums == here.sums && inWrite.sums == here.sums)
        #expect(beside.order != nil && beside.order == here.order && inWrite.order == here.order)
        #expect(try !verify().isIntact)
    }

    /// Step 8 against each kind of damage to the `heads` table, the stored
    /// key named: a node taken out, a node's bytes changed, and entries
    /// planted at a key no node of this map has (a free position, and a
    /// key with a bit set past its depth, which no position has).
    @Test(arguments: [
        ("a head taken out", HeadMapFinding.Problem.missing),
        ("a head's leaf changed", .changed),
        ("an entry at a free position", .extra),
        ("an entry with a bit past its depth", .extra),
    ])
    func eachDamageToTheMapOfHeadsIsNamed(damage: String, problem: HeadMapFinding.Problem) throws {
        _ = try makeLog()
        let env = try Environment(directory: store)
        let heads = try #require(try env.table(TableName.heads, create: false))
        let damaged = try env.write { txn -> [UInt8] in
            var leaves: [(key: [UInt8], value: [UInt8])] = []
            try txn.forEach(heads) { key, value in
                if key.count == 33, value.first == 0x00 { leaves.append((key, value)) }
                return true
            }
            // Two streams: two heads below the root.
            try #require(leaves.count == 2, "\(leaves)")
            var (key, value) = leaves[1]
            switch damage {
            case "a head taken out":
                _ = try txn.delete(heads, key)
                return key
            case "a head's leaf changed":
                value[value.count - 1] ^= 0x01
            case "an entry at a free position":
                key[0] += 1
            default:
                key[32] |= 0x01
                try #require(key != leaves[1].key)
            }
            try txn.put(heads, key, value)
            return key
        }
        env.close()
        #expect(try verify().finding == .headMap(HeadMapFinding(problem: problem, storedKey: damaged, position: 11)))
    }

    @Test func aStreamEntryPointingAtAnotherInspectionsRecordIsFound() throws {
        let (a, _) = try makeLog()
        // A's version 3 is at position 5; point it at B's record at position 6.
        try tamper { txn, _, streams, _ in try txn.put(streams, streamKey(a, 3), BigEndian.bytes(6)) }
        let report = try verify()
        #expect(!report.isIntact)
        #expect(
            report.finding
                == .indexMismatch(.streamEntry(stream: a, version: 3, position: 5, pointsAt: 6)))
        #expect(report.finding?.position == 5)
        #expect(report.finding?.key == "stream_index[\(a.lowercased)/3]")
        #expect(report.finding?.description.contains("position 0") == false)
    }

    @Test func anEditedEventIDEntryIsFound() throws {
        _ = try makeLog()
        let moved = try id(at: 4)
        try tamper { txn, ids, _, _ in try txn.put(ids, moved.bytes, BigEndian.bytes(7)) }
        #expect(try verify().finding == .indexMismatch(.eventID(id: moved, position: 4, pointsAt: 7)))
    }

    @Test func aMissingEntryIsFound() throws {
        let (_, b) = try makeLog()
        try tamper { txn, _, streams, _ in _ = try txn.delete(streams, streamKey(b, 2)) }
        #expect(
            try verify().finding == .indexMismatch(.streamEntry(stream: b, version: 2, position: 4, pointsAt: nil)))
    }

    @Test func aPlantedExtraEntryIsNamedByItsKey() throws {
        let (a, _) = try makeLog()
        // A version 6 that no record is: it points at B's record at 8.
        try tamper { txn, _, streams, _ in try txn.put(streams, streamKey(a, 6), BigEndian.bytes(8)) }
        let finding = try verify().finding
        #expect(finding == .indexMismatch(.stray(table: "stream_index", key: "\(a.lowercased)/6", pointsAt: 8)))
        #expect(finding?.key == "stream_index[\(a.lowercased)/6]")
    }

    @Test func aPlantedEventIDIsFound() throws {
        _ = try makeLog()
        let planted = UUID()
        try tamper { txn, ids, _, _ in try txn.put(ids, planted.bytes, BigEndian.bytes(3)) }
        #expect(
            try verify().finding
                == .indexMismatch(.stray(table: "event_ids", key: planted.lowercased, pointsAt: 3)))
    }

    /// Rewrites the records of `positions` with `edit` and recomputes the
    /// chain from the first one on (and, with `relink`, every later record's
    /// back-link), as a forger would, so only the indexes can tell.
    func rewrite(_ positions: ClosedRange<UInt64>, relink: Bool = true, _ edit: (inout EventRecord) -> Void) throws {
        try tamper { txn, _, _, events in
            let chain = HashChain()
            var previous = Digest256.zero
            var leaves: [UUID: Digest256] = [:]
            var p: UInt64 = 1
            while let value = try txn.get(events, BigEndian.bytes(p)) {
                var record = try EventRecord(decoding: value, at: 32)
                if p >= positions.lowerBound {
                    if positions.contains(p) { edit(&record) }
                    if relink, record.previousInStream != nil { record.previousInStream = leaves[record.stream] }
                    let bytes = record.encoded()
                    previous = chain.next(previous: previous, record: bytes)
                    try txn.put(events, BigEndian.bytes(p), previous.bytes + bytes)
                } else {
                    previous = Digest256(bytes: Array(value[0..<32]))!
                }
                leaves[record.stream] = chain.leaf(ofRecord: record.encoded())
                p += 1
            }
        }
    }

    @Test func aDuplicateIDIsFound() throws {
        _ = try makeLog()
        let first = try id(at: 2)
        try rewrite(7...7) { $0.event.id = first }
        #expect(try verify().finding == .indexMismatch(.duplicateID(id: first, first: 2, second: 7)))
    }

    @Test func aStreamVersionGapIsFound() throws {
        let (a, _) = try makeLog()
        // Record 9 is A's version 5; a consistent rewrite calls it version 6
        // and moves its index entry along.
        try rewrite(9...9) { $0.streamVersion = 6 }
        try tamper { txn, _, streams, _ in
            _ = try txn.delete(streams, streamKey(a, 5))
            try txn.put(streams, streamKey(a, 6), BigEndian.bytes(9))
        }
        #expect(try verify().finding == .indexMismatch(.streamGap(stream: a, expected: 5, found: 6, position: 9)))
    }

    @Test func streamVersionsOutOfOrderAreFound() throws {
        let (a, _) = try makeLog()
        // Swap the versions of A's records at 3 and 5 (versions 2 and 3).
        try rewrite(3...5) { record in
            if record.position == 3 { record.streamVersion = 3 }
            if record.position == 5 { record.streamVersion = 2 }
        }
        try tamper { txn, _, streams, _ in
            try txn.put(streams, streamKey(a, 2), BigEndian.bytes(5))
            try txn.put(streams, streamKey(a, 3), BigEndian.bytes(3))
        }
        #expect(
            try verify().finding == .indexMismatch(.streamOrder(stream: a, version: 3, position: 3, previous: 5)))
    }

    @Test func aConsistentRewriteOfAStreamBreaksTheNextRecordsBackLink() throws {
        let (a, _) = try makeLog()
        // A's version 2 (position 3) is rewritten and the chain recomputed:
        // its next record (version 3, position 5) still links to the old one.
        try rewrite(3...3, relink: false) { $0.event.payload = CBORValue.textMap([("forged", .text("yes"))]).encoded() }
        #expect(try verify().finding == .brokenStreamLink(position: 5, stream: a, version: 3))
    }

    @Test func newRecordsLinkToTheirStreamsPreviousRecord() throws {
        _ = try makeLog()
        let log = try EventLog(directory: store)
        defer { log.close() }
        try log.read { reader in
            let first = try #require(try reader.record(at: 1))
            let third = try #require(try reader.record(at: 3))
            #expect(first.previousInStream == nil && first.format == 2)
            #expect(third.previousInStream == (try reader.leafHash(at: 1)))
        }
    }

    @Test func aChainProblemIsReportedBeforeAnIndexProblem() throws {
        let (a, _) = try makeLog()
        try tamper { txn, _, streams, events in
            try txn.put(streams, streamKey(a, 1), BigEndian.bytes(2))
            var value = try #require(try txn.get(events, BigEndian.bytes(8)))
            value[value.count - 3] ^= 0x01
            try txn.put(events, BigEndian.bytes(8), value)
        }
        #expect(try verify().finding == .changed(position: 8))
    }

    @Test func appendsDuringAVerifyNeverCauseAFinding() throws {
        _ = try makeLog()
        let log = try EventLog(directory: store)
        defer { log.close() }
        let writer = Appender(log: log)
        let thread = Thread { writer.run() }
        thread.start()
        var reports: [VerificationReport] = []
        var sizes = Set<UInt64>()
        var verifies = 0
        // Until the writer got 20 appends in (bounded, should it stall).
        do {
            while (verifies < 30 || writer.appended < 20) && writer.failure == nil && verifies < 200_000 {
                let report = try log.verify()
                verifies += 1
                sizes.insert(report.checked)
                if !report.isIntact { reports.append(report) }
            }
        } catch {
            writer.stop()
            throw error
        }
        writer.stop()
        #expect(writer.appended >= 20, "the writer appended only \(writer.appended) events")
        #expect(writer.failure == nil)
        for report in reports {
            Issue.record("a verify during appends reported \(String(describing: report.finding))")
        }
        #expect(sizes.count > 1, "every verify saw the same log: nothing ran meanwhile")
    }
}

/// Appends one event at a time on another thread until stopped.
private final class Appender: @unchecked Sendable {
    let log: EventLog
    private let lock = NSLock()
    private let finished = DispatchSemaphore(value: 0)
    private var stopped = false
    private var count = 0
    private var error: Error?

    init(log: EventLog) { self.log = log }

    var appended: Int { lock.withLock { count } }
    var failure: Error? { lock.withLock { error } }
    /// Stops the loop and waits until its last append has returned, so the
    /// log is never closed under it.
    func stop() {
        lock.withLock { stopped = true }
        finished.wait()
    }

    func run() {
        defer { finished.signal() }
        let clock = ManualClock()
        let stream = UUID()
        while !lock.withLock({ stopped }) {
            clock.advance(microseconds: 1)
            do {
                try log.append([SampleEvents.event(stream: stream, note: "meanwhile", at: clock.now())])
                lock.withLock { count += 1 }
            } catch {
                lock.withLock {
                    self.error = error
                    stopped = true
                }
            }
        }
    }
}
