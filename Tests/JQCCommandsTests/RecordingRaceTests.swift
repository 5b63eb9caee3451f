import Foundation
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerStore
import LedgerTestSupport
import Synchronization
import Testing

@testable import JQCCommands

/// What a recording command does when another `jqc` records to the same
/// inspection between its read and its append, and who it records as.
/// The other writer runs inside the `before` hook, which `record` calls after
/// deciding and before appending: the race, made deterministic.
@Suite struct RecordingRaceTests {
    let directory = TemporaryDirectory()
    let jqc: JQCRunner
    let id: String

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger"))
        try #require(jqc("init").status == 0)
        try #require(jqc("pull", "--from", SampleReference.path).status == 0)
        let started = try jqc("--as", "Dana", "start", "-t", "11", "-f", "101", "--json")
        let object = try JSONSerialization.jsonObject(with: Data(started.stdout.utf8)) as? [String: Any]
        id = try #require(object?["id"] as? String)
        try #require(try jqc("--as", "Dana", "set", id, "2=4", "3=4", "5=pass").status == 0)
    }

    func invocation(actingAs name: String? = "Dana") -> Invocation {
        Invocation(
            home: LedgerDirectory(path: directory.appending("ledger")), environment: [:], stdout: TextOutput(),
            stderr: TextOutput(), clock: SystemClock(), json: false, actingAs: name)
    }

    func values() throws -> [String: Any] {
        let result = try jqc("show", id, "--json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let fields = try #require(object["fields"] as? [[String: Any]])
        return Dictionary(uniqueKeysWithValues: fields.map { ($0["id"] as! String, $0["value"] as Any) })
    }

    /// Runs `arguments` as another process the first time `record` is about to append.
    func otherWriter(_ arguments: [String]) -> () throws -> Void {
        let ran = Flag()
        return {
            guard !ran.isSet else { return }
            ran.set()
            let result = try jqc.run(arguments)
            #expect(result.status == 0, "the other writer failed: \(result.stderr)")
        }
    }

    @Test func aCommandThatStillAppliesIsDecidedAgainAndRecorded() throws {
        let inspection = try #require(UUID(uuidString: id))
        try invocation().record(
            .setField(field: "Notes", to: .text("mine")), on: inspection,
            before: otherWriter(["--as", "Kim", "set", id, "Floors", "2"]))
        let values = try values()
        #expect(values["9"] as? String == "mine")
        #expect(values["2"] as? Int == 2)
    }

    @Test func aCommandThatNoLongerAppliesIsRefusedSayingWhy() throws {
        let inspection = try #require(UUID(uuidString: id))
        let error = #expect(throws: RecordingError.self) {
            try invocation().record(
                .setField(field: "Notes", to: .text("late")), on: inspection,
                before: otherWriter(["--as", "Kim", "submit", id]))
        }
        let message = error.map(JQC.message(for:)) ?? ""
        guard case .noLongerApplies(let recordedTo, let refusal)? = error else {
            Issue.record("not a command that no longer applies: \(message)")
            return
        }
        #expect(recordedTo == inspection, "another command recorded to inspection \(id) at the same moment")
        // Told with its advice (start a re-inspection): the refusal it carries.
        let domain = (refusal as? AdvisedRefusal)?.refusal ?? (refusal as? DomainError)
        guard case .inspectionNotEditable(_, let status)? = domain else {
            Issue.record("not refused as no longer editable: \(message)")
            return
        }
        #expect(status == .completed, "it is completed: \(message)")
        #expect(try values()["9"] is NSNull)
    }

    @Test func theLoggedInUserWinsOverAs() throws {
        // A saved session as 'jqc login' leaves it (mode 0600).
        let session = """
            {"user": {"id": "7", "username": "dana", "role": "inspector", "display_name": "Dana Reyes"},
             "tokens": {"access_token": "a", "refresh_token": "r"},
             "server_url": "http://127.0.0.1:9", "saved_at": "2026-12-01T08:00:00Z"}
            """
        let path = directory.appending("ledger/credentials.json")
        #expect(
            FileManager.default.createFile(
                atPath: path, contents: Data(session.utf8), attributes: [.posixPermissions: 0o600]))
        let result = try jqc("--as", "Mallory", "set", id, "Notes", "x")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("recording as Dana Reyes, who is logged in; --as Mallory is not used"))
        let log = try jqc("log", "--inspection", id, "--json")
        let last = try #require(log.stdout.split(separator: "\n").last)
        let event = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        let actor = try #require(event["actor"] as? [String: Any])
        #expect(actor["name"] as? String == "Dana Reyes")
        #expect(actor["verified"] as? Bool == true)
    }
}

/// A flag set once, read from a closure.
final class Flag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
