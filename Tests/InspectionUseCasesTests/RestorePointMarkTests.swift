import Foundation
import InspectionStore
import LedgerCore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// A restore-point mark that cannot be read is still a mark, and its warning
/// says it is damaged: what an earlier check wrote into it is lost.
@Suite struct RestorePointMarkTests {
    static let damagedMarks: [(String, [UInt8])] = [
        ("not JSON", Array("{\"format\":".utf8)),
        ("JSON of another shape", Array(#"{"backup_at":"2026-05-01T10:00:00Z"}"#.utf8)),
        ("binary", [0x00, 0xFF, 0x13]),
    ]

    @Test(arguments: damagedMarks)
    func aDamagedMarkWarnsAndSaysItIsDamaged(_ name: String, _ bytes: [UInt8]) throws {
        let directory = TemporaryDirectory(prefix: "restore-mark")
        let home = LedgerDirectory(path: directory.path)
        try Data(bytes).write(to: URL(fileURLWithPath: home.restorePointPath))
        let point = try #require(RestorePoint.load(home), "\(name): a mark that does not read is still a mark")
        #expect(point.found == nil && point.uncheckable == nil, "\(name)")
        #expect(point.damage == "it is not a restore-point mark this jqc reads (\(bytes.count) bytes)", "\(name)")
        #expect(point.warning.contains("restore-point.json is damaged"), "\(name): \(point.warning)")
    }

    @Test func aMarkThatReadsIsNotDamaged() throws {
        let directory = TemporaryDirectory(prefix: "restore-mark")
        let home = LedgerDirectory(path: directory.path)
        try RestorePoint(device: UUID(), madeAt: Timestamp(microsecondsSinceEpoch: 0), records: 3).save(home)
        let point = try #require(RestorePoint.load(home))
        #expect(point.damage == nil)
        #expect(point.records == 3)
        #expect(!point.warning.contains("damaged"), "\(point.warning)")
        #expect(RestorePoint.load(LedgerDirectory(path: directory.appending("none"))) == nil)
    }
}
