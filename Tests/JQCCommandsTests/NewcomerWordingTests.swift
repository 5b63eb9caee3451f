import Foundation
import InspectionDomain
import LedgerTestSupport
import Testing

/// What a new user meets, through the built `jqc` (issue #33 item 8): a
/// counted noun in the singular for one, a share that says it is a share,
/// a mistyped field label answered with the field meant, a second
/// re-inspection of the same inspection said once, advice that names the
/// commands of today, and `--inspector` matching a part of the name as
/// `log --actor` does.
@Suite struct NewcomerWordingTests {
    let directory = TemporaryDirectory(prefix: "newcomer-wording")
    let jqc: JQCRunner

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger"), environment: ["JQC_ACTOR": "Dana Ortiz"])
        try #require(try jqc("init").status == 0)
        try #require(try jqc("pull", "--from", SampleReference.path).status == 0)
    }

    func started() throws -> String {
        let run = try JQCRunner.succeeded(jqc("--json", "start", "-t", "11", "-f", "101", "-a", "1001"))
        return try #require(try JSONValue(parsing: run.stdout)["id"]?.stringValue)
    }

    func completed() throws -> String {
        let id = try started()
        for (field, value) in [("2", "4"), ("3", "5"), ("5", "pass")] {
            _ = try JQCRunner.succeeded(jqc("set", id, field, value))
        }
        _ = try JQCRunner.succeeded(jqc("submit", id, "--follow-up"))
        return id
    }

    @Test func aShareWithOnePhotoSaysSharedAndOnePhoto() throws {
        let id = try started()
        let photo = directory.appending("photo.png")
        try SampleReference.png().write(to: URL(fileURLWithPath: photo))
        _ = try JQCRunner.succeeded(jqc("photo", id, "10", photo))
        let file = directory.appending("share.json")
        let shared = try JQCRunner.succeeded(jqc("handover", id, "-o", file, "--share", "--to", "Quinn"))
        #expect(shared.stdout.hasPrefix("Shared a copy of inspection \(id) for Quinn: "), "\(shared.stdout)")
        #expect(shared.stdout.contains(" records, 1 photo, proven against"), "\(shared.stdout)")
        #expect(!shared.stdout.contains("Handed over"), "\(shared.stdout)")
        #expect(!shared.stdout.contains("1 photos"), "\(shared.stdout)")
    }

    /// (typed label, the field a "did you mean" names, or nil for none)
    static let labels: [(typed: String, meant: String?)] = [
        ("Trash", "Trash emptied"),
        ("emptied", "Trash emptied"),
        ("trash EMPTIED", nil),  // a label matched ignoring case is no typo: recorded, no guess needed
        ("Tr", nil),  // too short to guess
        ("Ceiling", nil),  // nothing like it
    ]

    @Test(arguments: labels.indices)
    func aMistypedLabelIsAnsweredWithTheFieldMeant(index: Int) throws {
        let (typed, meant) = Self.labels[index]
        let id = try started()
        let before = try jqc("log").stdout
        let set = try jqc("set", id, "\(typed)=yes")
        if typed == "trash EMPTIED" {
            #expect(set.status == 0, "\(set.stderr)")
            return
        }
        #expect(set.status != 0)
        #expect(set.stderr.contains("No field \"\(typed)\" in template"), "\(set.stderr)")
        if let meant {
            #expect(set.stderr.contains("Did you mean \"\(meant)\""), "\(set.stderr)")
        } else {
            #expect(!set.stderr.contains("Did you mean"), "\(set.stderr)")
        }
        #expect(try jqc("log").stdout == before, "a refused answer recorded something")
    }

    @Test func aSecondReinspectionOfTheSameInspectionIsSaidOnce() throws {
        let parent = try completed()
        let first = try JQCRunner.succeeded(jqc("start", "--reinspect", parent))
        #expect(!first.stderr.contains("already re-inspects"), "\(first.stderr)")
        let second = try JQCRunner.succeeded(jqc("start", "--reinspect", parent))
        #expect(
            second.stderr.contains("jqc: note: this device already re-inspects the same inspection in "),
            "\(second.stderr)")
        #expect(second.stderr.contains("(draft); "), "\(second.stderr)")
        #expect(second.stderr.contains("'jqc discard ID --reason TEXT'"), "\(second.stderr)")
        // Both drafts stand: a note, not a refusal.
        let drafts = try JQCRunner.succeeded(jqc("--json", "drafts")).stdout
        #expect(try JSONValue(parsing: drafts).arrayValue?.count == 2, "\(drafts)")
    }

    @Test func noServerAdviceNamesConfigSetServer() throws {
        let sync = try jqc("sync")
        #expect(sync.status != 0)
        #expect(sync.stderr.contains("Set one with 'jqc config set server URL'"), "\(sync.stderr)")
        #expect(!sync.stderr.contains("login --server"), "\(sync.stderr)")
    }

    /// (the `--inspector` text, whether Dana Ortiz's inspection is listed)
    static let inspectors: [(String, Bool)] = [("dana", true), ("ORTIZ", true), ("Dana Ortiz", true), ("Dan O", false)]

    @Test(arguments: inspectors.indices)
    func inspectorMatchesAnyPartOfTheName(index: Int) throws {
        let (wanted, listed) = Self.inspectors[index]
        let id = try started()
        let rows = try JQCRunner.succeeded(jqc("--json", "inspections", "--inspector", wanted)).stdout
        #expect(rows.contains(id) == listed, "--inspector \(wanted): \(rows)")
    }
}
