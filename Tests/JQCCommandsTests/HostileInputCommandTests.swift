import Foundation
import InspectionDomain
import LMDB
import LedgerTestSupport
import Testing

@testable import JQCCommands

/// Numbers on the command line and layouts in a ledger kept by someone else
/// that used to reach trapping arithmetic: each is now refused or described.
@Suite struct HostileInputCommandTests {
    let directory = TemporaryDirectory()
    var jqc: JQCRunner { JQCRunner(ledger: directory.appending("ledger")).reportingKinds }

    @Test(arguments: [
        ["sync", "--watch", "--interval", "9223372036854775807"],
        ["sync", "--watch", "--interval", "0"],
        ["history", "--offset", "9223372036854775807"],
        ["log", "--limit", "99999999999999999999999"],
    ])
    func outOfRangeNumbersAreUsageErrors(arguments: [String]) throws {
        let result = try jqc.run(arguments)
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        #expect(result.errorKind == "UsageError.invalidValue", "\(result.stderr)")
    }

    /// The cache only holds validated templates, but a planted one must not
    /// crash `jqc templates show` with its spans.
    @Test func aTemplateOutsideTheGridIsDescribedNotDrawn() {
        let template = Template(
            id: "9", name: "Planted\u{1B}[2J", version: 1,
            fields: [TemplateField(id: "1", type: .text, label: "Wide", col: Int.max, colSpan: Int.max)])
        let text = TemplateGrid(template: template).text
        #expect(text.contains("cannot be drawn"))
        #expect(text.contains(#"Planted\u{1B}[2J"#))
        #expect(!text.unicodeScalars.contains("\u{1B}"))
    }

    /// A view's stored version is any eight bytes in a ledger somebody else
    /// kept: one beyond `Int` used to trap on every open; now the view is
    /// merely stale and rebuilt.
    @Test func aPlantedViewVersionBeyondIntRebuildsTheView() throws {
        #expect(try jqc("init").status == 0)
        #expect(try jqc("pull", "--from", SampleReference.path).status == 0)
        let started = try jqc.run([
            "--as", "Dana", "start", "--template", "Restroom QC", "--facility", "Riverside Medical Center",
        ])
        #expect(started.status == 0, "\(started.stderr)")
        let environment = try Environment(directory: directory.appending("ledger") + "/store")
        let meta = try #require(try environment.table("views:meta"))
        try environment.write { txn in
            try txn.put(
                meta, Array("inspections".utf8), [UInt8](repeating: 0xFF, count: 8) + [UInt8](repeating: 0, count: 8))
        }
        environment.close()
        let listed = try jqc("--json", "inspections")
        #expect(listed.status == 0, "\(listed.stderr)")
        let rows = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]]
        #expect(rows?.contains { $0["template_name"] as? String == "Restroom QC" } == true, "\(listed.stdout)")
    }
}
