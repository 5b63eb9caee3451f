import Foundation
import InspectionAudit
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// The listing of `jqc log` without `jqc`: the events a filter selects, of
/// the whole log or of one inspection, worded through the pinned template
/// or exported as JSON, and who acted.
@Suite struct LogListingTests {
    /// What a listing wrote, line by line.
    final class Collected: LogOutput {
        let json: Bool
        let isTerminal: Bool
        var lines: [String] = []
        var notes: [String] = []
        /// The reader goes away once it has this many lines.
        let goneAfter: Int?
        var readerIsGone: Bool { goneAfter.map { lines.count >= $0 } ?? false }
        init(json: Bool, isTerminal: Bool = false, goneAfter: Int? = nil) {
            self.json = json
            self.isTerminal = isTerminal
            self.goneAfter = goneAfter
        }
        func write(utf8 bytes: [UInt8]) {
            lines += String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        }
        func line(_ text: String) { lines.append(text) }
        func note(_ text: String) { notes.append(text) }
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var limit: Int?
        var byInspection: Bool
        var json: Bool
        var testDescription: String { name }
    }

    static let cases = [
        Case(name: "the whole log in text", limit: nil, byInspection: false, json: false),
        Case(name: "one inspection in text", limit: nil, byInspection: true, json: false),
        Case(name: "the whole log as JSON", limit: nil, byInspection: false, json: true),
        Case(name: "the first two", limit: 2, byInspection: false, json: false),
        Case(name: "one inspection's first three as JSON", limit: 3, byInspection: true, json: true),
    ]

    @Test(arguments: cases)
    func theSelectedEventsArePrintedOneLineEach(_ test: Case) throws {
        let audited = try AuditAssemblyTests.Audited()
        let records = Int(try audited.records())
        let auditor = try AuditorLedger.open(audited.directory, views: true)
        defer { auditor.close() }
        let output = Collected(json: test.json)
        let filter = LogFilter(since: nil, until: nil, actor: nil, types: [], limit: test.limit)
        let printed = try LogListing(auditor: auditor, filter: filter).print(
            inspection: test.byInspection ? String(audited.inspection.lowercased.prefix(8)) : nil, to: output)
        let expected = min(records, test.limit ?? records)
        #expect(printed == expected)
        #expect(output.lines.count == expected)
        #expect(output.notes.isEmpty)
        if test.json {
            for line in output.lines { _ = try JSONValue(parsing: Array(line.utf8)) }
            // The pin and the start come first, then the two answers.
            #expect(output.lines.filter { $0.contains("inspection.field_set") }.count == max(0, expected - 2))
        } else if test.limit == nil {
            // Fields are named through the template the inspection pinned.
            #expect(output.lines.contains { $0.contains("Notes") && $0.contains("second") })
        }
    }

    /// The reading thread decodes an admitted record only when it is ahead
    /// of the printer (else the printer decodes it); a record the filter
    /// leaves out is passed over either way.
    @Test(arguments: [false, true])
    func theReaderDecodesOnlyWhenAhead(ahead: Bool) throws {
        let audited = try AuditAssemblyTests.Audited()
        let auditor = try AuditorLedger.open(audited.directory, views: true)
        defer { auditor.close() }
        let records = try auditor.history(of: audited.inspection).compactMap { entry -> EventRecord? in
            if case .record(let record) = entry { return record }
            return nil
        }
        let answer = try #require(records.last)
        let everything = LogPrinter.preparation(for: LogFilter())
        guard case .pass(let decoded) = everything(answer, ahead) else {
            Issue.record("an admitted record was passed over")
            return
        }
        let expected = try InspectionEvent.decode(answer)
        #expect(decoded == (ahead ? expected : nil))
        let onlySync = LogPrinter.preparation(for: LogFilter(types: ["sync"]))
        guard case .skip = onlySync(answer, ahead) else {
            Issue.record("a record the filter leaves out reached the printer")
            return
        }
    }

    /// A reader that went away (`jqc log | head -2`) stops the listing at
    /// the next line handed over (a terminal's: each line), of the whole
    /// log or of one inspection, instead of formatting the rest for nobody.
    @Test(arguments: [false, true])
    func aReaderThatWentAwayStopsTheListing(byInspection: Bool) throws {
        let audited = try AuditAssemblyTests.Audited()
        #expect(try audited.records() > 3)
        let auditor = try AuditorLedger.open(audited.directory, views: true)
        defer { auditor.close() }
        let output = Collected(json: false, isTerminal: true, goneAfter: 2)
        let printed = try LogListing(auditor: auditor, filter: LogFilter()).print(
            inspection: byInspection ? audited.inspection.lowercased : nil, to: output)
        #expect(printed == 2)
        #expect(output.lines.count == 2)
    }

    @Test func aTypeNoEventHasPrintsNothing() throws {
        let audited = try AuditAssemblyTests.Audited()
        let auditor = try AuditorLedger.open(audited.directory, views: true)
        defer { auditor.close() }
        let output = Collected(json: false)
        let filter = LogFilter(since: nil, until: nil, actor: nil, types: ["sync"], limit: nil)
        #expect(try LogListing(auditor: auditor, filter: filter).print(inspection: nil, to: output) == 0)
        #expect(output.lines.isEmpty)
    }

    @Test(arguments: [false, true])
    func whoActedIsCountedOnce(byInspection: Bool) throws {
        let audited = try AuditAssemblyTests.Audited()
        let records = try audited.records()
        let auditor = try AuditorLedger.open(audited.directory, views: true)
        defer { auditor.close() }
        let filter = LogFilter(since: nil, until: nil, actor: nil, types: [], limit: 1)
        let rows = try LogActors.count(
            filter: filter, inspection: byInspection ? audited.inspection.lowercased : nil, in: auditor)
        #expect(rows.map(\.actor) == [audited.actor])
        #expect(rows.first?.events == Int(records))
        #expect(rows.first?.first == 1)
        #expect(rows.first?.last == records)
    }
}
