import Foundation
import InspectionAudit
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// `jqc log` through the built `jqc`: each answer's line, written as bytes,
/// is its words as `EventWording.describe` makes them, shown through
/// `TerminalText.singleLine`; each JSON line is `EventExport.jsonLine`. The
/// answers are hostile text a person could type, a forged `--as` name, and
/// values of every kind the sample template holds.
@Suite struct LogThroughJQCTests {
    static let forger = "Mallory\u{1B}[2K\rDana Inspector"
    static let notes = [
        "plain", "quote \" and backslash \\", "line\nbreak\r\ttab", "esc \u{1B}[8m", "del \u{7F}", "é, 漢字, 🧯",
        "bidi \u{202E}override", "c1 \u{85}", "mark \u{61C}\u{200F}", "isolate \u{2066}x\u{2069}", "a → b… —",
    ]
    static let answers = [
        ("Floors", "4"), ("Floors", "2"), ("Soap dispensers stocked", "pass"), ("Trash emptied", "true"),
        ("Odor", "Poor"),
    ]

    @Test func eachLineIsItsWordsAndEachJSONLineItsExport() throws {
        let directory = TemporaryDirectory()
        let jqc = try JQCRunner.pulled(in: directory, name: "ledger")
        let started = try jqc.run([
            "--as", Self.forger, "--json", "start", "--template", "Restroom QC", "--facility",
            "Riverside Medical Center",
        ])
        #expect(started.status == 0, "\(started.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(started.stdout.utf8)) as? [String: Any]
        let id = try #require(object?["id"] as? String)
        for (field, value) in Self.notes.map({ ("Notes", $0) }) + Self.answers {
            let set = try jqc.run(["--as", Self.forger, "set", id, field, value])
            #expect(set.status == 0, "set \(field) \(value): \(set.stderr)")
        }
        #expect(try jqc.run(["--as", Self.forger, "clear", id, "Notes"]).status == 0)
        let text = try jqc.run(["log"])
        let json = try jqc.run(["--json", "log"])
        #expect(text.status == 0 && json.status == 0, "\(text.stderr) \(json.stderr)")
        let records = try Self.records(in: jqc.ledger)
        let lines = text.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        let jsonLines = json.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        try #require(lines.count == records.count && jsonLines.count == records.count)
        var template: Template?
        var worded = 0
        for (index, record) in records.enumerated() {
            let event = try InspectionEvent.decode(record)
            if case .templatePinned(let pinned) = event { template = pinned.template }
            #expect(String(jsonLines[index]) == EventExport.jsonLine(for: record, event: event))
            switch event {
            case .fieldSet, .fieldCleared:
                worded += 1
                #expect(String(lines[index]) == Self.line(record, event, template))
            default:
                break
            }
        }
        #expect(worded == Self.notes.count + Self.answers.count + 1)
    }

    /// The line the String forms make: the line's start as `LogFilter`
    /// writes it, the words through `singleLine`.
    static func line(_ record: EventRecord, _ event: InspectionEvent, _ template: Template?) -> String {
        let words = EventWording.describe(event, stream: record.stream, template: template)
        return LogFilter.line(for: record, summary: "") + TerminalText.singleLine(words)
    }

    static func records(in ledger: String) throws -> [EventRecord] {
        let auditor = try AuditorLedger.open(LedgerDirectory(path: ledger), views: false)
        defer { auditor.close() }
        var records: [EventRecord] = []
        try auditor.log.read { reader in
            try reader.scan { entry in
                if case .record(let record) = entry { records.append(record) }
                return true
            }
        }
        return records
    }
}
