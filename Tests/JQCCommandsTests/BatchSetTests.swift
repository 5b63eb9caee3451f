import Foundation
import LedgerTestSupport
import Testing

/// `jqc set` with many answers, and two writers on one inspection at once,
/// through the built `jqc` binary.
@Suite struct BatchSetTests {
    let directory = TemporaryDirectory()
    let jqc: JQCRunner

    /// The fields of the 40-field template: each type in turn, with what to answer.
    static let kinds: [(type: String, options: [String]?, answer: String)] = [
        ("text", nil, "Kim"), ("number", nil, "12"), ("rating", nil, "4"), ("pass_fail", nil, "pass"),
        ("checkbox", nil, "yes"), ("date", nil, "2026-11-30"), ("select", ["Day", "Night"], "Night"),
        ("radio", ["Good", "Poor"], "Good"), ("checkbox_group", ["A", "B", "C"], "A,C"),
        ("email", nil, "kim@example.com"),
    ]

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger")).reportingKinds
        try #require(jqc("init").status == 0)
        try #require(jqc("pull", "--from", try writeReference()).status == 0)
    }

    /// The sample facilities and templates, plus "Forty fields" (id 40).
    func writeReference() throws -> String {
        let sample = try Data(contentsOf: URL(fileURLWithPath: SampleReference.path))
        var reference = try #require(try JSONSerialization.jsonObject(with: sample) as? [String: Any])
        var fields: [[String: Any]] = []
        for i in 1...40 {
            let kind = Self.kinds[(i - 1) % Self.kinds.count]
            var field: [String: Any] = [
                "id": i, "type": kind.type, "label": "Field \(i)", "col": 1, "row": i, "colSpan": 12, "rowSpan": 1,
                "required": i % 7 == 0,
            ]
            if let options = kind.options { field["options"] = options }
            fields.append(field)
        }
        var templates = try #require(reference["templates"] as? [[String: Any]])
        templates.append(["id": 40, "name": "Forty fields", "version": 1, "form_schema": ["fields": fields]])
        reference["templates"] = templates
        let path = directory.appending("reference.json")
        try JSONSerialization.data(withJSONObject: reference).write(to: URL(fileURLWithPath: path))
        return path
    }

    func start(_ template: String = "Forty fields") throws -> String {
        let result = try jqc.run(
            ["--as", "Dana", "start", "--template", template, "--facility", "Riverside Medical Center", "--json"])
        try #require(result.status == 0, "start failed: \(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        return try #require(object["id"] as? String)
    }

    /// The last committed LMDB transaction id, read from the newer of the two
    /// meta pages of `data.mdb` (`mm_txnid`, 144 bytes into the page; the
    /// page size is the free database's `md_pad`, 40 bytes in).
    func committedTransactions() throws -> UInt64 {
        let data = try Data(contentsOf: URL(fileURLWithPath: directory.appending("ledger/store/data.mdb")))
        func integer<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
            var value: T = 0
            for i in (0..<MemoryLayout<T>.size).reversed() { value = value << 8 | T(data[offset + i]) }
            return value
        }
        let pageSize = Int(integer(UInt32.self, at: 40))
        return max(integer(UInt64.self, at: 144), integer(UInt64.self, at: pageSize + 144))
    }

    func eventCount() throws -> Int {
        let result = try jqc("stats", "--json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        return try #require(object["events"] as? Int)
    }

    func answers(_ id: String) throws -> [String: Any] {
        let result = try jqc("show", id, "--json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let fields = try #require(object["fields"] as? [[String: Any]])
        return Dictionary(uniqueKeysWithValues: fields.map { ($0["id"] as! String, $0["value"] as Any) })
    }

    @Test func fortyAnswersAreOneCommit() throws {
        let id = try start()
        let words = (1...40).map { "Field \($0)=\(Self.kinds[($0 - 1) % Self.kinds.count].answer)" }
        let (transactions, events) = (try committedTransactions(), try eventCount())
        let set = try jqc.run(["--as", "Dana", "set", String(id.prefix(8))] + words)
        #expect(set.status == 0, "\(set.stderr)")
        #expect(try committedTransactions() == transactions + 1)
        #expect(try eventCount() == events + 40)
        let recorded = try answers(id)
        #expect(recorded["3"] as? Int == 4)
        #expect(recorded["9"] as? [String] == ["A", "C"])
        #expect(recorded["40"] as? String == "kim@example.com")
    }

    @Test func aRefusalInTheBatchRecordsNothingAndNamesEveryMisfit() throws {
        let id = try start()
        let (transactions, events) = (try committedTransactions(), try eventCount())
        let set = try jqc.run([
            "--as", "Dana", "set", id, "Field 1=Kim", "Field 3=9", "Field 2=many", "Field 4=pass", "Nowhere=1",
        ])
        #expect(set.status == 1)
        #expect(set.errorKind == "RecordingError.batchRefused", "\(set.stderr)")
        let detail = try #require(set.errorDetail, "\(set.stderr)")
        let refusals = try #require(detail["refusals"] as? [[String: Any]])
        #expect(refusals.count == 3 && detail["answers"] as? Int == 5, "3 of 5 answers do not fit: \(set.stderr)")
        #expect(
            refusals.map { $0["kind"] as? String } == [
                "DomainError.valueRefused", "DomainError.valueRefused", "DomainError.unknownField",
            ])
        #expect(refusals.map { ($0["field"] ?? $0["reference"]) as? String } == ["3", "2", "Nowhere"], "\(set.stderr)")
        #expect(try committedTransactions() == transactions)
        #expect(try eventCount() == events)
        #expect(try answers(id)["1"] is NSNull)
    }

    @Test func answersFromAFileRoundTripThroughShow() throws {
        let first = try start()
        let words = (1...10).map { "Field \($0)=\(Self.kinds[$0 - 1].answer)" }
        #expect(try jqc.run(["--as", "Dana", "set", first] + words).status == 0)
        let shown = try jqc("show", first, "--json")
        let file = directory.appending("answers.json")
        try Data(shown.stdout.utf8).write(to: URL(fileURLWithPath: file))

        // The same answers on another inspection: ten events in one commit.
        let second = try start()
        let transactions = try committedTransactions()
        let copy = try jqc("--as", "Dana", "set", second, "--from", file)
        #expect(copy.status == 0, "\(copy.stderr)")
        #expect(try committedTransactions() == transactions + 1)
        let (a, b) = (try answers(first), try answers(second))
        for key in (1...10).map(\.description) {
            #expect("\(a[key] ?? "absent")" == "\(b[key] ?? "absent")", "field \(key)")
        }
        // Again: nothing changes, nothing is committed.
        #expect(try jqc("--as", "Dana", "set", second, "--from", file).status == 0)
        #expect(try committedTransactions() == transactions + 1)
        // null clears, and an object of answers is read too.
        try Data(#"{"Field 1": null, "2": 13}"#.utf8).write(to: URL(fileURLWithPath: file))
        #expect(try jqc("--as", "Dana", "set", second, "--from", file).status == 0)
        #expect(try answers(second)["1"] is NSNull)
        #expect(try answers(second)["2"] as? Int == 13)
    }

    @Test func theTwoWordFormStillWorksAndFieldEqualsNothingClears() throws {
        let id = try start("Restroom QC")
        #expect(try jqc("--as", "Dana", "set", id, "Floors", "4").status == 0)
        #expect(try jqc("--as", "Dana", "set", id, "Notes", "a=b").status == 0)
        #expect(try answers(id)["9"] as? String == "a=b")
        #expect(try jqc("--as", "Dana", "set", id, "Floors=", "Odor=Acceptable").status == 0)
        #expect(try answers(id)["2"] is NSNull)
        let usage = try jqc("--as", "Dana", "set", id, "Floors")
        #expect(usage.status == 2)
        #expect(usage.errorKind == "UsageError.invalidValue", "\(usage.stderr)")
    }

    /// Two loops of `set` on different fields of one inspection, as two
    /// processes at once: every command is recorded, none refused.
    @Test func twoParallelLoopsOnDifferentFieldsBothFinish() throws {
        let id = try start("Restroom QC")
        let events = try eventCount()
        let rounds = 30
        // Each round changes the field, so each command records an event.
        let loops: [(field: String, values: [String])] = [
            ("Floors", (0..<rounds).map { "\($0 % 5 + 1)" }), ("Notes", (0..<rounds).map { "note \($0)" }),
        ]
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: loops.count) { loop in
            for round in 0..<rounds {
                do {
                    let result = try jqc("--as", "Dana", "set", id, loops[loop].field, loops[loop].values[round])
                    if result.status != 0 { failures.add("\(loops[loop].field) \(round): \(result.stderr)") }
                } catch {
                    failures.add("\(error)")
                }
            }
        }
        #expect(failures.all.count == 0, "\(failures.all.count) refused: \(failures.all.prefix(3))")
        #expect(try eventCount() == events + 2 * rounds)
    }
}

/// Failures collected from concurrent loops.
final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func add(_ item: String) {
        lock.lock()
        items.append(item)
        lock.unlock()
    }
    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }
}
