import Foundation
import InspectionAudit
import InspectionDomain
import LedgerCore
import Testing

@Suite struct AuditReportRenderingTests {
    let records = AuditSamples.records(AuditSamples.everyEvent())

    func json(_ report: AuditReport) throws -> [String: Any] {
        let text = report.jsonValue.prettyPrinted()
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func theVerdictComesFirstInEveryRendering() throws {
        let report = AuditSamples.report(records)
        #expect(report.isClean)
        #expect(report.headline == "INTACT")
        #expect(report.text.split(separator: "\n")[1] == "RESULT: INTACT")
        let object = try json(report)
        #expect(Array(object.keys).contains("verification"))
        #expect((object["result"] as? [String: Any])?["clean"] as? Bool == true)
        let html = report.html
        let verdict = try #require(html.range(of: "<h1>INTACT</h1>"))
        let timeline = try #require(html.range(of: "id=\"timeline\""))
        #expect(verdict.lowerBound < timeline.lowerBound)
    }

    @Test func aBrokenChainIsStatedAndFailsTheRecordItNames() throws {
        let chain = ChainCheck(
            result: .notIntact(
                .init(
                    kind: .changed, position: 4,
                    message: "record 4 was changed after it was written: its bytes no longer match the hash chain")),
            checked: 3, head: LedgerDigest(position: 3, head: .zero), digest: nil, verifiedThrough: 3, seconds: 0.001)
        let report = AuditSamples.report(records, chain: chain)
        #expect(!report.isClean)
        #expect(report.headline.hasPrefix("NOT INTACT: record 4 was changed"))
        #expect(chain.standing(of: 3) == .verified)
        #expect(chain.standing(of: 4) == .failed)
        #expect(chain.standing(of: 5) == .notVerified)
        let timeline = try #require(try json(report)["timeline"] as? [[String: Any]])
        #expect(timeline[3]["chain"] as? String == "failed")
        #expect(report.text.contains("FAILS THE CHAIN CHECK"))
        #expect(report.html.contains("class=\"verdict broken\""))
    }

    @Test func aWrongDigestProvesNoRangeOfRecords() throws {
        let chain = ChainCheck(
            result: .notIntact(
                .init(kind: .digestMismatch, position: 18, message: "the log no longer extends the digest")),
            checked: 18, head: LedgerDigest(position: 18, head: .zero), digest: nil, verifiedThrough: 0, seconds: 0.001)
        let report = AuditSamples.report(records, chain: chain)
        #expect(!report.text.contains("1–0"))
        #expect(!report.html.contains("1–0"))
        #expect(report.text.contains("no record is proven unchanged"))
        #expect(report.html.contains("No record is proven unchanged"))
    }

    @Test func photoFilesThatNoLongerMatchAreProblems() throws {
        let first = AuditSamples.photo(1).sha256.hex
        let second = AuditSamples.photo(2).sha256.hex
        let report = AuditSamples.report(
            records,
            files: [
                first: PhotoFile(status: .missing, contents: nil),
                second: PhotoFile(status: .altered(actualSHA256: String(repeating: "a", count: 64)), contents: [1]),
            ])
        #expect(report.problems.count == 2)
        #expect(report.headline == "INTACT chain, but 2 problems found")
        let photos = try #require(try json(report)["photos"] as? [[String: Any]])
        #expect((photos[0]["file"] as? [String: Any])?["status"] as? String == "missing")
        #expect((photos[1]["file"] as? [String: Any])?["actual_sha256"] as? String == String(repeating: "a", count: 64))
        #expect(report.text.contains("FILE MISSING"))
        #expect(report.html.contains("ALTERED: the stored file now hashes to"))
    }

    @Test func theFormHasEveryKeyOfShowAndItsLayout() throws {
        let report = AuditSamples.report(records)
        let form = try #require(try json(report)["form"] as? [String: Any])
        for key in [
            "id", "status", "template", "facility", "area", "parent_id", "started_at", "started_by", "completed_at",
            "score", "score_so_far", "follow_up_required", "follow_up_resolved_by", "fields", "missing_required",
            "issues", "photos", "sync",
        ] {
            #expect(form.keys.contains(key), "form lacks \(key)")
        }
        let fields = try #require(form["fields"] as? [[String: Any]])
        #expect(fields.map { $0["id"] as? String } == ["2", "5", "9", "10", "11"])
        #expect(fields[0]["value"] as? Int == 4)
        #expect(fields[4]["row_span"] as? Int == 2)
        #expect(form["started_by"] as? String == "dana")
    }

    @Test func theHTMLIsSelfContainedAndLaidOutOnTheGrid() {
        let html = AuditSamples.report(records).html
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("default-src 'none'; img-src data:"))
        #expect(!html.contains("<script"))
        #expect(!html.contains("http://") && !html.contains("https://"))
        #expect(html.contains("grid-template-columns: repeat(12, minmax(0, 1fr))"))
        #expect(html.contains("style=\"grid-column: 7 / span 6; grid-row: 4 / span 2\""))
        // The field's photo is embedded once, in the grid; the issue's photo in the list.
        #expect(html.components(separatedBy: "<img src=\"data:image/png;base64,iVBORw==\"").count == 3)
        #expect(html.contains(AuditSamples.photo(1).sha256.hex))
        for position in 1...records.count { #expect(html.contains("id=\"event-\(position)\"")) }
    }

    @Test func hostileTextIsEscapedInHTML() {
        var events = AuditSamples.everyEvent()
        events[9] = (
            .issueFlagged(
                IssueFlagged(
                    issueID: AuditSamples.issue, severity: .high, description: "<script>alert(1)</script> & \"x\"")),
            AuditSamples.dana
        )
        let html = AuditSamples.report(AuditSamples.records(events)).html
        #expect(!html.contains("<script>alert"))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;"))
    }

    @Test func prettyJSONKeepsMemberOrderAndParses() throws {
        let value = JSONValue.object([
            .init("b", .array([.integer(1), .object([])])), .init("a", .string("é\n")), .init("c", .array([])),
        ])
        let text = value.prettyPrinted()
        #expect(text == "{\n  \"b\": [\n    1,\n    {}\n  ],\n  \"a\": \"é\\n\",\n  \"c\": []\n}")
        #expect(try JSONValue(parsing: text) == value)
    }
}
