import Foundation
import InspectionDomain
import InspectionStore
import LMDB
import LedgerCore
import LedgerStore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// A store whose `carried` table lost or changed an entry: `verify --full`
/// names it, and reading the inspection says what is damaged (no crash, no
/// record silently left out).
@Suite struct CarriedTableDamageTests {
    enum Damage: String, CaseIterable, Sendable {
        case removed
        case changed
    }

    @Test(arguments: Damage.allCases)
    func aDamagedEntryIsFoundByVerifyAndNamedByTheFold(_ damage: Damage) throws {
        let (_, ana, ben, id, _) = try SharedFileSizeTests.exchange(trips: 2)
        defer { withExtendedLifetime(ana) {} }
        #expect(try ben.ledger.log.verify().isIntact)
        // An entry the last reception references.
        let leaf = try ben.ledger.log.read { reader -> Digest256 in
            let reception = try #require(
                try reader.records(inStream: id).last { $0.type == InspectionEventType.received.rawValue })
            guard case .received(let received) = try InspectionEvent.decode(reception) else {
                throw CocoaError(.coderReadCorrupt)
            }
            return try #require(received.records.first?.leaf)
        }
        ben.ledger.close()
        let environment = try Environment(directory: ben.directory.storePath)
        let table = try #require(try environment.table(TableName.carried))
        try environment.write { txn in
            switch damage {
            case .removed:
                _ = try txn.delete(table, leaf.bytes)
            case .changed:
                var bytes = try #require(try txn.get(table, leaf.bytes))
                bytes[bytes.count / 2] ^= 0x01
                try txn.put(table, leaf.bytes, bytes)
            }
        }
        environment.close()
        let reopened = try InspectionLedger(
            storePath: ben.directory.storePath, photosPath: ben.directory.photosPath, access: .creating)
        defer { reopened.close() }
        let report = try reopened.log.verify()
        let finding = try #require(report.finding)
        #expect(finding.kind == (damage == .removed ? .carriedMissing : .carriedDamaged))
        #expect(finding.key == "carried[\(leaf.hex)]")
        #expect(finding.description.contains(leaf.hex))
        #expect(throws: InspectionStoreError.self) { try reopened.state(of: id) }
        do {
            _ = try reopened.state(of: id)
        } catch {
            #expect("\(error)".contains(leaf.hex), "\(error)")
            #expect("\(error)".contains("jqc verify --full"), "\(error)")
        }
    }
}
