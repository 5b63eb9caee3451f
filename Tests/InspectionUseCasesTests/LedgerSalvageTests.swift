import Foundation
import InspectionStore
import LedgerCore
import LedgerStore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// Salvage without `jqc`: the reader's raw output checked line by line, and a
/// whole salvage into a new ledger through the normal append.
@Suite struct LedgerSalvageTests {
    /// The lines `jqc salvage-read` prints for a store, made in-process;
    /// with `carried`, the `carried` table's entries after the events.
    static func rawOutput(of store: String, carried: Bool = false) throws -> [String] {
        var lines: [String] = []
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        _ = try EventLog.rawEntries(ofStoreAt: store) { count in
            lines.append("# \(count)")
        } entry: { position, value in
            lines.append("\(position ?? 0) " + hex(value))
        } carried: { key, value in
            if carried { lines.append(SalvageReading.carriedPrefix + hex(key) + " " + hex(value)) }
        }
        return lines
    }

    @Test func aSalvageOfSharedCopiesKeepsTheCarriedTable() throws {
        let (_, ana, ben, id, _) = try SharedFileSizeTests.exchange(trips: 2)
        defer { withExtendedLifetime(ana) {} }
        let lines = try Self.rawOutput(of: ben.directory.storePath, carried: true)
        let count = try ben.ledger.log.read { try $0.carriedCount() }
        #expect(count > 0)
        var damaged = lines
        let index = try #require(damaged.lastIndex { $0.hasPrefix(SalvageReading.carriedPrefix) })
        damaged[index] += "00"
        let reading = Self.reading(damaged)
        #expect(reading.carried.count == count - 1 && reading.carriedLeftOut == 1)
        let elsewhere = TemporaryDirectory(prefix: "salvaged")
        let target = LedgerDirectory(path: elsewhere.appending("salvaged"))
        let outcome = try LedgerSalvage(from: ben.directory, into: target).run { _ in Self.reading(lines) }
        #expect(outcome.summary.head == (try ben.ledger.log.head()))
        let salvaged = try InspectionLedger(
            storePath: target.storePath, photosPath: target.photosPath, access: .reading)
        defer { salvaged.close() }
        #expect(try salvaged.log.read { try $0.carriedCount() } == count)
        #expect(try salvaged.log.verify().isIntact)
        #expect(try salvaged.state(of: id)?.values == (try ben.ledger.state(of: id)?.values))
    }

    static func reading(_ lines: [String], stopped: String? = nil) -> SalvageReading {
        SalvageReading(output: Data((lines.joined(separator: "\n") + "\n").utf8), stopped: stopped)
    }

    /// A change to one line of the output, and what the reading must say.
    struct Damage: Sendable, CustomTestStringConvertible {
        let name: String
        let change: @Sendable ([String]) -> [String]
        let kept: Int
        let breakSays: String?
        var testDescription: String { name }
    }

    static let damages: [Damage] = [
        Damage(name: "intact", change: { $0 }, kept: 4, breakSays: nil),
        Damage(
            name: "record 2 changed",
            change: { lines in
                var lines = lines
                var chars = Array(lines[2])
                let last = chars.count - 1
                chars[last] = chars[last] == "0" ? "1" : "0"
                lines[2] = String(chars)
                return lines
            }, kept: 1, breakSays: "record 2 fails its chain check"),
        Damage(
            name: "record 2 left out", change: { lines in lines.enumerated().filter { $0.offset != 2 }.map(\.element) },
            kept: 1, breakSays: "position 2 is missing"),
        Damage(
            name: "garbage", change: { lines in [lines[0], lines[1], "2 zz"] + lines.dropFirst(3) }, kept: 1,
            breakSays: "the entry after position 1 could not be read"),
        Damage(
            name: "the reader stopped",
            change: { lines in [lines[0], lines[1], "! jqc: the store is damaged: page 7 is bad. Nothing was changed."]
            },
            kept: 1, breakSays: "the store could not be read past position 1: page 7 is bad"),
    ]

    @Test(arguments: damages) func theReadingKeepsTheVerifiedPrefix(_ damage: Damage) throws {
        let audited = try AuditAssemblyTests.Audited()
        let lines = try Self.rawOutput(of: audited.directory.storePath)
        // The template pinned, then the inspection's three records.
        #expect(lines.first == "# 4")
        let reading = Self.reading(damage.change(lines))
        #expect(reading.events.count == damage.kept)
        #expect(reading.storedCount == 4)
        if let says = damage.breakSays {
            #expect(reading.firstBreak?.contains(says) == true, "\(reading.firstBreak ?? "no break")")
        } else {
            #expect(reading.firstBreak == nil)
        }
    }

    @Test func aReaderThatDiedWithoutAWordIsNamed() throws {
        let audited = try AuditAssemblyTests.Audited()
        let lines = try Self.rawOutput(of: audited.directory.storePath)
        let reading = Self.reading(Array(lines.prefix(2)), stopped: "the reader was ended by signal 6")
        #expect(reading.events.count == 1)
        #expect(reading.firstBreak == "the store could not be read past position 1: the reader was ended by signal 6")
    }

    @Test func aSalvageBuildsTheSameChainAndItsViews() throws {
        let audited = try AuditAssemblyTests.Audited()
        let elsewhere = TemporaryDirectory(prefix: "salvaged")
        let target = LedgerDirectory(path: elsewhere.appending("salvaged"))
        let outcome = try LedgerSalvage(from: audited.directory, into: target).run { store in
            Self.reading(try Self.rawOutput(of: store))
        }
        #expect(outcome.summary.events == 4)
        #expect(!outcome.metaPagesRepaired)
        let source = try EventLog(directory: audited.directory.storePath, access: .reading)
        defer { source.close() }
        #expect(outcome.summary.head == (try source.head()))
        let salvaged = try InspectionLedger(
            storePath: target.storePath, photosPath: target.photosPath, access: .reading)
        defer { salvaged.close() }
        let original = try InspectionLedger(
            storePath: audited.directory.storePath, photosPath: audited.directory.photosPath, access: .reading)
        defer { original.close() }
        let state = try #require(try salvaged.state(of: audited.inspection))
        #expect(state == (try original.state(of: audited.inspection)))
        #expect(try salvaged.summaries().map(\.id) == [audited.inspection])
    }

    @Test func nothingVerifiedWritesNothing() throws {
        let audited = try AuditAssemblyTests.Audited()
        let elsewhere = TemporaryDirectory(prefix: "salvaged")
        let target = LedgerDirectory(path: elsewhere.appending("salvaged"))
        #expect(throws: SalvageError.self) {
            try LedgerSalvage(from: audited.directory, into: target).run { _ in Self.reading(["# 3", "1 00"]) }
        }
        #expect(!FileManager.default.fileExists(atPath: target.storePath))
    }
}
