import Foundation
import LMDB
import LedgerCore
import LedgerTestSupport
import Testing

@testable import LedgerStore

/// The reads an auditor makes through the store: streams by id prefix,
/// a stream's history with its holes, a scan of the log that hands over
/// damage instead of skipping it, and the read-only open's fallback.
@Suite struct LedgerHistoryTests {
    let directory = TemporaryDirectory()
    let clock = ManualClock()

    /// Streams whose ids start with chosen bytes, so prefixes can be tested exactly.
    static let ids: [UUID] = [
        "30000000-0000-4000-8000-000000000001", "31000000-0000-4000-8000-000000000002",
        "3f000000-0000-4000-8000-000000000003", "40000000-0000-4000-8000-000000000004",
        "4a100000-0000-4000-8000-000000000005", "ff000000-0000-4000-8000-000000000006",
    ].map { UUID(uuidString: $0)! }

    func logWithStreams() throws -> EventLog {
        let log = try EventLog(directory: directory.appending("store"))
        for id in Self.ids {
            // Two events each, so a stream has several index entries to skip.
            clock.advance(microseconds: 1)
            try log.append([SampleEvents.event(stream: id, note: "a", at: clock.now())])
            clock.advance(microseconds: 1)
            try log.append([SampleEvents.event(stream: id, note: "b", at: clock.now())])
        }
        return log
    }

    static let prefixes: [(String, [Int])] = [
        ("3", [0, 1, 2]),
        ("4", [3, 4]),
        ("30", [0]),
        ("3f", [2]),
        ("4a1", [4]),
        ("4a2", []),
        ("f", [5]),
        ("ff000000-0000", [5]),
        ("5", []),
        ("0", []),
        ("300000000000400080000000000000012", []),
    ]

    @Test(arguments: prefixes)
    func streamsAreFoundByAnyPrefixOneDigitIncluded(prefix: String, expected: [Int]) throws {
        let log = try logWithStreams()
        defer { log.close() }
        let wanted = IDPrefix(prefix)
        if prefix.count > 32 {
            #expect(wanted == nil)
            return
        }
        let found = try log.streams(matching: try #require(wanted))
        #expect(found == expected.map { Self.ids[$0] }, "prefix \(prefix)")
    }

    @Test func theLimitBoundsWhatIsFound() throws {
        let log = try logWithStreams()
        defer { log.close() }
        #expect(try log.streams(matching: IDPrefix("3")!, limit: 2) == Array(Self.ids.prefix(2)))
    }

    @Test func theScanHandsOverUnreadableRecordsAndGaps() throws {
        let log = try logWithStreams()
        defer { log.close() }
        let events = log.tables.events
        try log.environment.write { txn in
            // Position 3 becomes bytes that are no record; positions 5 and 6 are removed.
            try txn.put(events, BigEndian.bytes(3), [UInt8](repeating: 0, count: 32) + [0xBB, 0xFF])
            _ = try txn.delete(events, BigEndian.bytes(5))
            _ = try txn.delete(events, BigEndian.bytes(6))
        }
        var seen: [String] = []
        try log.read { reader in
            try reader.scan { entry in
                switch entry {
                case .record(let record): seen.append("record \(record.position)")
                case .unreadable(let position, _): seen.append("unreadable \(position)")
                case .missing(let positions): seen.append("missing \(positions.lowerBound)-\(positions.upperBound)")
                }
                return true
            }
        }
        #expect(
            seen == ["record 1", "record 2", "unreadable 3", "record 4", "missing 5-6"]
                + (7...12).map { "record \($0)" })

        // From a later position, and a gap right at the start.
        var fromFive: [String] = []
        try log.read { reader in
            try reader.scan(from: 5) { entry in
                if case .missing(let positions) = entry { fromFive.append("missing \(positions)") }
                return fromFive.count < 1
            }
        }
        #expect(fromFive == ["missing 5...6"])

        // The history of stream 2 (positions 3 and 4) keeps the damaged record as an entry.
        let history = try log.history(ofStream: Self.ids[1])
        #expect(history.count == 2)
        if case .unreadable(let version, let position, _) = history.first {
            #expect(version == 1 && position == 3)
        } else {
            Issue.record("the damaged record is not an unreadable entry: \(history)")
        }
        // Stream 3's first record (position 5) is gone: a missing entry, not an error.
        let third = try log.history(ofStream: Self.ids[2])
        if case .missing(let version, let position) = third.first {
            #expect(version == 1 && position == 5)
        } else {
            Issue.record("the removed record is not a missing entry: \(third)")
        }
    }

    @Test func chainHashesAreTheStoredOnes() throws {
        let log = try logWithStreams()
        defer { log.close() }
        let head = try log.head()
        let hashes = try log.chainHashes(at: [1, head.position, 999])
        #expect(hashes[head.position] == head.head)
        #expect(hashes[1] != nil && hashes[999] == nil)
    }

    // MARK: - Opening read-only

    static let refusals: [(LMDBError, Bool)] = [
        (LMDBError(code: EACCES, operation: "opening the lock file"), true),
        (LMDBError(code: EROFS, operation: "opening the lock file"), true),
        (LMDBError(code: EPERM, operation: "opening the lock file"), true),
        (LMDBError(code: ENOSPC, operation: "opening"), false),
        (LMDBError(code: -30796, operation: "opening"), false),
    ]

    @Test(arguments: refusals)
    func onlyALockFileRefusalIsRetriedWithoutTheLock(error: LMDBError, retried: Bool) throws {
        var attempts: [StoreAccess] = []
        let open = {
            try ReadOnlyOpening.open { access -> Int in
                attempts.append(access)
                if attempts.count == 1 { throw LedgerError.storage(error) }
                return 7
            }
        }
        if retried {
            let (value, withoutLock) = try open()
            #expect(value == 7 && withoutLock)
            #expect(attempts == [.reading, .readingWithoutLockFile])
            #expect(attempts.map(\.options.readOnly) == [true, true])
            #expect(attempts.map(\.options.noLock) == [false, true])
        } else {
            #expect(throws: LedgerError.self) { try open() }
            #expect(attempts.count == 1)
        }
    }

    @Test func aWritableLedgerOpensReadOnlyWithItsLock() throws {
        try logWithStreams().close()
        let (log, withoutLock) = try ReadOnlyOpening.log(directory: directory.appending("store"))
        defer { log.close() }
        #expect(!withoutLock)
        #expect(try log.head().position == UInt64(Self.ids.count * 2))
    }

    @Test func aMissingLedgerIsNoLedgerAndAnUnknownPathIsNotAPermissionProblem() throws {
        #expect(throws: LedgerError.self) { try ReadOnlyOpening.log(directory: directory.appending("nothing")) }
        try ReadOnlyOpening.checkReadable([directory.appending("nothing"), directory.path])
    }
}
