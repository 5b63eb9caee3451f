import Foundation
import LMDB
import LedgerStore
import LedgerTestSupport
import Testing

/// A corpus of damaged stores, each made from a real ledger, run through the
/// built `jqc`: every command ends with exit status 1 and a message (never a
/// signal), and the damaged files are left exactly as they were (no empty
/// ledger is ever made in place of a damaged one).
@Suite struct DamagedStoreTests {
    let directory = TemporaryDirectory()
    let jqc: JQCRunner
    let inspection: String
    var home: String { directory.appending("ledger") }
    var dataFile: String { home + "/store/data.mdb" }

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger")).reportingKinds
        inspection = try jqc.recordSampleInspection()
    }

    /// The commands every damaged store is tried with.
    var commands: [[String]] {
        [
            ["verify"], ["inspections"], ["show", inspection], ["--as", "Dana", "set", inspection, "Floors", "3"],
            ["log"], ["audit", inspection],
        ]
    }

    func contents(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    func flip(_ offset: Int) throws {
        var data = try #require(contents(dataFile))
        data[offset] ^= 0xFF
        try data.write(to: URL(fileURLWithPath: dataFile))
    }

    func u64(_ data: Data, _ offset: Int) -> UInt64 {
        data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self) }
    }

    /// The page holding the root of the `events` table: the main table's
    /// root (in the newest meta page) is a leaf of named tables, each node's
    /// data an `MDB_db` whose `md_root` is at offset 40.
    func eventsRootPage() throws -> Int {
        let data = try #require(contents(dataFile))
        let newest = u64(data, 144) > u64(data, 4096 + 144) ? 0 : 4096
        let mainRoot = Int(u64(data, newest + 16 + 24 + 48 + 40))
        let page = mainRoot * 4096
        let lower = Int(data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: page + 12, as: UInt16.self) })
        for slot in 0..<((lower - 16) / 2) {
            let node =
                page
                + Int(data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: page + 16 + slot * 2, as: UInt16.self) })
            let keySize = Int(data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: node + 6, as: UInt16.self) })
            let key = String(decoding: data[(node + 8)..<(node + 8 + keySize)], as: UTF8.self)
            if key == "events" { return Int(u64(data, node + 8 + keySize + 40)) }
        }
        Issue.record("no events table in the main table's root page")
        return 0
    }

    static let kinds = [
        "truncated to two pages", "truncated to half", "truncated by five pages", "events root zeroed",
        "meta page 0 corrupted", "meta page 1 corrupted", "older txnid inverted", "data.mdb deleted",
        "data.mdb emptied", "a foreign LMDB environment",
    ]

    func damage(_ kind: String) throws {
        let size = try #require(contents(dataFile)).count
        switch kind {
        case "truncated to two pages": #expect(truncate(dataFile, 8192) == 0)
        case "truncated to half": #expect(truncate(dataFile, off_t(size / 2)) == 0)
        case "truncated by five pages": #expect(truncate(dataFile, off_t(size - 5 * 4096)) == 0)
        case "events root zeroed":
            let page = try eventsRootPage()
            var data = try #require(contents(dataFile))
            data.replaceSubrange((page * 4096)..<((page + 1) * 4096), with: [UInt8](repeating: 0, count: 4096))
            try data.write(to: URL(fileURLWithPath: dataFile))
        case "meta page 0 corrupted": try flip(16)
        case "meta page 1 corrupted": try flip(4096 + 16)
        case "older txnid inverted":
            let data = try #require(contents(dataFile))
            try flip((u64(data, 144) < u64(data, 4096 + 144) ? 0 : 4096) + 144)
        case "data.mdb deleted": #expect(unlink(dataFile) == 0)
        case "data.mdb emptied": #expect(truncate(dataFile, 0) == 0)
        default:
            // Another program's environment where the store was: made by the
            // LMDB tools, with a table of its own.
            try FileManager.default.removeItem(atPath: home + "/store")
            try FileManager.default.createDirectory(atPath: home + "/store", withIntermediateDirectories: false)
            let load = try ProcessRun.run(
                "/usr/bin/mdb_load", ["-T", "-s", "customers", home + "/store"], input: Data("k\nv\n".utf8))
            #expect(load.status == 0, "mdb_load failed: \(load.stderr)")
        }
    }

    @Test(arguments: kinds)
    func everyCommandRefusesADamagedStore(kind: String) throws {
        try damage(kind)
        let before = contents(dataFile)
        for command in commands {
            let result = try jqc.run(command)
            #expect(!result.signalled, "jqc \(command) died by signal \(result.status) on \(kind)")
            #expect(result.status == 1, "jqc \(command) on \(kind): \(result.status) \(result.stdout) \(result.stderr)")
            #expect(result.stderr.hasPrefix("jqc: "), "jqc \(command) on \(kind): \(result.stderr)")
            let named = ["is damaged", "is not a ledger", "fails its chain check", "NOT INTACT"]
            #expect(
                named.contains { result.stderr.contains($0) },
                "jqc \(command) on \(kind) did not name the damage: \(result.stderr)")
            #expect(!result.stdout.contains("No inspections yet"))
            #expect(!result.stderr.contains("Debug description") && !result.stderr.contains("LMDB code"))
        }
        #expect(contents(dataFile) == before, "the damaged store was changed")
        #expect(FileManager.default.fileExists(atPath: dataFile) == (before != nil))
    }

    /// Every page zeroed in turn, and one byte of every page header changed
    /// in turn: whatever it held, no command dies by a signal, and a verify
    /// that passes still counts every record. LMDB's assertion is among what
    /// this finds, and a record past the end of the file reaches a fault in
    /// the map, so both of those paths are checked.
    @Test func noDamagedPageEndsAProcessBySignal() throws {
        let healthy = try JSONSerialization.jsonObject(with: Data(try jqc("--json", "verify").stdout.utf8))
        let records = try #require((healthy as? [String: Any])?["checked"] as? Int)
        let pristine = try #require(contents(dataFile))
        let pages = pristine.count / 4096
        var assertions = 0
        for damage in ["zeroed", "flags", "lower bound"] {
            for page in 2..<pages {
                var data = pristine
                switch damage {
                case "zeroed":
                    data.replaceSubrange((page * 4096)..<((page + 1) * 4096), with: [UInt8](repeating: 0, count: 4096))
                case "flags": data[page * 4096 + 10] ^= 0xFF
                default: data[page * 4096 + 20] ^= 0xFF
                }
                try data.write(to: URL(fileURLWithPath: dataFile))
                for command in [["--json", "verify"], ["log"], ["show", inspection]] {
                    let result = try jqc.run(command)
                    #expect(!result.signalled, "jqc \(command) died by signal \(result.status), page \(page) \(damage)")
                    #expect(result.status <= 1, "jqc \(command), page \(page) \(damage): \(result.stderr)")
                    if command == ["--json", "verify"], result.status == 0 {
                        let report = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
                        #expect(report?["checked"] as? Int == records, "page \(page) \(damage): \(result.stdout)")
                    }
                    if result.stderr.contains("LMDB found an inconsistent page") { assertions += 1 }
                }
            }
        }
        #expect(assertions > 0, "no damage reached LMDB's assertion: that path went untested")
        // Which page damage of the sweep reaches a fault depends on where the
        // sample's random ids put its records (none, in some runs), so the
        // handler is reached on purpose as well.
        #expect(try faultsPastTheEnd(of: pristine) == 3, "a record past the end did not reach the signal handler")
    }

    /// The first record of the `events` table claimed to be 2 GiB long (the
    /// high half of its node's size set): reading it runs past the end of
    /// the file in the map, the one damage that always reaches the signal
    /// handler. The tree above it stays sound, so nothing refuses it earlier.
    func faultsPastTheEnd(of pristine: Data) throws -> Int {
        try pristine.write(to: URL(fileURLWithPath: dataFile))
        var data = pristine
        func u16(_ offset: Int) -> Int {
            Int(data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt16.self) })
        }
        var page = try eventsRootPage() * 4096
        // A branch page's first node holds its leftmost child's page number
        // in its first six bytes (lo, hi, flags); a leaf is flagged 0x02.
        while u16(page + 10) & 0x02 == 0 {
            let node = page + u16(page + 16)
            page = (u16(node) | u16(node + 2) << 16 | u16(node + 4) << 32) * 4096
        }
        let node = page + u16(page + 16)
        data[node + 2] = 0xFF
        data[node + 3] = 0x7F
        try data.write(to: URL(fileURLWithPath: dataFile))
        var faults = 0
        for command in [["--json", "verify"], ["log"], ["show", inspection]] {
            let result = try jqc.run(command)
            #expect(!result.signalled, "jqc \(command) died by signal \(result.status), a record past the end")
            #expect(result.status == 1, "jqc \(command), a record past the end: \(result.stderr)")
            if result.stderr.contains("(SIGBUS/SIGSEGV)") { faults += 1 }
        }
        #expect(contents(dataFile) == data, "the damaged store was changed")
        return faults
    }

    // MARK: - Verified reads

    /// Changes one byte of the record at `position` behind the log's back, as
    /// someone with the file would (the LMDB tree itself stays sound).
    func changeRecord(at position: UInt64) throws {
        let environment = try Environment(directory: home + "/store")
        defer { environment.close() }
        let events = try #require(try environment.table("events"))
        try environment.write { txn in
            let key = BigEndian.bytes(position)
            var value = try #require(try txn.get(events, key))
            value[value.count - 1] ^= 0x01
            try txn.put(events, key, value)
        }
    }

    func storedEvents() throws -> Int {
        let environment = try Environment(directory: home + "/store")
        defer { environment.close() }
        let events = try #require(try environment.table("events"))
        return try environment.read { txn in try txn.count(events) }
    }

    @Test func aChangedRecordIsNeitherShownNorBuiltOn() throws {
        try changeRecord(at: 5)
        let before = try storedEvents()
        for command in [["show", inspection], ["--as", "Dana", "set", inspection, "Floors", "2"]] {
            let result = try jqc.run(command)
            #expect(result.status == 1 && !result.signalled, "jqc \(command): \(result.stdout)")
            #expect(result.errorKind == "LedgerError.brokenChain", "jqc \(command): \(result.stderr)")
            #expect(result.errorDetail?["position"] as? Int == 5, "record 5 fails its chain check: \(result.stderr)")
        }
        #expect(try storedEvents() == before, "an event was recorded on top of a changed record")
        let verify = try jqc("verify")
        #expect(verify.status == 1)
        #expect(verify.errorKind == "LedgerVerificationFailure", "\(verify.stderr)")
    }

    @Test func aChangedHeadRefusesEveryRecording() throws {
        let head = UInt64(try storedEvents())
        try changeRecord(at: head)
        let result = try jqc("--as", "Dana", "set", inspection, "Floors", "2")
        #expect(result.status == 1)
        #expect(result.errorKind == "LedgerError.brokenChain", "\(result.stderr)")
        #expect(
            result.errorDetail?["position"] as? Int == Int(head),
            "record \(head) fails its chain check: \(result.stderr)")
        #expect(try storedEvents() == Int(head))
    }
}
