import Foundation
import LedgerCore
import LedgerTestSupport
import Testing

@testable import LMDB
@testable import LedgerStore

/// Opening a store defensively: nothing is created without `create`, a
/// foreign environment is refused untouched, and the pre-flight check of
/// `data.mdb` names damage before LMDB maps the file.
@Suite struct StoreOpeningTests {
    let directory = TemporaryDirectory()
    let clock = ManualClock()
    var store: String { directory.appending("store") }

    static var existingOnly: Environment.Options {
        var options = Environment.Options()
        options.create = false
        return options
    }

    static var readOnly: Environment.Options {
        var options = Environment.Options()
        options.readOnly = true
        return options
    }

    func makeLedger(events: Int = 6) throws {
        let log = try EventLog(directory: store)
        try log.append((0..<events).map { i in SampleEvents.event(stream: UUID(), note: "note \(i)", at: clock.now()) })
        log.close()
    }

    func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    func patch(_ offset: Int, _ transform: (UInt8) -> UInt8) throws {
        var data = try bytes(store + "/data.mdb")
        data[offset] = transform(data[offset])
        try data.write(to: URL(fileURLWithPath: store + "/data.mdb"))
    }

    @Test(arguments: [existingOnly, readOnly])
    func aMissingStoreIsReportedAndNotCreated(options: Environment.Options) throws {
        #expect(throws: LedgerError.self) { try EventLog(directory: store, options: options) }
        #expect(!FileManager.default.fileExists(atPath: store))
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: false)
        #expect {
            try EventLog(directory: store, options: options)
        } throws: { error in
            guard case LedgerError.noLedger = error else { return false }
            return true
        }
        #expect(!FileManager.default.fileExists(atPath: store + "/data.mdb"))
    }

    @Test(arguments: [existingOnly, readOnly])
    func aForeignEnvironmentIsRefusedUntouched(options: Environment.Options) throws {
        let foreign = try Environment(directory: store)
        let table = try #require(try foreign.table("customers"))
        try foreign.write { txn in try txn.put(table, Array("k".utf8), Array("v".utf8)) }
        foreign.close()
        let before = try bytes(store + "/data.mdb")
        #expect {
            try EventLog(directory: store, options: options)
        } throws: { error in
            guard case LedgerError.notALedger = error else { return false }
            return "\(error)".contains("no 'meta' table")
        }
        #expect(try bytes(store + "/data.mdb") == before)
    }

    @Test func aLedgerOpensReadOnlyWithoutWriting() throws {
        try makeLedger()
        let before = try bytes(store + "/data.mdb")
        let log = try EventLog(directory: store, options: Self.readOnly)
        #expect(try log.head().position == 6)
        // A read-only store does not make a table it lacks: there is no such table to read.
        let error = #expect(throws: LedgerError.self) { try log.table("view:new") }
        guard case .noLedger(let path)? = error else {
            Issue.record("\(String(describing: error)) is not noLedger")
            return
        }
        #expect(path == store)
        log.close()
        #expect(try bytes(store + "/data.mdb") == before)
    }

    /// Damage the pre-flight check must name, with what the message says.
    static let damage: [(String, String)] = [
        ("truncated to two pages", "the file was truncated"),
        ("truncated to one page", "too short to hold meta page 1"),
        ("emptied", "data.mdb is empty"),
        ("meta page 0 magic", "meta page 0 does not hold LMDB's magic number"),
        ("meta page 1 magic", "meta page 1 does not hold LMDB's magic number"),
        ("older txnid inverted", "are not one apart"),
        ("meta page 1 page size", "page size"),
    ]

    @Test(arguments: damage)
    func damageIsFoundBeforeMapping(damage: String, message: String) throws {
        try makeLedger()
        let path = store + "/data.mdb"
        switch damage {
        case "truncated to two pages": #expect(truncate(path, 8192) == 0)
        case "truncated to one page": #expect(truncate(path, 4096) == 0)
        case "emptied": #expect(truncate(path, 0) == 0)
        case "meta page 0 magic": try patch(16) { $0 ^ 0xFF }
        case "meta page 1 magic": try patch(4096 + 16) { $0 ^ 0xFF }
        case "meta page 1 page size": try patch(4096 + 16 + 25) { $0 ^ 0x01 }
        default:
            let data = try bytes(path)
            let txn0 = data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 144, as: UInt64.self) }
            let txn1 = data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 4096 + 144, as: UInt64.self) }
            try patch((txn0 < txn1 ? 0 : 4096) + 144) { $0 ^ 0xFF }
        }
        let before = try bytes(path)
        for options in [Self.existingOnly, Self.readOnly, Environment.Options()] {
            #expect {
                try EventLog(directory: store, options: options)
            } throws: { error in
                guard case LedgerError.damagedStore = error else { return false }
                return "\(error)".contains(message) && "\(error)".contains("jqc salvage")
            }
        }
        #expect(try bytes(path) == before, "a damaged store must be left exactly as it was")
    }

    @Test func aHealthyFilePassesTheCheck() throws {
        try makeLedger()
        let facts = try StoreFile.check(directory: store).get()
        #expect(facts.pageSize == 4096)
        #expect(facts.fileSize >= Int(facts.lastPage + 1) * facts.pageSize)
    }

    /// Answers of successive reads of the meta pages, what the check
    /// concludes and how many reads it took: damage is named only when two
    /// reads in a row find the same, since another process committing
    /// between the two pages' reads makes a healthy file look damaged.
    static let sane = StoreFile.Facts(pageSize: 4096, lastPage: 9, transaction: 18, fileSize: 40960)
    typealias Check = Result<StoreFile.Facts, StoreFile.Problem>
    static let settling: [(reads: [Check], answer: Check, count: Int)] = [
        ([.success(sane)], .success(sane), 1),
        ([.failure(.missing)], .failure(.missing), 1),
        ([.failure(.unreadable(code: EACCES))], .failure(.unreadable(code: EACCES)), 1),
        ([.failure(.damaged("12 and 17")), .success(sane)], .success(sane), 2),
        ([.failure(.damaged("12 and 17")), .failure(.damaged("12 and 17"))], .failure(.damaged("12 and 17")), 2),
        (
            [.failure(.damaged("12 and 17")), .failure(.damaged("18 and 21")), .failure(.damaged("18 and 21"))],
            .failure(.damaged("18 and 21")), 3
        ),
        (
            [.failure(.damaged("12 and 17")), .failure(.damaged("18 and 21")), .success(sane)],
            .success(sane), 3
        ),
        (
            (0..<10).map { .failure(.damaged("moving \($0)")) },
            .failure(.damaged("moving 7")), 8
        ),
    ]

    @Test(arguments: settling.indices)
    func damageIsNamedOnlyWhenTwoReadsInARowFindIt(index: Int) {
        let (reads, answer, count) = Self.settling[index]
        var made = 0
        let result = StoreFile.settled {
            defer { made += 1 }
            return reads[made]
        }
        #expect(result == answer)
        #expect(made == count)
    }

    @Test func aFullDiskIsNamedWithTheFreeSpace() {
        for code in [ENOSPC, EDQUOT] {
            let error = LedgerError.from(LMDBError(code: code, operation: "committing"), store: directory.path)
            guard case .noSpace(let path, _) = error else {
                Issue.record("ENOSPC read as \(error)")
                continue
            }
            #expect(path == directory.path)
            #expect("\(error)".contains("no space left on the device holding \(directory.path) ("))
            #expect("\(error)".contains("KiB free)"))
        }
        // A short write on a disk with room is a plain storage failure, not a full disk.
        let io = LedgerError.from(LMDBError(code: EIO, operation: "committing"), store: directory.path)
        if LedgerError.freeSpace(at: directory.path) > 1 << 20 {
            guard case .storage = io else {
                Issue.record("EIO with free space read as \(io)")
                return
            }
        }
    }
}
