import Foundation
import LMDB
import LedgerCore
import LedgerStore
import LedgerTestSupport
import Testing

/// The map of stream heads on a store written before it (no `heads` table,
/// made at the store level by `HeadMapSurgery`), and a damaged table,
/// through the built `jqc` (`Schemas/ledger-format.md` § The map of stream
/// heads, and step 8 of § What `verify` checks).
@Suite struct HeadMapUpgradeTests {
    let sample: ProvingLedger
    var jqc: JQCRunner { sample.jqc }
    var store: String { sample.path + "/store" }
    static let announcement = "built the map of stream heads of this store"

    init() throws { sample = try ProvingLedger() }

    @discardableResult
    func ok(_ result: ProcessResult) throws -> ProcessResult { try ProvingLedger.succeeded(result) }

    /// The `jqc-heads` line of `jqc checkpoint`, nil when it has none.
    func headsLine() throws -> String? {
        try ok(jqc("checkpoint")).stdout.split(separator: "\n").map(String.init).first { $0.hasPrefix("jqc-heads") }
    }

    /// `jqc prove ID`'s format and `jqc verify --bundle`'s last line on it.
    func proven(_ id: String, _ name: String) throws -> (format: String?, verdict: String?) {
        let text = try ok(jqc("prove", id)).stdout
        let bundle = try sample.write(text, name)
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        let verdict = try ok(jqc("verify", "--bundle", bundle)).stdout.split(separator: "\n").last.map(String.init)
        return (object?["format"] as? String, verdict)
    }

    @Test func aStoreWithoutTheMapGetsItBuiltOnceVerifiedAndSaidSo() throws {
        let id = try sample.start()
        try ok(jqc("--as", "Dana", "set", id, "Floors", "4"))
        // The first checkpoint records the device's key (a writing open): taken before.
        #expect(try headsLine() != nil)
        try HeadMapSurgery.removeTable(store: store)
        // Read-only opens write nothing: no line, a bundle that says it cannot prove completeness.
        #expect(try headsLine() == nil)
        let old = try proven(id, "old.json")
        #expect(old.format == "jqc-proof-bundle/1")
        #expect(old.verdict?.hasPrefix("not proven: that the inspection had no version after") == true, "\(old)")
        #expect(try HeadMapSurgery.hasTable(store: store) == false)
        // The first writing command builds it and says so; the next one does not.
        let first = try ok(jqc("--as", "Dana", "set", id, "Odor", "acceptable"))
        #expect(first.stderr.components(separatedBy: Self.announcement).count == 2, "\(first.stderr)")
        #expect(first.stderr.contains("streams, verified)"), "\(first.stderr)")
        let second = try ok(jqc("--as", "Dana", "set", id, "Floors", "5"))
        #expect(!second.stderr.contains(Self.announcement), "\(second.stderr)")
        // The next checkpoint's root is the map built afresh from the log.
        let log = try EventLog(directory: store)
        let fresh = try log.read { reader in try reader.headMap(size: try reader.treeSize()).root }
        log.close()
        #expect(try headsLine() == "jqc-heads " + Data(fresh.bytes).base64EncodedString())
        let now = try proven(id, "new.json")
        #expect(now.format == "jqc-proof-bundle/2")
        #expect(now.verdict?.hasPrefix("complete: version ") == true, "\(now)")
    }

    /// The log's size, read in this process through a read-only open (a
    /// writable one would bring the map up to date itself), closed again.
    func logSize() throws -> UInt64 {
        var options = Environment.Options()
        options.readOnly = true
        let log = try EventLog(directory: store, options: options)
        defer { log.close() }
        return try log.read { reader in try reader.treeSize() }
    }

