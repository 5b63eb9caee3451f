import Foundation
import LMDB
import LedgerCore
import LedgerTestSupport
import Testing

/// Signed checkpoints, consistency proofs and proof bundles through the built
/// `jqc`, checked by the Python verifier and by a Go program built on
/// golang.org/x/mod/sumdb (tlog, note), which nobody here wrote.
@Suite struct ProofTests {
    let sample: ProvingLedger
    var directory: TemporaryDirectory { sample.directory }
    var jqc: JQCRunner { sample.jqc.reportingKinds }
    var ledger: String { sample.path }

    init() throws { sample = try ProvingLedger() }

    @discardableResult
    func expectSuccess(_ result: ProcessResult) throws -> ProcessResult { try ProvingLedger.succeeded(result) }

    func write(_ text: String, _ name: String) throws -> String { try sample.write(text, name) }

    func bundle(_ id: String) throws -> [String: Any] { try sample.bundle(id) }

    /// An inspection with answers and a photo, and another one interleaved.
    func inspection() throws -> String {
        let id = try sample.start()
        let other = try sample.start()
        let photo = try SampleReference.writePNG(in: directory.path, name: "leak.png", red: 10)
        try expectSuccess(jqc("--as", "Dana", "set", id, "Floors", "4"))
        try expectSuccess(jqc("--as", "Dana", "set", other, "Floors", "2"))
        try expectSuccess(jqc("--as", "Dana", "photo", id, "Photo of problem area", photo))
        try expectSuccess(jqc("--as", "Dana", "set", id, "Odor", "acceptable"))
        try expectSuccess(jqc("--as", "Dana", "set", other, "Odor", "acceptable"))
        return id
    }

    /// (Python verdict, Go verdict) on a bundle.
    func verifyBundle(_ path: String) throws -> (python: Bool, go: Bool, detail: String) {
        let (python, go) = try BundleVerifiers.run(path)
        return (python.status == 0, go.status == 0, python.stdout + go.stdout + python.stderr + go.stderr)
    }

    func save(_ bundle: [String: Any], _ name: String) throws -> String {
        let data = try JSONSerialization.data(withJSONObject: bundle)
        return try write(String(decoding: data, as: UTF8.self), name)
    }

