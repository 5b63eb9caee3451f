import Foundation
import InspectionDomain
import LMDB
import LedgerCore
import LedgerStore
import LedgerTestSupport
import Testing

@testable import InspectionStore

/// Damaged view rows are found, never returned, and rebuilt; one view is
/// rebuilt without folding what it does not need.
@Suite struct ViewIntegrityTests {
    let directory = TemporaryDirectory(prefix: "view-integrity")

    /// Flips the lowest bit of the byte at `offset` from the end of the
    /// stored value (before the checksum, so the CBOR still decodes).
    static func flip(_ table: String, key: [UInt8], in ledger: InspectionLedger) throws {
        let handle = try ledger.log.table(table)
        try ledger.log.environment.write { txn in
            var value = try #require(try txn.get(handle, key))
            value[value.count - ViewRowChecksum.length - 2] ^= 0x01
            try txn.put(handle, key, value)
        }
    }

    @Test func aDamagedRowIsRebuiltWhenWritableAndNamedWhenReadOnly() throws {
        let recorder = try Recorder(directory: directory)
        let id = try recorder.start(template: "11")
        let expected = try #require(try recorder.ledger.summary(of: id))
        try Self.flip("view:inspections", key: id.bytes, in: recorder.ledger)

        // Writable: the view is rebuilt, announced, and the right row read.
        let notices = Locked<[String]>([])
        recorder.ledger.close()
        let writable = try InspectionLedger(
            storePath: directory.appending("store"), photosPath: directory.path,
            notice: { message in notices.withLock { $0.append(message) } })
        #expect(try writable.summaries() == [expected])
        #expect(notices.value.count == 1)
        #expect(notices.value.first?.hasPrefix("the inspections view is damaged (row \(Hex.encode(id.bytes))") == true)

        // Read-only: the damage is the error, with what to do.
        try Self.flip("view:inspections", key: id.bytes, in: writable)
        writable.close()
        var options = Environment.Options()
        options.readOnly = true
        let readOnly = try InspectionLedger(
            storePath: directory.appending("store"), photosPath: directory.path, options: options)
        defer { readOnly.close() }
        #expect(throws: ViewDamage(view: "inspections", table: "view:inspections", key: id.bytes)) {
            try readOnly.summaries()
        }
        #expect(
            "\(ViewDamage(view: "inspections", table: "view:inspections", key: id.bytes))".hasSuffix(
                "run 'jqc rebuild inspections' to rebuild it from the log."))
        let comparison = try #require(try readOnly.compareViews([.inspections]).first)
        #expect(comparison.tables.first?.damaged == [id.bytes])
    }

    @Test func readOnlyRowsOfAnotherVersionAreCalledStaleNotDamaged() throws {
        let recorder = try Recorder(directory: directory)
        let id = try recorder.start(template: "11")
        try Self.flip("view:inspections", key: id.bytes, in: recorder.ledger)
        // As if an older jqc had written the view (its rows had no checksum).
        let meta = try recorder.ledger.log.table("views:meta")
        let head = try recorder.ledger.log.head().position
        try recorder.ledger.log.environment.write { txn in
            try txn.put(meta, Array("inspections".utf8), BigEndian.bytes(1) + BigEndian.bytes(head))
        }
        recorder.ledger.close()
        var options = Environment.Options()
        options.readOnly = true
        let readOnly = try InspectionLedger(
            storePath: directory.appending("store"), photosPath: directory.path, options: options)
        defer { readOnly.close() }
        do {
            _ = try readOnly.summaries()
            Issue.record("a row of another version was read")
        } catch let error as InspectionStoreError {
            let stale = { if case .staleView("inspections", stored: 1, code: _) = error { true } else { false } }()
            #expect(stale, "\(error)")
        }
    }

    @Test func aDamagedTemplateRowIsRebuiltBeforeARecordingUsesIt() throws {
        let recorder = try Recorder(directory: directory)
        let first = try recorder.start(template: "11")
        let hash = try #require(try recorder.ledger.state(of: first)?.templateHash)
        try Self.flip("view:templates", key: Array(hash.utf8), in: recorder.ledger)
        // A second start reads the pinned template through the views.
        let second = try recorder.start(template: "11")
        #expect(try recorder.ledger.state(of: second)?.template?.contentHash == hash)
        #expect(try recorder.ledger.compareViews().allSatisfy { $0.isEmpty })
    }

    @Test func rebuildingTheTemplatesOrDraftsViewFoldsNoInspection() throws {
        let recorder = try Recorder(directory: directory)
        let id = try recorder.start(template: "11")
        // A record no fold can read ({"x": 1} as a field_set): only views that
        // fold inspections fail on it.
        try recorder.ledger.log.append([
            PendingEvent(
                stream: id, type: InspectionEventType.fieldSet.rawValue, schemaVersion: 2, actor: recorder.actor,
                device: recorder.device, recordedAt: recorder.clock.now(), payload: [0xA1, 0x61, 0x78, 0x01])
        ])
        let views = recorder.ledger.views
        let only: (InspectionView.Kind) -> [any Projection] = { kind in recorder.ledger.projections([kind]) }
        let events = try recorder.ledger.log.head().position
        #expect(try views.rebuild(only(.templates)) == events)
        #expect(try views.rebuild(only(.drafts)) == events)
        #expect(throws: InspectionStoreError.self) { try views.rebuild(only(.inspections)) }
    }
}
