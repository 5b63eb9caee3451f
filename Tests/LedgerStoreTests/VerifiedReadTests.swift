import Foundation
import LMDB
import LedgerCore
import LedgerTestSupport
import Testing

@testable import LedgerStore

/// Reads check each record against its chain link; nothing is appended on a
/// changed head.
@Suite struct VerifiedReadTests {
    let directory = TemporaryDirectory()
    let clock = ManualClock()
    let stream = UUID()
    var store: String { directory.appending("store") }

    func makeLog(events: Int) throws -> EventLog {
        let log = try EventLog(directory: store)
        try log.append((0..<events).map { i in SampleEvents.event(stream: stream, note: "note \(i)", at: clock.now()) })
        return log
    }

    /// Changes the last byte of the record at `position` behind the log's back.
    func change(_ log: EventLog, at position: UInt64) throws {
        let events = try #require(try log.environment.table("events"))
        try log.environment.write { txn in
            var value = try #require(try txn.get(events, BigEndian.bytes(position)))
            value[value.count - 1] ^= 0x01
            try txn.put(events, BigEndian.bytes(position), value)
        }
    }

    func isBrokenChain(_ error: any Error, at position: UInt64) -> Bool {
        guard case LedgerError.brokenChain(let found, _) = error else { return false }
        return found == position && "\(error)".contains("jqc verify")
    }

    @Test func aChangedRecordIsNotReturned() throws {
        let log = try makeLog(events: 8)
        try change(log, at: 5)
        #expect { try log.record(at: 5) } throws: { isBrokenChain($0, at: 5) }
        #expect { try log.records(inStream: stream) } throws: { isBrokenChain($0, at: 5) }
        // Its neighbours still verify: the next record links to the stored hash.
        #expect(try log.record(at: 4)?.position == 4)
        #expect(try log.record(at: 6)?.position == 6)
        #expect(try log.read { try $0.unverifiedRecord(at: 5) }?.position == 5)
    }

    @Test func aVerifyingScanStopsAtTheChangedRecord() throws {
        let log = try makeLog(events: 8)
        try change(log, at: 5)
        var seen: [UInt64] = []
        #expect {
            try log.read { reader in
                try reader.forEachRecord(verifyingLinks: true) { record in
                    seen.append(record.position)
                    return true
                }
            }
        } throws: { isBrokenChain($0, at: 5) }
        #expect(seen == [1, 2, 3, 4])
        var fromSix: [UInt64] = []
        try log.read { reader in
            try reader.forEachRecord(from: 6, verifyingLinks: true) { record in
                fromSix.append(record.position)
                return true
            }
        }
        #expect(fromSix == [6, 7, 8])
    }

    @Test func nothingIsAppendedOnAChangedHead() throws {
        let log = try makeLog(events: 3)
        try change(log, at: 3)
        #expect {
            try log.append([SampleEvents.event(stream: stream, note: "more", at: clock.now())])
        } throws: { isBrokenChain($0, at: 3) }
        #expect(try log.read { try $0.count() } == 3)
        log.close()
        var options = Environment.Options()
        options.create = false
        #expect { try EventLog(directory: store, options: options) } throws: { isBrokenChain($0, at: 3) }
        options.readOnly = true
        // A read-only open still works, so that verify can say what happened.
        let reader = try EventLog(directory: store, options: options)
        #expect(try reader.verify().finding != nil)
        reader.close()
    }
}
