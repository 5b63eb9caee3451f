import Foundation
import LedgerTestSupport
import Testing

/// `jqc log --actor`: any part of a name (documented), but an id only whole,
/// so `local:Dan` lists Dan's events and not Dana's or Danai's.
@Suite struct LogActorMatchTests {
    let directory = TemporaryDirectory()
    let jqc: JQCRunner

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger"))
        try #require(try jqc("init").status == 0)
        try #require(try jqc("pull", "--from", SampleReference.path).status == 0)
        for name in ["Dan", "Dana", "Danai"] {
            let started = try jqc(
                "--as", name, "start", "--template", "Restroom QC", "--facility", "Riverside Medical Center")
            try #require(started.status == 0, "\(started.stderr)")
        }
    }

    /// The names of the actors whose events `log --actor wanted` lists.
    func actors(_ wanted: String) throws -> Set<String> {
        let result = try jqc("--json", "log", "--actor", wanted)
        #expect(result.status == 0, "\(result.stderr)")
        return Set(
            try result.stdout.split(separator: "\n").map { line in
                let event = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                return try #require((event["actor"] as? [String: Any])?["name"] as? String)
            })
    }

    static let cases: [(String, Set<String>)] = [
        ("local:Dan", ["Dan"]), ("LOCAL:dana", ["Dana"]), ("local:Danai", ["Danai"]), ("local:Da", []),
        ("Dan", ["Dan", "Dana", "Danai"]), ("nai", ["Danai"]), ("local:", ["Dan", "Dana", "Danai"]),
    ]

    @Test(arguments: cases)
    func anIdMatchesWholeANameByAnyPart(wanted: String, names: Set<String>) throws {
        #expect(try actors(wanted) == names, "--actor \(wanted)")
    }
}
