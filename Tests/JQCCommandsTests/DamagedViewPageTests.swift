import Foundation
import LedgerTestSupport
import Testing

/// A damaged page that holds only a view's rows (`view:inspections`): the
/// listing says the view's table is damaged, that the log is not where the
/// damage is and what repairs it, never LMDB's assertion text; the log still
/// verifies and the repair it names works.
@Suite struct DamagedViewPageTests {
    let directory = TemporaryDirectory()
    let jqc: JQCRunner
    let inspection: String
    var home: String { directory.appending("ledger") }
    var dataFile: String { home + "/store/data.mdb" }

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger"))
        inspection = try jqc.recordSampleInspection()
    }

    func u64(_ data: Data, _ offset: Int) -> UInt64 {
        data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self) }
    }

    func u16(_ data: Data, _ offset: Int) -> Int {
        Int(data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt16.self) })
    }

    /// The root page of `table`: the main table's root (in the newest meta
    /// page) is a leaf of named tables, each node's data an `MDB_db` whose
    /// `md_root` is at offset 40. In a small ledger a view's root is its one
    /// leaf, holding that view's rows and nothing else.
    func rootPage(of table: String, in data: Data) throws -> Int {
        let newest = u64(data, 144) > u64(data, 4096 + 144) ? 0 : 4096
        let page = Int(u64(data, newest + 16 + 24 + 48 + 40)) * 4096
        for slot in 0..<((u16(data, page + 12) - 16) / 2) {
            let node = page + u16(data, page + 16 + slot * 2)
            let keySize = u16(data, node + 6)
            if String(decoding: data[(node + 8)..<(node + 8 + keySize)], as: UTF8.self) == table {
                return Int(u64(data, node + 8 + keySize + 40))
            }
        }
        throw DamageSetupError.noTable(table)
    }

    enum DamageSetupError: Error { case noTable(String) }

    /// The two ways LMDB meets such a page: flags that make it a branch
    /// page (LMDB's assertion, which exits) and a zeroed page (an error).
    static let damages = ["branch flags", "zeroed"]

    func damage(_ kind: String) throws {
        var data = try #require(FileManager.default.contents(atPath: dataFile))
        let page = try rootPage(of: "view:inspections", in: data) * 4096
        switch kind {
        case "branch flags": data[page + 10] ^= 0xFF
        default: data.replaceSubrange(page..<(page + 4096), with: [UInt8](repeating: 0, count: 4096))
        }
        try data.write(to: URL(fileURLWithPath: dataFile))
    }

    static func expectWorded(_ result: ProcessResult, _ what: String) {
        #expect(result.status == 1 && !result.signalled, "\(what): \(result.stdout)")
        #expect(result.stderr.contains("a page of the view table view:inspections"), "\(what): \(result.stderr)")
        #expect(result.stderr.contains("the damage is in a view's table, not in the log's"), "\(what)")
        for lmdb in ["mdb.c", "Assertion", "MDB_", "LMDB code", "inconsistent page"] {
            #expect(!result.stderr.contains(lmdb), "\(what) shows LMDB's text: \(result.stderr)")
        }
    }

    @Test(arguments: damages)
    func aListingSaysTheViewIsDamagedAndWhatRepairsIt(kind: String) throws {
        try damage(kind)
        for command in [["inspections"], ["drafts"]] {
            let result = try jqc.run(command)
            Self.expectWorded(result, "\(command) after \(kind)")
            #expect(result.stderr.contains("'jqc rebuild' rebuilds the views from the log"), "\(result.stderr)")
        }
        // What it says: the log is sound.
        let verify = try jqc("verify")
        #expect(verify.status == 0, "\(verify.stderr)")
        // And what it names repairs it: a rebuild, or (when the rebuild meets the
        // damage too, as for a view's root page) a salvage into a new ledger.
        let rebuild = try jqc("rebuild")
        #expect(!rebuild.signalled)
        var repaired = jqc
        if rebuild.status != 0 {
            Self.expectWorded(rebuild, "rebuild after \(kind)")
            #expect(rebuild.stderr.contains("cannot clear that table in place"), "\(rebuild.stderr)")
            #expect(rebuild.stderr.contains("'jqc salvage DEST'"))
            let destination = directory.appending("salvaged")
            let salvage = try jqc("salvage", destination)
            #expect(salvage.status == 0, "\(salvage.stderr)")
            repaired = JQCRunner(ledger: destination)
        }
        let listed = try repaired("inspections")
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains(inspection), "\(listed.stdout)")
    }
}