    /// A jqc older than the map appends to an upgraded store (the table put
    /// back as it was around real appends): read-only opens use no map and
    /// `verify --full` says it is behind, not damaged; the next writing
    /// command brings it up to date from the records after it, said once,
    /// and the next checkpoint's root is the map built afresh.
    @Test func aMapLeftBehindByAnOlderJQCIsNoticedAndBroughtUpToDate() throws {
        let id = try sample.start()
        try ok(jqc("--as", "Dana", "set", id, "Floors", "4"))
        #expect(try headsLine() != nil)
        let mapSize = try logSize()
        try HeadMapSurgery.recordingAsOlderJQC(store: store) {
            try ok(jqc("--as", "Dana", "set", id, "Floors", "5"))
            _ = try sample.start()
        }
        let size = try logSize()
        #expect(size > mapSize + 1)
        let behind = "an older jqc wrote records \(mapSize + 1)..\(size)"
        // Read-only: no map root, a /1 bundle, verify intact with a note.
        #expect(try headsLine() == nil)
        let old = try proven(id, "old.json")
        #expect(old.format == "jqc-proof-bundle/1")
        #expect(old.verdict?.hasPrefix("not proven: that the inspection had no version after") == true, "\(old)")
        let verified = try ok(jqc("verify", "--full")).stdout
        #expect(verified.contains("note: the map of stream heads is behind the log"), "\(verified)")
        #expect(verified.contains(behind), "\(verified)")
        let json = try ok(jqc("--json", "verify", "--full")).stdout
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        let lag = object?["head_map_behind"] as? [String: Any]
        #expect((lag?["map_size"] as? NSNumber)?.uint64Value == mapSize, "\(json)")
        #expect((lag?["log_size"] as? NSNumber)?.uint64Value == size, "\(json)")
        // The next writing command catches up, says so once; the one after says nothing.
        let first = try ok(jqc("--as", "Dana", "set", id, "Odor", "acceptable"))
        let said = "the map of stream heads was behind the log (\(behind)); brought up to date"
        #expect(first.stderr.components(separatedBy: said).count == 2, "\(first.stderr)")
        let second = try ok(jqc("--as", "Dana", "set", id, "Floors", "3"))
        #expect(!second.stderr.contains("the map of stream heads"), "\(second.stderr)")
        let log = try EventLog(directory: store)
        let fresh = try log.read { reader in try reader.headMap(size: try reader.treeSize()).root }
        log.close()
        #expect(try headsLine() == "jqc-heads " + Data(fresh.bytes).base64EncodedString())
        let now = try proven(id, "new.json")
        #expect(now.format == "jqc-proof-bundle/2")
        #expect(now.verdict?.hasPrefix("complete: version ") == true, "\(now)")
        let clean = try ok(jqc("verify", "--full")).stdout
        #expect(!clean.contains("note:"), "\(clean)")
    }

