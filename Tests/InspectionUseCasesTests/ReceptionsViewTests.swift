import Foundation
import InspectionDomain
import InspectionStore
import LMDB
import LedgerCore
@_spi(RawAppend) import LedgerStore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// The receptions view: what `receive` reads of the other devices instead
/// of walking the whole log. It must list exactly the log's receptions, so
/// that the pins read through it are the pins a walk of the log finds, and
/// a row that names no reception is damage that a rebuild cures.
@Suite struct ReceptionsViewTests {
    typealias Device = HandoverUseCaseTests.Device

    /// A receiver that got one file each from two senders, with its own
    /// records in between.
    static func receiverOfTwoFiles() throws -> (receiver: Device, senders: [Device]) {
        let receiver = try Device(actor: "Ben")
        var senders: [Device] = []
        for name in ["Ana", "Cy"] {
            let sender = try Device(actor: name)
            let id = try sender.startInspection()
            try sender.record([.setField(field: "Floors", to: .text("4"))], on: id)
            let file = sender.temporary.appending("share.json")
            _ = try Handover(ledger: sender.ledger, identity: sender.identity).write(
                inspection: id, to: nil, mode: .share, output: file, actor: sender.actor, clock: sender.clock)
            let own = try receiver.startInspection()
            try receiver.record([.setField(field: "Floors", to: .text("2"))], on: own)
            _ = try Reception(ledger: receiver.ledger, device: receiver.device).receive(
                file: file, actor: receiver.actor, clock: receiver.clock)
            senders.append(sender)
        }
        return (receiver, senders)
    }

    /// The positions of the log's `inspection.received` records, by a walk.
    static func walkedReceptions(_ ledger: InspectionLedger) throws -> [UInt64] {
        try ledger.log.read { reader in
            var positions: [UInt64] = []
            try reader.forEachRecord { record in
                if record.type == InspectionEventType.received.rawValue { positions.append(record.position) }
                return true
            }
            return positions
        }
    }

    @Test func theViewListsEveryReceptionAndThePinsAreTheWalksPins() throws {
        let (receiver, senders) = try Self.receiverOfTwoFiles()
        let listed = try receiver.ledger.readingReceptions { _, records in records.map(\.position) }
        let walked = try Self.walkedReceptions(receiver.ledger)
        #expect(walked.count == 2)
        #expect(listed == walked)

        let viewed = try receiver.ledger.readingReceptions { reader, records in
            try DevicePins.read(reader, own: receiver.device, receptionRecords: records)
        }
        let scanned = try receiver.ledger.log.read { try DevicePins.read($0, own: receiver.device) }
        #expect(Set(viewed.devices.keys) == Set(senders.map(\.device)))
        for sender in senders {
            let (a, b) = (try #require(viewed.devices[sender.device]), try #require(scanned.devices[sender.device]))
            #expect(a.keys == b.keys && a.checkpoints == b.checkpoints && a.receptions == 1 && a.leaves == b.leaves)
        }

        // A rebuild of the view writes the same rows the appends wrote.
        try receiver.ledger.views.rebuild(receiver.ledger.projections([.receptions]))
        #expect(try receiver.ledger.readingReceptions { _, records in records.map(\.position) } == walked)
    }

    /// Folded in partitions of the streams (each thread dealing its segment
    /// of the log to the others), a ledger with receptions from two other
    /// devices, their carried records read through each thread's own
    /// transaction, gets every view row a fold on one thread makes.
    @Test(arguments: [1, 2, 3, 5])
    func aRebuildInPartitionsWritesTheRowsOfOneFold(partitions: Int) throws {
        let (receiver, _) = try Self.receiverOfTwoFiles()
        let views = receiver.ledger.views
        let partitioned = try ProjectionSet(
            log: receiver.ledger.log, projections: InspectionView.all(), sharedTypes: views.sharedTypes,
            rebuildPartitions: partitions)
        let events = try receiver.ledger.log.read { try $0.count() }
        #expect(try partitioned.rebuild() == UInt64(events))
        let comparisons = try views.compare()
        #expect(comparisons.count == InspectionView.all().count)
        for comparison in comparisons {
            #expect(comparison.isCurrent, "\(comparison.name): \(comparison.tables)")
        }
        #expect(try receiver.ledger.readingReceptions { _, records in records.count } == 2)
    }

    /// Rows that a damaged or planted view could hold, checksum and all.
    static let plantedRows: [(name: String, key: @Sendable (_ walked: [UInt64]) -> [UInt8])] = [
        ("a position holding another record", { walked in BigEndian.bytes(walked[0] - 1) }),
        ("a position beyond the log", { _ in BigEndian.bytes(1_000_000) }),
        ("a key that is no position", { _ in [1, 2, 3] }),
    ]

    @Test(arguments: plantedRows.indices)
    func aRowNamingNoReceptionIsDamageThatARebuildCures(_ index: Int) throws {
        let (receiver, senders) = try Self.receiverOfTwoFiles()
        defer { withExtendedLifetime(senders) {} }
        let walked = try Self.walkedReceptions(receiver.ledger)
        let key = Self.plantedRows[index].key(walked)
        let name = TableName.View.receptions.name
        let table = try receiver.ledger.log.table(name)
        try receiver.ledger.log.write { writer in
            try writer.transaction.put(table, key, ViewRowChecksum.seal(table: name, key: key, value: []))
        }
        let damage = #expect(throws: ViewDamage.self, "\(Self.plantedRows[index].name)") {
            try receiver.ledger.log.read { try receiver.ledger.receptionRecords(in: $0) }
        }
        #expect(damage?.view == "receptions" && damage?.key == key)
        // The reading that `receive` does heals it: the planted row is gone.
        let healed = try receiver.ledger.readingReceptions { _, records in records.map(\.position) }
        #expect(healed == walked)
    }
}
