import Foundation
import LedgerCore
import LedgerTestSupport
import Testing

/// `jqc prove --checkpoint TRUSTED` and the origin check of a checkpoint,
/// through the built `jqc`, the Python verifier and the Go one (the table of
/// crafted bundles is Tools/tests/test_proof_bundles.py).
@Suite struct BundleConsistencyTests {
    let sample: ProvingLedger
    var jqc: JQCRunner { sample.jqc }
    var ledger: String { sample.path }

    init() throws { sample = try ProvingLedger() }

    @discardableResult
    func ok(_ result: ProcessResult) throws -> ProcessResult { try ProvingLedger.succeeded(result) }

    func write(_ text: String, _ name: String) throws -> String { try sample.write(text, name) }

    func start() throws -> String { try sample.start() }

    /// (status, first line of standard output) of each verifier.
    func verdicts(_ bundle: String, _ options: [String]) throws -> [(Int32, String)] {
        let (python, go) = try BundleVerifiers.run(bundle, options)
        return [python, go].map { ($0.status, String($0.stdout.prefix { $0 != "\n" })) }
    }

    @Test func aBundleCarriesTheConsistencyProofFromATrustedCheckpoint() throws {
        let id = try start()
        try ok(jqc("--as", "Dana", "set", id, "Floors", "4"))
        let trusted = try write(try ok(jqc("checkpoint")).stdout, "trusted")
        let trustedSize = try #require(
            Int(try String(contentsOfFile: trusted, encoding: .utf8).split(separator: "\n")[1]))
        try ok(jqc("--as", "Dana", "set", id, "Odor", "acceptable"))
        let plain = try write(try ok(jqc("prove", id)).stdout, "plain.json")
        let proven = try ok(jqc("prove", "--checkpoint", trusted, id)).stdout
        let object = try #require(try JSONSerialization.jsonObject(with: Data(proven.utf8)) as? [String: Any])
        let consistency = try #require(object["consistency"] as? [String: Any])
        #expect(consistency["from_size"] as? Int == trustedSize)
        #expect((consistency["proof"] as? [String])?.isEmpty == false)
        let bundle = try write(proven, "consistent.json")
        for (status, line) in try verdicts(bundle, ["--checkpoint", trusted]) {
            #expect(status == 0, "\(line)")
            #expect(line.hasSuffix(", extending the trusted checkpoint of \(trustedSize) records"), "\(line)")
        }
        for (status, line) in try verdicts(plain, ["--checkpoint", trusted]) {
            #expect(status == 1)
            #expect(
                line.contains("carries no consistency proof from the trusted checkpoint's \(trustedSize)"), "\(line)")
        }
    }

    @Test func aCheckpointWhoseOriginIsNotTheKeysNameIsRefused() throws {
        _ = try start()
        let note = try ok(jqc("checkpoint")).stdout
        let lines = note.split(separator: "\n", omittingEmptySubsequences: false)
        let key = try NoteKey(parsing: try String(contentsOfFile: ledger + "/device.key", encoding: .utf8))
        let rootBytes = try #require(Data(base64Encoded: String(lines[2])))
        let root = try #require(Digest256(bytes: Array(rootBytes)))
        let size = try #require(UInt64(lines[1]))
        let forged = try Checkpoint(origin: "jqc/elsewhere", size: size, root: root).signed(by: key)
        let path = try write(forged, "origin")
        for command in [["checkpoint", "--verify", path], ["verify", "--checkpoint", path]] {
            let refused = try jqc.run(command)
            #expect(refused.status == 1, "\(command): \(refused.stdout)")
            #expect(refused.stderr.contains("origin line \"jqc/elsewhere\" is not the key's name"), "\(refused.stderr)")
        }
        let refused = try jqc("prove", "--checkpoint", path, try start())
        #expect(refused.status == 1 && refused.stdout.isEmpty, "\(refused.stdout)")
    }
}
