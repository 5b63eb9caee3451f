import Foundation
import LedgerTestSupport
import Testing

/// Bidi controls in a template's text (its name, labels, options) and in the
/// values recorded with it reach the HTML audit report neutralised: shown as
/// visible escapes, never as the characters that reorder what follows.
@Suite struct HTMLBidiTests {
    let directory = TemporaryDirectory()

    /// Every bidi embedding, override, isolate and mark.
    static let controls: [Unicode.Scalar] = [
        "\u{202A}", "\u{202B}", "\u{202C}", "\u{202D}", "\u{202E}", "\u{2066}", "\u{2067}", "\u{2068}", "\u{2069}",
        "\u{200E}", "\u{200F}", "\u{061C}",
    ]

    static func carrying(_ control: Unicode.Scalar, _ text: String) -> String {
        "\(control)\(text.prefix(3))\(control)\(text.dropFirst(3))"
    }

    @Test func aTemplateCarryingBidiControlsReachesTheReportNeutralised() throws {
        // The sample reference data, its Restroom template's text laced with every control.
        let data = try #require(FileManager.default.contents(atPath: SampleReference.path))
        var reference = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var templates = try #require(reference["templates"] as? [[String: Any]])
        let index = try #require(templates.firstIndex { $0["name"] as? String == "Restroom QC" })
        var template = templates[index]
        var schema = try #require(template["form_schema"] as? [String: Any])
        var fields = try #require(schema["fields"] as? [[String: Any]])
        let controls = Self.controls
        template["name"] = "Restroom QC" + String(String.UnicodeScalarView(controls))
        let notes = try #require(fields.firstIndex { $0["label"] as? String == "Notes" })
        for i in fields.indices {
            let label = try #require(fields[i]["label"] as? String)
            fields[i]["label"] = Self.carrying(controls[i % controls.count], label)
        }
        let odor = try #require(fields.firstIndex { $0["type"] as? String == "radio" })
        fields[odor]["options"] = ["Go\u{202E}od", "Acceptable", "Poor"]
        schema["fields"] = fields
        template["form_schema"] = schema
        templates[index] = template
        reference["templates"] = templates
        let file = directory.appending("reference.json")
        try JSONSerialization.data(withJSONObject: reference).write(to: URL(fileURLWithPath: file))

        let jqc = JQCRunner(ledger: directory.appending("ledger"))
        #expect(try jqc("init").status == 0)
        let pulled = try jqc("pull", "--from", file)
        #expect(pulled.status == 0, "\(pulled.stderr)")
        let started = try jqc.run([
            "--as", "Dana", "--json", "start", "--template", "11", "--facility", "Riverside Medical Center",
        ])
        #expect(started.status == 0, "\(started.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(started.stdout.utf8)) as? [String: Any]
        let id = String(try #require(object?["id"] as? String).prefix(8))
        let odorLabel = try #require(fields[odor]["label"] as? String)
        let notesLabel = try #require(fields[notes]["label"] as? String)
        for (field, value) in [(odorLabel, "Go\u{202E}od"), (notesLabel, "left\u{2067}right\u{2069} \u{200F}end")] {
            let set = try jqc.run(["--as", "Dana\u{202E}", "set", id, field, value])
            #expect(set.status == 0, "\(set.stderr)")
        }
        let report = directory.appending("report.html")
        let audit = try jqc("audit", id, "--format", "html", "-o", report)
        #expect(audit.status == 0, "\(audit.stderr)")
        let html = String(decoding: try #require(FileManager.default.contents(atPath: report)), as: UTF8.self)
        let raw = html.unicodeScalars.filter { controls.contains($0) }
        #expect(raw.isEmpty, "the report holds \(raw.count) raw bidi controls")
        #expect(html.contains(#"Go\u{202E}od"#), "the option's value is not shown escaped")
        #expect(html.contains(#"\u{2067}right\u{2069}"#))
        #expect(html.contains(#"\u{61C}"#), "a label's control is not shown escaped")
    }
}