    /// A table without its size entry (a map built before the entry) is
    /// used by no read-only open and built again, verified and said, by the
    /// next writable one; a size past the log's end is damage for `verify --full`.
    @Test(arguments: [false, true]) func aTableThatDoesNotSayItsSizeOrSaysTooMuch(_ tooMuch: Bool) throws {
        let id = try sample.start()
        try ok(jqc("--as", "Dana", "set", id, "Floors", "4"))
        // The first checkpoint records the device's key (a writing open): taken before.
        #expect(try headsLine() != nil)
        let size = try logSize()
        try HeadMapSurgery.setSize(store: store, to: tooMuch ? size + 5 : nil)
        #expect(try headsLine() == nil)
        if tooMuch {
            let found = try jqc("verify", "--full")
            let said = found.stdout + found.stderr
            #expect(found.status == 1, "\(said)")
            #expect(
                said.contains("heads[size] says the map holds \(size + 5) records, more than the log's \(size)"),
                "\(said)")
            return
        }
        #expect(try ok(jqc("verify", "--full")).stdout.contains("its table does not say which records it holds"))
        let first = try ok(jqc("--as", "Dana", "set", id, "Floors", "3"))
        let rebuilt = "did not say it held the log's \(size) records; built it again from the log ("
        #expect(first.stderr.contains(rebuilt), "\(first.stderr)")
        #expect(first.stderr.contains("streams, verified)"), "\(first.stderr)")
        let log = try EventLog(directory: store)
        let fresh = try log.read { reader in try reader.headMap(size: try reader.treeSize()).root }
        log.close()
        #expect(try headsLine() == "jqc-heads " + Data(fresh.bytes).base64EncodedString())
    }

    /// Each damage to the table, and the key `verify --full` names.
    static let damages: [(name: String, damage: @Sendable (String) throws -> Void, key: String)] = [
        ("the root changed", HeadMapSurgery.changeRoot, "heads[0/" + String(repeating: "00", count: 32) + "]"),
        ("an entry planted", HeadMapSurgery.plantEntry, "heads[255/" + String(repeating: "ab", count: 32) + "]"),
    ]

    @Test(arguments: damages.indices) func verifyFullFindsADamagedTable(_ index: Int) throws {
        let (name, damage, key) = Self.damages[index]
        let id = try sample.start()
        try ok(jqc("--as", "Dana", "set", id, "Floors", "4"))
        _ = try sample.start()
        try ok(jqc("verify", "--full"))
        try damage(store)
        let found = try jqc("verify", "--full")
        let said = found.stdout + found.stderr
        #expect(found.status == 1, "\(name): \(said)")
        #expect(said.contains("the map of stream heads' entry \(key)"), "\(name): \(said)")
        #expect(said.contains("Every record is intact"), "\(name): \(said)")
        let json = try jqc("--json", "verify", "--full")
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let finding = object?["finding"] as? [String: Any]
        #expect(finding?["key"] as? String == key, "\(name): \(json.stdout)")
    }

    /// A map both behind the log (an older jqc appended) and damaged in the
    /// part the catch-up builds on: `verify --full` checks the nodes against
    /// the map of the records the table says it holds, so the damage is
    /// found (status 1, the key named), not reported only as behind.
    @Test(arguments: damages.indices) func verifyFullFindsADamagedTableThatIsBehind(_ index: Int) throws {
        let (name, damage, key) = Self.damages[index]
        let id = try sample.start()
        try ok(jqc("--as", "Dana", "set", id, "Floors", "4"))
        #expect(try headsLine() != nil)
        try HeadMapSurgery.recordingAsOlderJQC(store: store) { _ = try sample.start() }
        #expect(try ok(jqc("verify", "--full")).stdout.contains("the map of stream heads is behind the log"))
        try damage(store)
        let found = try jqc("verify", "--full")
        let said = found.stdout + found.stderr
        #expect(found.status == 1, "\(name): \(said)")
        #expect(said.contains("the map of stream heads' entry \(key)"), "\(name): \(said)")
        let json = try jqc("--json", "verify", "--full")
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect((object?["finding"] as? [String: Any])?["key"] as? String == key, "\(name): \(json.stdout)")
    }

    /// `jqc backup` copies the table and verifies the copy with it (step 8):
    /// a damaged table is refused and no copy kept; `jqc salvage`, which
    /// appends the records to a new store through the normal door, makes
    /// the map afresh: the salvaged ledger's root is the one before the damage.
    @Test func aBackupRefusesADamagedTableAndASalvageRebuildsIt() throws {
        let id = try sample.start()
        try ok(jqc("--as", "Dana", "set", id, "Floors", "4"))
        let root = try headsLine()
        #expect(root != nil)
        let good = sample.directory.appending("good-backup")
        try ok(jqc("backup", good))
        #expect(try HeadMapSurgery.hasTable(store: good + "/store"))
        try ok(JQCRunner(ledger: good)("verify", "--full"))
        try HeadMapSurgery.changeRoot(store: store)
        let refused = try jqc("backup", sample.directory.appending("bad-backup"))
        #expect(refused.status == 1, "\(refused.stdout)")
        #expect(
            refused.stderr.contains("does not verify (the map of stream heads' entry heads[0/"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: sample.directory.appending("bad-backup/store")))
        let salvaged = JQCRunner(ledger: sample.directory.appending("salvaged"), environment: ["JQC_AS_TEST": "1"])
        try ok(jqc("salvage", sample.directory.appending("salvaged")))
        try ok(salvaged("verify", "--full"))
        let log = try EventLog(directory: sample.directory.appending("salvaged/store"))
        let stored = try log.read { reader in try reader.headMapRoot() }
        log.close()
        #expect(stored.map { "jqc-heads " + Data($0.bytes).base64EncodedString() } == root)
    }
}
