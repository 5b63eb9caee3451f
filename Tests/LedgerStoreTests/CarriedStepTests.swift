import Foundation
import LMDB
import LedgerCore
import LedgerTestSupport
import Testing

@_spi(RawAppend) @testable import LedgerStore

/// Step 7 of `verify --full` reads only the records the second thread
/// (`TreeCheck`) found to reference carried records while it checked every
/// record: which those are, across its batches, and that a damaged table is
/// still named at the reception that references it.
@Suite struct CarriedStepTests {
    let directory = TemporaryDirectory()
    var store: String { directory.appending("store") }

    /// A record type and schema version, and whether step 7 must read it.
    struct Kind: Sendable, CustomStringConvertible {
        var type: String
        var schemaVersion: Int
        var referencesCarried: Bool
        var description: String { "\(type) v\(schemaVersion)" }
    }

    static let kinds: [Kind] = [
        Kind(type: "inspection.received", schemaVersion: 2, referencesCarried: true),
        Kind(type: "inspection.received", schemaVersion: 3, referencesCarried: true),
        // Version 1 embeds the records' bytes: nothing to look up.
        Kind(type: "inspection.received", schemaVersion: 1, referencesCarried: false),
        Kind(type: "inspection.receive", schemaVersion: 2, referencesCarried: false),
        Kind(type: "inspection.received.", schemaVersion: 2, referencesCarried: false),
        Kind(type: "inspection.receivee", schemaVersion: 2, referencesCarried: false),
        Kind(type: "test.noted", schemaVersion: 2, referencesCarried: false),
    ]

    /// A record of `kind` whose payload references `leaves` as a version-2
    /// reception does (`records[].leaf`).
    static func event(_ kind: Kind, leaves: [Digest256], stream: UUID, at time: Timestamp) -> PendingEvent {
        let records = CBORValue.array(leaves.map { .textMap([("leaf", .bytes($0.bytes))]) })
        return PendingEvent(
            stream: stream, type: kind.type, schemaVersion: kind.schemaVersion, actor: SampleEvents.actor,
            device: SampleEvents.device, recordedAt: time, payload: CBORValue.textMap([("records", records)]).encoded())
    }

    /// `filler` plain records, then one of each kind (each referencing a
    /// carried record held in the table), then `filler` more; answers the
    /// positions of those that reference carried records.
    func makeLog(filler: Int, missing: Kind? = nil) throws -> (receptions: [UInt64], missingAt: UInt64?) {
        let log = try EventLog(directory: store)
        defer { log.close() }
        let clock = ManualClock()
        let stream = UUID()
        var receptions: [UInt64] = []
        var missingAt: UInt64?
        try log.write { writer in
            for i in 0..<filler {
                clock.advance(microseconds: 10)
                _ = try writer.append(SampleEvents.event(stream: stream, note: "before \(i)", at: clock.now()))
            }
            for kind in Self.kinds {
                clock.advance(microseconds: 10)
                let carried = SampleEvents.event(stream: UUID(), note: "carried by \(kind)", at: clock.now())
                let bytes = EventRecord(position: 1, streamVersion: 1, event: carried).encoded()
                let leaf = writer.reader.chain.leaf(ofRecord: bytes)
                let lost = kind.type == missing?.type && kind.schemaVersion == missing?.schemaVersion
                if !lost { try writer.keepCarried(bytes) }
                let outcome = try writer.append(Self.event(kind, leaves: [leaf], stream: stream, at: clock.now()))
                if kind.referencesCarried { receptions.append(outcome.position) }
                if lost { missingAt = outcome.position }
            }
            for i in 0..<filler {
                clock.advance(microseconds: 10)
                _ = try writer.append(SampleEvents.event(stream: stream, note: "after \(i)", at: clock.now()))
            }
        }
        return (receptions, missingAt)
    }

    func readOnlyLog() throws -> EventLog {
        var options = Environment.Options()
        options.readOnly = true
        return try EventLog(directory: store, options: options)
    }

    /// Within one batch of the second thread, and past its first batch
    /// (4,096 records); the records' own checks made by either thread.
    @Test(arguments: [0, 5_000], [TreeCheck.Placement.walk, .thread])
    func theSecondThreadFindsExactlyTheRecordsThatReferenceCarriedOnes(
        filler: Int, ownChecks: TreeCheck.Placement
    ) throws {
        let made = try makeLog(filler: filler)
        let log = try readOnlyLog()
        defer { log.close() }
        let walk = try log.read { reader in try EventLog.walk(reader, digest: nil, ownChecks: ownChecks) }
        #expect(walk.finding == nil)
        #expect(walk.receptions == made.receptions)
        #expect(made.receptions.count == 2)
        #expect(try log.verify().isIntact)
    }

    /// A carried record missing from the table is named at the reception
    /// that references it, whichever reception (only those step 7 reads
    /// can name one).
    @Test(arguments: kinds)
    func aMissingCarriedRecordIsNamedAtItsReception(_ kind: Kind) throws {
        let made = try makeLog(filler: 4_200, missing: kind)
        let log = try readOnlyLog()
        defer { log.close() }
        let report = try log.verify()
        if kind.referencesCarried {
            guard case .carried(.missing(let position, _))? = report.finding else {
                Issue.record("\(kind): expected a missing carried record, found \(String(describing: report.finding))")
                return
            }
            #expect(position == made.missingAt)
        } else {
            #expect(report.isIntact, "\(kind): \(String(describing: report.finding))")
        }
    }
}
