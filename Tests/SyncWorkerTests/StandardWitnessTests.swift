import CurlTransport
import Foundation
import HTTPCore
import InspectionDomain
import LedgerCore
import LedgerTestSupport
import Testing

/// The C2SP witnesses (`jqc witness`, `WitnessCosigning`) through the built
/// `jqc`, each case against both witnesses (`WitnessKind`): `Tools/witness`,
/// written from the specs only, and the development server's at `/witness`:
/// each outcome of `add-checkpoint` and what jqc makes of it.
@Suite struct StandardWitnessTests {
    /// A ledger made by `jqc init` with the reference data, no server.
    final class Device: @unchecked Sendable {
        let directory = TemporaryDirectory(prefix: "witnessed")
        var path: String { directory.appending("ledger") }
        var jqc: JQCRunner { JQCRunner(ledger: path, environment: ["JQC_ACTOR": "Dana"]) }

        init() throws {
            try #require(try jqc("init").status == 0)
            try #require(try jqc("pull", "--from", SampleReference.path).status == 0)
            // The device's key, made and published.
            try #require(try jqc("checkpoint").status == 0)
        }

        /// `jqc witness add` for `witness`, and its operator enrolling this log (unless `enrol` is false).
        func add(_ witness: any WitnessHost, enrol: Bool = true) throws {
            let added = try jqc("witness", "add", witness.url, "--key", witness.vkey)
            try #require(added.status == 0, "\(added.stderr)")
            if enrol { try witness.enrol(origin: try origin(), logKey: try logKey()) }
        }

        func logKey() throws -> String {
            try #require(try JSONValue(parsing: Array(try jqc("--json", "key").stdout.utf8))["in_force"]?.stringValue)
        }

        func origin() throws -> String { String(try logKey().split(separator: "+")[0]) }

        /// A new draft: a few more records.
        @discardableResult
        func record() throws -> String {
            let started = try jqc("--json", "start", "--template", "11", "--facility", "101")
            try #require(started.status == 0, "\(started.stderr)")
            return try #require(try JSONValue(parsing: Array(started.stdout.utf8))["id"]?.stringValue)
        }

        func size() throws -> Int64 {
            try #require(
                try JSONValue(parsing: Array(try jqc("--json", "checkpoint").stdout.utf8))["size"]?.integerValue)
        }

        /// `jqc --json witness sync` (checked against the schema): the round.
        func sync(kinds: Bool = false) throws -> (ProcessResult, JSONValue) {
            let run = try (kinds ? jqc.reportingKinds : jqc)("--json", "witness", "sync")
            #expect(try JSONSchemaCheck.validate("witness_round", run.stdout).status == 0, "\(run.stdout)")
            return (run, try JSONValue(parsing: run.stdout))
        }

        /// `jqc audit ID --format json`'s `verification.witness`.
        func auditedWitness(_ id: String) throws -> JSONValue? {
            try JSONValue(parsing: try jqc("audit", id, "--format", "json").stdout)["verification"]?["witness"]
        }

