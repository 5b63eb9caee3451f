import Foundation
import InspectionDomain
import LMDB
import LedgerCore
@_spi(RawAppend) import LedgerStore
import LedgerTestSupport
import Testing

@_spi(RawAppend) @testable import InspectionStore

/// Recipe 3 of `docs/developer-guide.md`, followed on a small example: a
/// projection that counts the inspections started at each facility.
final class StartsByFacility: Projection, Sendable {
    // Step 1: its name and tables.
    let name = "starts_by_facility"
    static let table = ViewTable("starts_by_facility")
    var tableNames: [ViewTable] { [Self.table] }
    // Step 4: its version.
    let version: Int
    // Step 3: it reads `inspection.started` alone.
    var usesPreparedRecords: Bool { false }

    init(version: Int = 1) { self.version = version }

    static func facility(of record: EventRecord) throws -> String? {
        guard record.type == InspectionEventType.started.rawValue,
            case .started(let started) = try InspectionEvent.decode(record)
        else { return nil }
        return started.facilityID
    }

    // Step 2: one record, in the append's transaction, through `context.put`.
    func apply(_ record: EventRecord, in context: ProjectionContext) throws {
        guard let facility = try Self.facility(of: record) else { return }
        let key = Array(facility.utf8)
        var count: UInt64 = 0
        if let stored = try context.transaction.get(context.table(Self.table), key) {
            let value = try ViewRowChecksum.open(view: name, table: Self.table.name, key: key, stored: stored)
            count = BigEndian.uint64(value) ?? 0
        }
        try context.put(Self.table, key, BigEndian.bytes(count + 1))
    }

    // Step 3: the whole log, folded in memory, then written; each
    // inspection counts on its own, so the fold runs in partitions of the
    // streams, merged by adding up.
    func makeRebuilder(scratch: ProjectionScratch) -> any ProjectionRebuilder { Rebuilder() }
    var foldsByStream: Bool { true }

    struct Rebuilder: ProjectionRebuilder {
        var counts: [String: UInt64] = [:]

        mutating func consume(_ record: EventRecord) throws {
            if let facility = try StartsByFacility.facility(of: record) { counts[facility, default: 0] += 1 }
        }

        mutating func absorb(_ other: any ProjectionRebuilder) throws {
            guard let other = other as? Rebuilder else { return }
            counts.merge(other.counts, uniquingKeysWith: +)
        }

        func write(in context: ProjectionContext) throws {
            for (facility, count) in counts.sorted(by: { $0.key < $1.key }) {
                try context.put(StartsByFacility.table, Array(facility.utf8), BigEndian.bytes(count))
            }
        }
    }

    // Step 5: the query, every row checked.
    func counts(in log: EventLog) throws -> [String: UInt64] {
        let table = try log.table(Self.table.name)
        return try log.read { reader in
            var counts: [String: UInt64] = [:]
            try reader.transaction.forEach(table) { key, stored in
                let value = try ViewRowChecksum.open(view: name, table: Self.table.name, key: key, stored: stored)
                counts[String(decoding: key, as: UTF8.self)] = BigEndian.uint64(value)
                return true
            }
            return counts
        }
    }
}

@Suite struct DeveloperGuideTests {
    let directory = TemporaryDirectory(prefix: "guide")

    @Test func aSampleProjectionIsRegisteredRebuiltAndQueried() throws {
        let recorder = try Recorder(directory: directory)
        for facility in ["101", "101", "102"] { _ = try recorder.start(template: "11", facility: facility) }
        let log = recorder.ledger.log

        // Step 6: registered beside the inspection views, it is stale (never built)…
        let sample = StartsByFacility()
        let views = try ProjectionSet(
            log: log, projections: InspectionView.all() + [sample], sharedTypes: InspectionFold.sharedTypes)
        #expect(try views.staleProjections().map(\.name) == ["starts_by_facility"])
        var announced: [String] = []
        // …and rebuilt alone, announced as the CLI announces it.
        let rebuilt = try views.rebuildStale(announce: { announced.append($0) })
        #expect(rebuilt.map(\.name) == ["starts_by_facility"])
        #expect(announced == ["rebuilding the starts_by_facility view (never built): 4 events…"])
        #expect(try sample.counts(in: log) == ["101": 2, "102": 1])

        // Appends keep it up to date, in the same transaction.
        let template = try #require(try recorder.ledger.reference.template(id: "11"))
        let id = UUID()
        // One template.pinned and three starts so far; this start is the fifth event.
        let events = try InspectionState(id: id).decide(
            .start(
                StartInspection(
                    template: template, templateAlreadyPinned: true, facilityID: "102",
                    facilityName: "Harbor Tower")))
        let appended = try views.append(
            events.map {
                $0.pending(stream: id, actor: recorder.actor, device: recorder.device, recordedAt: recorder.clock.now())
            },
            expectedVersions: [id: 0])
        #expect(appended.map(\.wasAlreadyStored) == [false])
        #expect(try sample.counts(in: log) == ["101": 2, "102": 2])
        #expect(try views.staleProjections().isEmpty)
        // Step 7: the incremental rows are the rebuilt ones.
        #expect(try views.compare().allSatisfy { $0.isEmpty })

        // Step 4: a new version of it is stale, though its rows are the same.
        let bumped = StartsByFacility(version: 2)
        let next = try ProjectionSet(log: log, projections: [bumped])
        #expect(try next.staleProjections().map(\.name) == ["starts_by_facility"])
        let comparison = try #require(try next.compare().first)
        #expect(comparison.isEmpty && comparison.status.isStale)
        #expect(comparison.status.storedVersion == 1 && comparison.status.codeVersion == 2)
        announced = []
        try next.rebuildStale(announce: { announced.append($0) })
        #expect(announced == ["rebuilding the starts_by_facility view after an upgrade: 5 events…"])
        #expect(try next.status().first?.isStale == false)
        #expect(try bumped.counts(in: log) == ["101": 2, "102": 2])
    }
}
