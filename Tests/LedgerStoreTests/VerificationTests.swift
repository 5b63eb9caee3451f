import Foundation
import LMDB
import LedgerCore
import LedgerTestSupport
import Testing

@testable import LedgerStore

/// Tampering is done the way an attacker with the file would do it: with raw
/// LMDB writes that bypass the log, after the log is closed.
@Suite struct VerificationTests {
    let directory = TemporaryDirectory()
    var store: String { directory.appending("store") }

    /// A log of `count` events, closed, and its digest.
    func makeLog(count: Int = 20) throws -> LedgerDigest {
        let log = try EventLog(directory: store)
        let clock = ManualClock()
        for i in 0..<count {
            clock.advance(microseconds: 10)
            try log.append([SampleEvents.event(stream: UUID(), note: "event \(i)", at: clock.now())])
        }
        let head = try log.head()
        log.close()
        return head
    }

    func tamper(_ body: (Transaction, Table) throws -> Void) throws {
        let env = try Environment(directory: store)
        let events = try #require(try env.table("events"))
        try env.write { txn in try body(txn, events) }
        env.close()
    }

    func verify(against digest: LedgerDigest? = nil) throws -> VerificationReport {
        let log = try EventLog(directory: store)
        defer { log.close() }
        return try log.verify(against: digest)
    }

    @Test func anUntouchedLogVerifies() throws {
        let digest = try makeLog()
        let report = try verify(against: digest)
        #expect(report.isIntact)
        #expect(report.checked == 20)
        #expect(report.head == digest)
    }

    @Test func oneChangedByteIsFoundAtItsPosition() throws {
        _ = try makeLog()
        try tamper { txn, events in
            var value = try #require(try txn.get(events, BigEndian.bytes(7)))
            let index = try #require(value.lastIndex(of: UInt8(ascii: "7")))  // "event 7" → "event 8"
            value[index] = UInt8(ascii: "8")
            try txn.put(events, BigEndian.bytes(7), value)
        }
        #expect(try verify().finding == .changed(position: 7))
    }

    @Test(arguments: [1, 3, 10, 11, 20] as [UInt64])
    func aChangeIsFoundWhereItIs(position: UInt64) throws {
        _ = try makeLog()
        try tamper { txn, events in
            var value = try #require(try txn.get(events, BigEndian.bytes(position)))
            value[value.count - 2] ^= 0x40
            try txn.put(events, BigEndian.bytes(position), value)
        }
        #expect(try verify().finding == .changed(position: position))
    }

    @Test func aDeletedRecordIsFound() throws {
        _ = try makeLog()
        try tamper { txn, events in try txn.delete(events, BigEndian.bytes(12)) }
        #expect(try verify().finding == .missing(position: 12, next: 13))
    }

    @Test func swappedRecordsAreFound() throws {
        _ = try makeLog()
        try tamper { txn, events in
            let a = try #require(try txn.get(events, BigEndian.bytes(4)))
            let b = try #require(try txn.get(events, BigEndian.bytes(5)))
            try txn.put(events, BigEndian.bytes(4), b)
            try txn.put(events, BigEndian.bytes(5), a)
        }
        #expect(try verify().finding == .reordered(position: 4, claims: 5))
    }

    @Test func aTruncatedLogIsFound() throws {
        _ = try makeLog()
        try tamper { txn, events in
            for p in 18...20 { try txn.delete(events, BigEndian.bytes(UInt64(p))) }
        }
        #expect(try verify().finding == .truncated(expected: 20, found: 17))
    }

    @Test func aRewrittenLogNoLongerExtendsAnOldDigest() throws {
        let digest = try makeLog()
        // Rewrite record 3 and recompute every later hash and the stored head,
        // so the log is consistent in itself; only the digest can tell.
        try tamper { txn, events in
            let chain = HashChain()
            var previous = Digest256(bytes: Array(try #require(try txn.get(events, BigEndian.bytes(2)))[0..<32]))!
            for p in UInt64(3)...20 {
                let value = try #require(try txn.get(events, BigEndian.bytes(p)))
                var record = try EventRecord(decoding: value, at: 32)
                if p == 3 { record.event.payload = CBORValue.textMap([("forged", .text("yes"))]).encoded() }
                let bytes = record.encoded()
                previous = chain.next(previous: previous, record: bytes)
                try txn.put(events, BigEndian.bytes(p), previous.bytes + bytes)
            }
        }
        // The stored tree was left as it was: its node over records 3 and 4
        // (level 1, index 1) is no longer their hash.
        #expect(try verify().finding == .treeNode(.mismatch(level: 1, index: 1)))
        let report = try verify(against: digest)
        guard case .digestMismatch(let position, let expected, _) = report.finding else {
            Issue.record("expected a digest mismatch, got \(String(describing: report.finding))")
            return
        }
        #expect(position == 20 && expected == digest.head)
    }

    @Test func aLogShorterThanTheDigestIsTruncated() throws {
        _ = try makeLog(count: 5)
        let future = LedgerDigest(position: 9, head: .zero)
        #expect(try verify(against: future).finding == .truncated(expected: 9, found: 5))
    }

    @Test func aLogThatGrewStillExtendsItsDigest() throws {
        let digest = try makeLog(count: 5)
        let log = try EventLog(directory: store)
        try log.append([SampleEvents.event(stream: UUID(), at: ManualClock().now())])
        let report = try log.verify(against: digest)
        #expect(report.isIntact)
        #expect(report.checked == 6)
    }

    @Test func theHeadIsHandedOutOnlyWhenItsLinkHolds() throws {
        let digest = try makeLog(count: 4)
        let log = try EventLog(directory: store)
        #expect(try log.read { try $0.verifiedHead() } == digest)
        log.close()
        try tamper { txn, events in
            var value = try #require(try txn.get(events, BigEndian.bytes(4)))
            value[value.count - 3] ^= 0x01
            try txn.put(events, BigEndian.bytes(4), value)
        }
        let reopened = try EventLog(directory: store)
        defer { reopened.close() }
        #expect(throws: HeadCheckError.self) { try reopened.read { try $0.verifiedHead() } }
    }
}