        /// The `checkpoint.cosigned` payloads of the log.
        func cosigned() throws -> [JSONValue] {
            try jqc("--json", "log").stdout.split(separator: "\n").compactMap { line in
                let event = try JSONValue(parsing: Array(line.utf8))
                return event["type"]?.stringValue == "checkpoint.cosigned" ? event["payload"] : nil
            }
        }
    }

    @Test(arguments: WitnessKind.allCases)
    func theFirstCosignatureAndASecondWithAConsistencyProofAreVerifiedAndKept(_ kind: WitnessKind) throws {
        let witness = try kind.start()
        let device = try Device()
        try device.add(witness)
        let (first, round) = try device.sync()
        #expect(first.status == 0, "\(first.stderr)")
        let only = round["witnesses"]?.arrayValue?.first
        #expect(only?["name"] == .string("witness.example/w1") && only?["url"] == .string(witness.url), "\(round)")
        #expect(only?["outcome"] == .string("cosigned"), "\(round)")
        #expect(round["cosigned"] == .integer(1) && round["witnesses"]?.arrayValue?.count == 1, "\(round)")
        let firstSize = try #require(try witness.heldSize(try device.origin()))
        try device.record()
        let second = try device.jqc("witness", "sync")
        #expect(second.status == 0, "\(second.stderr)")
        let secondSize = try #require(try witness.heldSize(try device.origin()))
        #expect(secondSize > firstSize + 1)
        let events = try device.cosigned()
        #expect(events.map { $0["size"]?.integerValue } == [firstSize, secondSize])
        #expect(events.allSatisfy { $0["witness"]?.stringValue == "witness.example/w1" })
        #expect(events.allSatisfy { $0["key_id"]?.stringValue == String(witness.vkey.split(separator: "+")[1]) })
        // The kept note: the device's checkpoint, then the witness's cosignature.
        let kept = try device.jqc("checkpoint", "--cosigned")
        #expect(kept.status == 0, "\(kept.stderr)")
        let lines = kept.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first.map(String.init) == (try device.origin()))
        #expect(lines[1] == "\(secondSize)")
        #expect(lines.contains { $0.hasPrefix("\u{2014} witness.example/w1 ") })
        // Nothing recorded since but its cosignature: nothing is sent again.
        let third = try device.sync().1["witnesses"]?.arrayValue?.first
        #expect(
            third?["outcome"] == .string("up_to_date") && third?["size"] == .integer(secondSize),
            "\(String(describing: third))")
        #expect(try device.cosigned().count == 2)
    }

    /// The witness holds a checkpoint this ledger never recorded a
    /// cosignature of (another submitter sent it): its 409 names the size,
    /// and jqc proves again from there, once.
    @Test(arguments: WitnessKind.allCases) func a409IsReprovenFromTheSizeItNames(_ kind: WitnessKind) throws {
        let witness = try kind.start()
        let device = try Device()
        try device.add(witness)
        let note = try device.jqc("checkpoint").stdout
        #expect(try witness.addCheckpoint(old: 0, note: note) == 200)
        let held = try #require(try witness.heldSize(try device.origin()))
        try device.record()
        let sync = try device.jqc("witness", "sync")
        #expect(sync.status == 0, "\(sync.stdout)\(sync.stderr)")
        #expect(try #require(try witness.heldSize(try device.origin())) > held)
        #expect(try device.cosigned().count == 1)
    }

    @Test(arguments: WitnessKind.allCases)
    func aWitnessThatDoesNotKnowTheLogSaysWhatToEnrol(_ kind: WitnessKind) throws {
        let witness = try kind.start()
        let device = try Device()
        try device.add(witness, enrol: false)
        let sync = try device.jqc("witness", "sync")
        #expect(sync.status == 1)
        let origin = try device.origin()
        #expect(
            sync.stdout.contains(
                "this witness does not know log \(origin); enrol it with the witness's operator: origin \(origin), "
                    + "key \(try device.logKey())"), "\(sync.stdout)")
        #expect(try device.cosigned().isEmpty)
    }

    @Test(arguments: WitnessKind.allCases)
    func aCosignatureThatDoesNotVerifyIsNotBelieved(_ kind: WitnessKind) throws {
        let witness = try kind.start(tamper: true)
        let device = try Device()
        try device.add(witness)
        let (sync, round) = try device.sync(kinds: true)
        #expect(sync.status == 1)
        let failed = round["witnesses"]?.arrayValue?.first
        #expect(failed?["outcome"] == .string("bad_cosignature"), "\(round)")
        #expect(failed?["name"] == .string("witness.example/w1") && failed?["url"] == .string(witness.url), "\(round)")
        #expect(sync.errorKind == "JQCError.verificationFailed", "\(sync.stderr)")
        #expect(try device.cosigned().isEmpty)
        #expect(try device.jqc("checkpoint", "--cosigned").status == 1)
    }

    /// (quorum set, exit status, the verdict): three witnesses, one down.
    static let quorums: [(String?, Int32, String)] = [
        ("2", 0, "witnesses: 2 of 3 cosigned the checkpoint of "),
        (nil, 1, "witnesses: 2 of 3 cosigned the checkpoint of "),
    ]

    @Test(arguments: WitnessKind.allCases, quorums.indices)
    func aQuorumOfTwoOfThreeIsMetWithOneWitnessDown(_ kind: WitnessKind, index: Int) throws {
        let (quorum, status, verdict) = Self.quorums[index]
        let witnesses = try ["w1", "w2", "w3"].map { try kind.start(name: "witness.example/\($0)") }
        let device = try Device()
        for witness in witnesses { try device.add(witness) }
        if let quorum { #expect(try device.jqc("config", "set", "witness-quorum", quorum).status == 0) }
        witnesses[2].stop()
        let id = try device.record()
        let sync = try device.jqc("witness", "sync")
        #expect(sync.status == status, "\(sync.stdout)\(sync.stderr)")
        #expect(sync.stdout.contains(verdict), "\(sync.stdout)")
        let (_, round) = try device.sync()
        let down = round["witnesses"]?.arrayValue?.last
        #expect(down?["url"] == .string(witnesses[2].url) && down?["outcome"] == .string("unreachable"), "\(round)")
        let audit = try device.jqc("audit", id)
        #expect(audit.stdout.contains("witness: cosigned by witness.example/w1 at "), "\(audit.stdout)")
        #expect(try device.auditedWitness(id)?["quorum_met"] == .bool(quorum != nil), "\(audit.stdout)")
    }

    /// A copy of the ledger (a backup) that records its own history after
    /// the original was cosigned further: the witness refuses it and jqc
    /// says it is a fork, naming both checkpoints.
    @Test(arguments: WitnessKind.allCases) func aCopysOwnHistoryIsRefusedAsAFork(_ kind: WitnessKind) throws {
        let witness = try kind.start()
        let device = try Device()
        try device.add(witness)
        #expect(try device.jqc("witness", "sync").status == 0)
        let copy = device.directory.appending("copy")
        #expect(try ProcessRun.run("/bin/cp", ["-a", device.path, copy]).status == 0)
        try device.record()
        #expect(try device.jqc("witness", "sync").status == 0)
        let original = try #require(try witness.heldSize(try device.origin()))
        let other = JQCRunner(ledger: copy, environment: ["JQC_ACTOR": "Dana"])
        for _ in 0..<2 {
            #expect(try other("start", "--template", "11", "--facility", "101").status == 0)
        }
        let refused = try other.reportingKinds("--json", "witness", "sync")
        #expect(refused.status == 1)
        let checkpoint = try JSONValue(parsing: Array(try other("--json", "checkpoint").stdout.utf8))
        let ours = try #require(checkpoint["size"]?.integerValue)
        #expect(ours > original)
        let forked = try JSONValue(parsing: refused.stdout)["witnesses"]?.arrayValue?.first
        #expect(forked?["outcome"] == .string("forked") && forked?["size"] == .integer(original), "\(refused.stdout)")
        #expect(refused.errorKind == "JQCError.verificationFailed", "\(refused.stderr)")
        #expect(try witness.heldSize(try device.origin()) == original)
    }

    /// (drafts the copy starts, whether it then holds as many records as the
    /// witness cosigned of the original): one draft is another history at
    /// the very size the witness holds (its second 409), two are a longer one
    /// (a 422 from that size).
    static let forks: [(drafts: Int, sameSize: Bool)] = [(1, true), (2, false)]

    /// A copy recording its own history: the witness's refusal is recorded
    /// once in the copy's device stream (`sync.checkpoint_witnessed`,
    /// refused, the witness's size) and said by `witness sync`, `status` and
    /// `audit` as a fork naming both checkpoints.
    @Test(arguments: WitnessKind.allCases, forks.indices)
    func aCopysForkIsRecordedOnceAndNamedWithBothCheckpoints(_ kind: WitnessKind, index: Int) throws {
        let (drafts, sameSize) = Self.forks[index]
        let witness = try kind.start()
        let device = try Device()
        try device.add(witness)
        #expect(try device.jqc("witness", "sync").status == 0)
        let copy = device.directory.appending("copy")
        #expect(try ProcessRun.run("/bin/cp", ["-a", device.path, copy]).status == 0)
        try device.record()
        #expect(try device.jqc("witness", "sync").status == 0)
        let held = try #require(try witness.heldSize(try device.origin()))
        let other = JQCRunner(ledger: copy, environment: ["JQC_ACTOR": "Dana"])
        var id = ""
        for _ in 0..<drafts {
            let started = try other("--json", "start", "--template", "11", "--facility", "101")
            id = try #require(try JSONValue(parsing: Array(started.stdout.utf8))["id"]?.stringValue)
        }
        let ours = try JSONValue(parsing: Array(try other("--json", "checkpoint").stdout.utf8))
        let (size, root) = (try #require(ours["size"]?.integerValue), try #require(ours["root"]?.stringValue))
        #expect((size == held) == sameSize)
        let both =
            "the witness's checkpoint: \(held) records, root not this ledger's; this ledger's root at \(held) "
            + "records: " + (sameSize ? root + "; " : "")
        let checkpoint = "this ledger's checkpoint: \(size) records, root \(root)"
        for attempt in 0..<2 {
            let refused = try other("--json", "witness", "sync")
            #expect(refused.status == 1)
            let forked = try JSONValue(parsing: refused.stdout)["witnesses"]?.arrayValue?.first
            #expect(forked?["outcome"] == .string("forked") && forked?["size"] == .integer(held), "\(refused.stdout)")
            #expect(refused.stderr.contains(both), "\(refused.stderr)")
            // The second submission is of a checkpoint one record longer: the fork's own record.
            #expect(refused.stderr.contains(checkpoint) == (attempt == 0), "\(refused.stderr)")
        }
        // Recorded once, though seen twice.
        let recorded = try other("--json", "log").stdout.split(separator: "\n").compactMap { line in
            let event = try JSONValue(parsing: Array(line.utf8))
            return event["type"]?.stringValue == "sync.checkpoint_witnessed" ? event["payload"] : nil
        }
        #expect(recorded.count == 1)
        #expect(recorded.first?["outcome"]?.stringValue == "refused")
        #expect(recorded.first?["server"]?.stringValue == witness.url)
        #expect(recorded.first?["size"]?.integerValue == held)
        #expect(recorded.first?["message"]?.stringValue?.hasPrefix("FORK of this device") == true)
        let status = try other("status")
        #expect(status.stdout.contains("FORK of this device"), "\(status.stdout)")
        #expect(status.stdout.contains(both) && status.stdout.contains(checkpoint), "\(status.stdout)")
        try Self.expectForked(other, id, naming: [both, checkpoint])
        // Said still with the witness removed: the record is in the log.
        #expect(try other("witness", "remove", witness.url).status == 0)
        try Self.expectForked(other, id, naming: [both, checkpoint])
        // The original, whose history the witness holds, has no fork to say.
        #expect(!(try device.jqc("status").stdout.contains("FORK")))
        let intact = try device.jqc("audit", try device.record(), "--format", "json")
        #expect(intact.status == 0, "\(intact.stdout)")
        #expect(try JSONValue(parsing: intact.stdout)["result"]?["verdict"] == .string("INTACT"), "\(intact.stdout)")
    }

    /// `jqc audit id` of a ledger whose device stream records a fork a
    /// witness reported: FORKED, exit status 1, in text, JSON and HTML
    /// alike, each naming both checkpoints (`naming`).
    static func expectForked(_ jqc: JQCRunner, _ id: String, naming: [String]) throws {
        let problem = "(this ledger's own) has two histories: a witness cosigned one this ledger does not extend"
        let text = try jqc("audit", id)
        #expect(text.status == 1, "\(text.stdout)")
        #expect(text.stdout.contains("RESULT: FORKED: 1 fork of a device whose records it holds"), "\(text.stdout)")
        #expect(text.stdout.contains("witness: FORK of this device"), "\(text.stdout)")
        #expect(text.stdout.contains(problem), "\(text.stdout)")
        #expect(naming.allSatisfy(text.stdout.contains), "\(text.stdout)")
        #expect(text.stderr.contains("FORKED"), "\(text.stderr)")
        let json = try jqc("audit", id, "--format", "json")
        #expect(json.status == 1, "\(json.stdout)")
        #expect(try JSONSchemaCheck.validate("audit", json.stdout).status == 0)
        let report = try JSONValue(parsing: Array(json.stdout.utf8))
        #expect(report["result"]?["verdict"]?.stringValue == "FORKED", "\(json.stdout)")
        #expect(
            report["result"]?["problems"]?.arrayValue?.contains { $0.stringValue?.contains(problem) == true } == true)
        let fork = report["verification"]?["witness"]?["fork"]?.stringValue
        #expect(naming.allSatisfy { fork?.contains($0) == true }, "\(json.stdout)")
        let html = try jqc("audit", id, "--format", "html")
        #expect(html.status == 1, "\(html.stderr)")
        #expect(html.stdout.contains("<h1>FORKED: 1 fork of a device whose records it holds</h1>"), "\(html.stdout)")
        #expect(html.stdout.contains("<p id=\"witness-fork\" class=\"broken\">witness: FORK of this device"))
    }

    /// (key given, what the refusal says): nothing is added.
    static let refusedKeys: [(String, String)] = [
        ("witness.example/w1+00000000+", "does not match the key"),
        ("jqc/device+", "not 0x04"),
        ("nonsense", "expected <name>+<8 hex digits>+"),
    ]

    @Test(arguments: WitnessKind.allCases, refusedKeys.indices)
    func aKeyWhoseKeyIDDoesNotMatchIsRefused(_ kind: WitnessKind, index: Int) throws {
        let witness = try kind.start()
        let device = try Device()
        let parts = witness.vkey.split(separator: "+", maxSplits: 2)
        let (given, said) = Self.refusedKeys[index]
        let key: String =
            switch index {
            case 0: given + parts[2]
            case 1: try device.logKey()
            default: given
            }
        let added = try device.jqc("witness", "add", witness.url, "--key", key)
        #expect(added.status == 1)
        #expect(added.stderr.contains(said), "\(added.stderr)")
        let list = try JSONValue(parsing: try device.jqc("--json", "witness", "list").stdout)
        #expect(list["witnesses"]?.arrayValue?.isEmpty == true, "\(list)")
    }

    /// The development server runs a standard witness at `/witness`: a
    /// logged-in device enrols itself (a development route), and each
    /// `jqc sync` then gets its checkpoint cosigned; the audit says so.
    @Test func theDevelopmentServersWitnessCosignsEachSync() throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        let id = try sample.completedInspection(photos: 0, issues: 0).lowercased
        let client = try CurlHTTPClient(configuration: .init(connectTimeout: .seconds(2), totalTimeout: .seconds(10)))
        let base = "http://127.0.0.1:\(server.port)/witness"
        let vkey = String(decoding: try client.send(HTTPRequest(url: base + "/key")).body, as: UTF8.self)
        let added = try sample.jqc("witness", "add", base, "--key", vkey.trimmingCharacters(in: .newlines))
        try #require(added.status == 0, "\(added.stderr)")
        let logKey = try #require(
            try JSONValue(parsing: Array(try sample.jqc("--json", "key").stdout.utf8))["in_force"]?.stringValue)
        let enrolment = HTTPBody.bytes(
            Array("\(logKey.split(separator: "+")[0])\n\(logKey)\n".utf8), contentType: "text/plain")
        // Only a logged-in client may enrol.
        #expect(try client.send(HTTPRequest(method: .post, url: base + "/enrol", body: enrolment)).status == 401)
        let enrolled = try client.send(
            HTTPRequest(
                method: .post, url: base + "/enrol",
                headers: ["Authorization": "Bearer \(try sample.session().tokens.accessToken)"], body: enrolment))
        #expect(enrolled.status == 200)
        for _ in 0..<2 {
            _ = try sample.completedInspection(photos: 0, issues: 0)
            let sync = try sample.jqc("--json", "sync")
            #expect(sync.status == 0, "\(sync.stderr)")
            #expect(try JSONSchemaCheck.validate("sync", sync.stdout).status == 0, "\(sync.stdout)")
            let round = try JSONValue(parsing: sync.stdout)["witness"]?["round"]
            let asked = round?["witnesses"]?.arrayValue?.first
            #expect(asked?["name"] == .string("devserver.jqc.invalid/witness") && asked?["url"] == .string(base))
            #expect(asked?["outcome"] == .string("cosigned"), "\(sync.stdout)")
        }
        let audit = try sample.jqc("audit", id)
        #expect(
            audit.stdout.contains("witness: cosigned by devserver.jqc.invalid/witness at "), "\(audit.stdout)")
        #expect(
            try JSONValue(parsing: try sample.jqc("audit", id, "--format", "json").stdout)["verification"]?["witness"]?[
                "quorum_met"] == .bool(true), "\(audit.stdout)")
    }
}
