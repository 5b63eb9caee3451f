import Foundation
import LedgerStore
import LedgerTestSupport
import Testing

/// The catch-up of a map of stream heads an older jqc left behind checks
/// the nodes it builds on (`HeadMapTable.checkPath`) through the built
/// `jqc`: a damaged one refuses the writing open, the map left as it was
/// (behind, so no checkpoint signs it), instead of being hashed into the
/// new nodes where it would be signed.
@Suite struct HeadMapCatchUpCheckTests {
    let sample: ProvingLedger
    var jqc: JQCRunner { sample.jqc }
    var store: String { sample.path + "/store" }

    init() throws { sample = try ProvingLedger() }

    @discardableResult
    func ok(_ result: ProcessResult) throws -> ProcessResult { try ProvingLedger.succeeded(result) }

    /// The `jqc-heads` line of `jqc checkpoint`, nil when it has none.
    func headsLine() throws -> String? {
        try ok(jqc("checkpoint")).stdout.split(separator: "\n").map(String.init).first { $0.hasPrefix("jqc-heads") }
    }

    static let root = "heads[0/" + String(repeating: "00", count: 32) + "]"
    /// The refusal when the root is not the node of the two below it.
    static let rootMismatch = "the map of stream heads' entry \(root) is not the node of the two below it"

    /// (the damage, planted while the map is behind; the refusals that name
    /// it, each as parts of the message): both on what the catch-up's first
    /// path reads. The node changed at depth 1 is the first in key order,
    /// which the sample's random stream ids make either a node below the
    /// root (the root no longer its node) or the head slot beside the path,
    /// checked first (its hash no longer its head's).
    static let damages: [(name: String, damage: @Sendable (String) throws -> Void, refusals: [[String]])] = [
        (
            "a node at depth 1 changed", { try HeadMapSurgery.changeNode(store: $0, depth: 1) },
            [[rootMismatch], ["the map of stream heads' entry heads[1/", "] holds a hash that is not its head's"]]
        ),
        ("the root changed", HeadMapSurgery.changeRoot, [[rootMismatch]]),
    ]

    @Test(arguments: damages.indices) func theCatchUpRefusesToBuildOnADamagedNode(_ index: Int) throws {
        let (name, damage, refusals) = Self.damages[index]
        let id = try sample.start()
        try ok(jqc("--as", "Dana", "set", id, "Floors", "4"))
        #expect(try headsLine() != nil)
        try HeadMapSurgery.recordingAsOlderJQC(store: store) {
            try ok(jqc("--as", "Dana", "set", id, "Floors", "5"))
            _ = try sample.start()
        }
        try damage(store)
        let refused = try jqc("--as", "Dana", "set", id, "Odor", "acceptable")
        #expect(refused.status == 1, "\(name): \(refused.stderr)")
        #expect(
            refusals.contains { parts in parts.allSatisfy { refused.stderr.contains($0) } },
            "\(name): \(refused.stderr)")
        #expect(refused.stderr.contains("every record is intact"), "\(name): \(refused.stderr)")
        #expect(refused.stderr.contains("Nothing was changed"), "\(name): \(refused.stderr)")
        #expect(!refused.stderr.contains("brought up to date"), "\(name): \(refused.stderr)")
        // Left as it was: still behind (no checkpoint signs it), and the damage still there to be found.
        #expect(try headsLine() == nil, "\(name)")
        let found = try jqc("verify", "--full")
        #expect(found.status == 1, "\(name): \(found.stdout)")
        #expect(
            (found.stdout + found.stderr).contains("the map of stream heads' entry heads["),
            "\(name): \(found.stdout)")
        // The way on the refusal names: a salvage makes the map afresh from the records.
        let salvaged = sample.directory.appending("salvaged")
        try ok(jqc("salvage", salvaged))
        try ok(JQCRunner(ledger: salvaged, environment: ["JQC_AS_TEST": "1"])("verify", "--full"))
    }
}