    @Test func aBundleVerifiesInPythonAndGoAndAlteredOnesFail() throws {
        let id = try inspection()
        let original = try bundle(id)
        let records = try #require(original["records"] as? [[String: Any]])
        #expect(records.count >= 4)
        #expect((original["photos"] as? [[String: Any]])?.count == 1)
        let good = try verifyBundle(try save(original, "good.json"))
        #expect(good.python && good.go, "\(good.detail)")

        var leftOut = original
        leftOut["records"] = Array(records[0..<1] + records[2...])
        var added = original
        added["records"] = records + [try #require(original["key_record"] as? [String: Any])]
        var swapped = original
        var order = records
        order.swapAt(1, 2)
        swapped["records"] = order
        var forgedRecord = original
        var changed = records
        let text = try #require(changed[1]["record"] as? String)
        var bytes = Array(try #require(Data(base64Encoded: text)))
        bytes[bytes.count - 3] ^= 0x01
        changed[1]["record"] = Data(bytes).base64EncodedString()
        forgedRecord["records"] = changed
        for (name, altered) in [
            ("left-out", leftOut), ("added", added), ("swapped", swapped), ("changed", forgedRecord),
        ] {
            let verdict = try verifyBundle(try save(altered, "\(name).json"))
            #expect(!verdict.python, "Python accepted a bundle with a record \(name)")
            #expect(!verdict.go, "Go accepted a bundle with a record \(name)")
        }
    }

    @Test func aCheckpointSignedByAnotherKeyFails() throws {
        let id = try inspection()
        let checkpoint = try expectSuccess(jqc("checkpoint")).stdout
        let path = try write(checkpoint, "checkpoint")
        try expectSuccess(jqc("checkpoint", "--verify", path))
        try expectSuccess(jqc("verify", "--checkpoint", path))
        // The same body signed by another key of the same name.
        let body = String(checkpoint[..<checkpoint.range(of: "\n\n")!.lowerBound]) + "\n"
        let origin = String(body.prefix { $0 != "\n" })
        let other = try NoteKey.generate(name: origin)
        let forged = Checkpoint(
            origin: origin, size: UInt64(body.split(separator: "\n")[1])!,
            root: Digest256(bytes: Array(Data(base64Encoded: String(body.split(separator: "\n")[2]))!))!)
        let forgedPath = try write(try forged.signed(by: other), "forged")
        let refused = try jqc("checkpoint", "--verify", forgedPath)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("signature"), "\(refused.stderr)")
        #expect(try jqc("verify", "--checkpoint", forgedPath).status == 1)
        var bundle = try bundle(id)
        bundle["checkpoint"] = try forged.signed(by: other)
        let verdict = try verifyBundle(try save(bundle, "other-key.json"))
        #expect(!verdict.python && !verdict.go, "\(verdict.detail)")
    }

    @Test func aConsistentRewriteAfterACheckpointIsCaught() throws {
        _ = try inspection()
        let checkpoint = try write(try expectSuccess(jqc("checkpoint")).stdout, "checkpoint")
        try expectSuccess(jqc("--as", "Dana", "pull", "--from", SampleReference.path))
        // The forger rewrites record 3 and recomputes every later chain hash and
        // the whole tree (as the format-1 upgrade derives it), so the log is
        // consistent in itself.
        let env = try Environment(directory: ledger + "/store")
        let events = try #require(try env.table("events"))
        let tree = try #require(try env.table("merkle"))
        let meta = try #require(try env.table("meta"))
        // And the map of stream heads, which the next writable open builds again.
        let heads = try env.table("heads", create: false)
        try env.write { txn in
            if let heads { try txn.remove(heads) }
            let chain = HashChain()
            var previous = Digest256.zero
            var leaves: [UUID: Digest256] = [:]
            var p: UInt64 = 1
            while let value = try txn.get(events, BigEndian.bytes(p)) {
                var record = try EventRecord(decoding: value, at: 32)
                if p >= 3 {
                    if p == 3 { record.event.actor.name = "Mallory" }
                    if record.previousInStream != nil { record.previousInStream = leaves[record.stream] }
                    previous = chain.next(previous: previous, record: record.encoded())
                    try txn.put(events, BigEndian.bytes(p), previous.bytes + record.encoded())
                } else {
                    previous = Digest256(bytes: Array(value[0..<32]))!
                }
                leaves[record.stream] = chain.leaf(ofRecord: record.encoded())
                p += 1
            }
            try txn.empty(tree)
            try txn.put(meta, Array("format".utf8), Array("inspection-ledger/1".utf8))
        }
        env.close()
        unlink(ledger + "/store-head")  // the forger removes the head file too (it would refuse the store at once)
        try expectSuccess(jqc("stats"))  // a writable open derives the forged tree
        try expectSuccess(jqc("verify", "--full"))  // consistent in itself
        let result = try jqc("verify", "--checkpoint", checkpoint)
        #expect(result.status == 1)
        #expect(result.errorKind == "CheckpointError.notExtended", "\(result.stderr)")
    }

    @Test func anInspectionsChangedRecordIsNamedByTheProofs() throws {
        let id = try inspection()
        let checkpoint = try write(try expectSuccess(jqc("checkpoint")).stdout, "checkpoint")
        try expectSuccess(jqc("verify", "--checkpoint", checkpoint, "--inspection", id))
        // Change one of the inspection's records in place (the tree is left
        // as it was): its leaf no longer matches the tree.
        let records = try #require(try bundle(id)["records"] as? [[String: Any]])
        let position = UInt64(try #require(records[2]["position"] as? Int))
        let env = try Environment(directory: ledger + "/store")
        let events = try #require(try env.table("events"))
        try env.write { txn in
            var value = try #require(try txn.get(events, BigEndian.bytes(position)))
            value[40] ^= 0x01
            try txn.put(events, BigEndian.bytes(position), value)
        }
        env.close()
        let result = try jqc("verify", "--checkpoint", checkpoint, "--inspection", id)
        #expect(result.status == 1)
        #expect(result.stderr.contains("record \(position) "), "\(result.stderr)")
    }

    @Test func theKeyIsPrivateAndPublishedInTheLog() throws {
        let attributes = try FileManager.default.attributesOfItem(atPath: ledger + "/device.key")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let key = try String(contentsOfFile: ledger + "/device.key", encoding: .utf8)
        #expect(key.hasPrefix("PRIVATE+KEY+jqc/"))
        // A new ledger's log starts empty; the first checkpoint publishes the key.
        #expect(try expectSuccess(jqc("--json", "log")).stdout.contains("device.key_published") == false)
        try expectSuccess(jqc("checkpoint"))
        let log = try expectSuccess(jqc("--json", "log")).stdout
        #expect(log.contains("device.key_published"))
        #expect(!log.contains("PRIVATE"))
    }

    @Test func aLedgerWithoutAKeyGetsOneOnFirstUse() throws {
        try FileManager.default.removeItem(atPath: ledger + "/device.key")
        let checkpoint = try write(try expectSuccess(jqc("checkpoint")).stdout, "checkpoint")
        #expect(FileManager.default.fileExists(atPath: ledger + "/device.key"))
        try expectSuccess(jqc("checkpoint", "--verify", checkpoint))
        // A key deleted after it was published is never replaced silently:
        // only an explicit rotation records a new one, and checkpoints of the
        // old key still verify.
        try FileManager.default.removeItem(atPath: ledger + "/device.key")
        let refused = try jqc("checkpoint")
        #expect(refused.status == 1 && refused.errorKind == "DeviceKeyError.missing", "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: ledger + "/device.key"))
        try expectSuccess(jqc("key", "rotate", "--old-key-lost"))
        let second = try write(try expectSuccess(jqc("checkpoint")).stdout, "second")
        try expectSuccess(jqc("verify", "--checkpoint", checkpoint))
        try expectSuccess(jqc("verify", "--checkpoint", second))
    }
}
