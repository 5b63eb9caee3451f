import Foundation
import LMDB
import LedgerCore
import LedgerTestSupport
import Testing

@testable import LedgerStore

@Suite struct EventLogTests {
    let directory = TemporaryDirectory()
    let clock = ManualClock()

    func openLog(_ options: Environment.Options = .init()) throws -> EventLog {
        try EventLog(directory: directory.appending("store"), options: options)
    }

    @Test func appendedEventsReadBackExactly() throws {
        let log = try openLog()
        let stream = UUID()
        var events: [PendingEvent] = []
        for i in 0..<5 {
            clock.advance(microseconds: 1)  // a microsecond apart: must stay distinct
            events.append(SampleEvents.event(stream: stream, note: "note \(i)", at: clock.now()))
        }
        let outcomes = try log.append(events)
        #expect(outcomes.map(\.position) == [1, 2, 3, 4, 5])
        #expect(outcomes.map(\.streamVersion) == [1, 2, 3, 4, 5])
        for (i, event) in events.enumerated() {
            let record = try #require(try log.record(at: UInt64(i + 1)))
            #expect(record.event == event)
            #expect(record.recordedAt.microsecondsSinceEpoch == event.recordedAt.microsecondsSinceEpoch)
        }
        #expect(try log.head().position == 5)
    }

    @Test func reappendingAStoredEventIsANoOpThatAnswersItsPosition() throws {
        let log = try openLog()
        let event = SampleEvents.event(stream: UUID(), at: clock.now())
        let first = try log.append([event])
        let other = SampleEvents.event(stream: UUID(), at: clock.now())
        try log.append([other])
        let again = try log.append([event])
        #expect(again == [AppendOutcome(position: first[0].position, streamVersion: 1, wasAlreadyStored: true)])
        #expect(try log.head().position == 2)
    }

    @Test func reusingAnEventIDWithOtherContentIsRefused() throws {
        let log = try openLog()
        let event = SampleEvents.event(stream: UUID(), note: "one", at: clock.now())
        try log.append([event])
        var changed = event
        changed.payload = CBORValue.text("two").encoded()
        #expect(throws: LedgerError.self) { try log.append([changed]) }
        #expect(try log.head().position == 1)
    }

    @Test func staleExpectedVersionIsRefusedAndNothingIsWritten() throws {
        let log = try openLog()
        let stream = UUID()
        try log.append([SampleEvents.event(stream: stream, at: clock.now())], expectedVersions: [stream: 0])
        try log.append([SampleEvents.event(stream: stream, at: clock.now())], expectedVersions: [stream: 1])
        do {
            try log.append(
                [
                    SampleEvents.event(stream: stream, at: clock.now()),
                    SampleEvents.event(stream: UUID(), at: clock.now()),
                ],
                expectedVersions: [stream: 1])
            Issue.record("a stale version was accepted")
        } catch LedgerError.versionConflict(let s, let expected, let actual) {
            #expect(s == stream && expected == 1 && actual == 2)
        }
        #expect(try log.head().position == 2)
    }

    @Test func batchIsAllOrNothing() throws {
        let log = try openLog()
        var bad = SampleEvents.event(stream: UUID(), at: clock.now())
        bad.payload = [0x19, 0x01]  // a truncated CBOR item
        #expect(throws: LedgerError.self) {
            try log.append([SampleEvents.event(stream: UUID(), at: clock.now()), bad])
        }
        #expect(try log.head().position == 0)
        #expect(try log.verify().isIntact)
    }

    @Test func streamsReadThroughTheirIndex() throws {
        let log = try openLog()
        let a = UUID()
        let b = UUID()
        for i in 0..<10 {
            try log.append([SampleEvents.event(stream: i % 3 == 0 ? a : b, note: "\(i)", at: clock.now())])
        }
        let streamA = try log.records(inStream: a)
        #expect(streamA.map(\.position) == [1, 4, 7, 10])
        #expect(streamA.map(\.streamVersion) == [1, 2, 3, 4])
        #expect(try log.records(inStream: b).count == 6)
        #expect(try log.records(inStream: UUID()).isEmpty)
        #expect(try log.read { try $0.version(ofStream: a) } == 4)
        #expect(try log.read { try $0.records(inStream: a, fromVersion: 3) }.map(\.position) == [7, 10])
    }

    @Test func theMapIsFixedAndLarge() throws {
        let log = try openLog()
        #expect(try log.environment.info().mapSize == Environment.defaultMapSize)
        #expect(Environment.defaultMapSize == 1 << 40)
    }

    @Test func aFullMapIsAnErrorThatCommitsNothing() throws {
        var options = Environment.Options()
        options.mapSize = 256 << 10  // 256 KiB: a few batches fill it
        let log = try openLog(options)
        let big = String(repeating: "x", count: 4000)
        var stored: UInt64 = 0
        var failure: (any Error)?
        for _ in 0..<40 {
            do {
                try log.append((0..<10).map { _ in SampleEvents.event(stream: UUID(), note: big, at: clock.now()) })
                stored += 10
            } catch {
                failure = error
                break
            }
        }
        let error = try #require(failure)
        #expect({ if case LedgerError.mapFull = error { true } else { false } }(), "\(error)")
        // The failed batch left nothing: the head is the last whole batch.
        #expect(try log.head().position == stored)
        #expect(try log.verify().isIntact)
    }

    @Test func ledgerFilesArePrivate() throws {
        _ = try openLog()
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.appending("store/data.mdb"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let dir = try FileManager.default.attributesOfItem(atPath: directory.appending("store"))
        #expect((dir[.posixPermissions] as? Int) == 0o700)
    }

    @Test func readOnlyOpenOfAMissingLedgerSaysSo() {
        var options = Environment.Options()
        options.readOnly = true
        #expect {
            _ = try openLog(options)
        } throws: { error in
            guard case LedgerError.noLedger = error else { return false }
            return true
        }
    }
}
