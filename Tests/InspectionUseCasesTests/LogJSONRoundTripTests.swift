import Foundation
import InspectionAudit
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// The lines of `jqc --json log`, read back by another JSON parser
/// (Foundation's), hold what the log recorded: every envelope member, the
/// actor's hostile name and each answer's hostile text exactly, and each
/// event's payload as `jsonObject` has it. The answers are long enough
/// that the listing reaches standard output in many blocks, written behind
/// the formatting (`TextOutput`), which must keep them whole and in order.
@Suite struct LogJSONRoundTripTests {
    static let forger = "Mallory \"M\" \\ \u{1B}[2K\r\u{2028}Dana\u{2029} \u{1}\u{7F}\u{85}"
    /// Quotes, backslashes, control bytes, DEL, C1, non-ASCII, the line and
    /// paragraph separators, bidi marks: each repeated past 40 KiB.
    static let notes = [
        "quote \" and backslash \\ ", "line\nbreak\r\ttab\u{8}\u{C} ", "esc \u{1B}[8m \u{1}\u{1F} ",
        "del \u{7F} c1 \u{85}\u{9B} ", "é, 漢字, 🧯 ", "separators \u{2028} and \u{2029} ",
        "bidi \u{202E}x\u{202C} \u{61C}\u{200F}\u{2066}\u{2069} ", "plain text ",
    ].map { String(repeating: $0, count: 40_960 / $0.utf8.count + 1) }

    @Test func eachJSONLineReadsBackAsWhatWasRecorded() throws {
        let directory = TemporaryDirectory()
        let jqc = try JQCRunner.pulled(in: directory, name: "ledger")
        let started = try jqc.run([
            "--as", Self.forger, "--json", "start", "--template", "Restroom QC", "--facility",
            "Riverside Medical Center",
        ])
        try #require(started.status == 0, "\(started.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(started.stdout.utf8)) as? [String: Any]
        let id = try #require(object?["id"] as? String)
        for note in Self.notes {
            let set = try jqc.run(["--as", Self.forger, "set", id, "Notes", note])
            try #require(set.status == 0, "set Notes: \(set.stderr)")
        }
        #expect(try jqc.run(["--as", Self.forger, "clear", id, "Notes"]).status == 0)
        let json = try jqc.run(["--json", "log"])
        #expect(json.status == 0 && json.stderr.isEmpty, "\(json.stderr)")
        // Several of the listing's 64 KiB blocks.
        #expect(json.stdout.utf8.count > 4 << 16)
        let records = try LogThroughJQCTests.records(in: jqc.ledger)
        let lines = json.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        try #require(lines.count == records.count + 1 && lines.last == "")
        var texts: [String] = []
        for (record, line) in zip(records, lines) {
            let read = try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(record.position)")
            try Self.expectEnvelope(read, of: record)
            let event = try InspectionEvent.decode(record)
            let payload = try #require(read["payload"])
            #expect(event.jsonObject.isFoundationReading(payload), "\(record.position) \(record.type): \(payload)")
            if case .fieldSet(let answer) = event, case .text(let text) = answer.value,
                let member = payload as? [String: Any], let value = member["value"] as? String
            {
                #expect(value == text)
                texts.append(value)
            }
        }
        #expect(texts == Self.notes)
    }

    /// The envelope's members, each the record's.
    static func expectEnvelope(_ read: [String: Any], of record: EventRecord) throws {
        #expect(read["position"] as? Int == Int(record.position))
        #expect(read["id"] as? String == record.id.lowercased)
        #expect(read["stream"] as? String == record.stream.lowercased)
        #expect(read["stream_version"] as? Int == Int(record.streamVersion))
        #expect(read["type"] as? String == record.type)
        #expect(read["schema_version"] as? Int == record.schemaVersion)
        #expect(read["device"] as? String == record.device.lowercased)
        #expect(read["recorded_at"] as? String == record.recordedAt.iso8601)
        #expect(read["recorded_at_us"] as? Int == Int(record.recordedAt.microsecondsSinceEpoch))
        let actor = try #require(read["actor"] as? [String: Any])
        #expect(actor["id"] as? String == record.actor.id)
        #expect(actor["name"] as? String == record.actor.name)
        #expect(actor["verified"] as? Bool == record.actor.verified)
    }
}
