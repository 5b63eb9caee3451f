import Foundation
import LedgerTestSupport
import Testing

/// `jqc handover` and `jqc receive` through the built `jqc`, with two
/// ledgers: the sender stops, the receiver verifies all of the file before
/// it records, and goes on with the inspection.
@Suite struct HandoverCommandTests {
    /// A sender's ledger with a handed-over draft (an answer, a photo, an
    /// issue) and its handover file, made once: every test reads it, none
    /// changes it.
    final class Sender: Sendable {
        let directory = TemporaryDirectory(prefix: "handover-sender")
        let jqc: JQCRunner
        let inspection: String
        let file: String

        init() throws {
            jqc = JQCRunner(ledger: directory.appending("a"), environment: ["JQC_AS_TEST": "1"])
            try JQCRunner.succeeded(jqc("init"))
            try JQCRunner.succeeded(jqc("pull", "--from", SampleReference.path))
            inspection = try jqc.startInspection("Restroom QC")
            let photo = try SampleReference.writePNG(in: directory.path, name: "stall.png", red: 40)
            try JQCRunner.succeeded(jqc("--as", "Dana", "set", inspection, "Floors", "4"))
            try JQCRunner.succeeded(jqc("--as", "Dana", "photo", inspection, "Photo of problem area", photo))
            try JQCRunner.succeeded(
                jqc("--as", "Dana", "flag", inspection, "--severity", "high", "--description", "Leaking tap"))
            file = directory.appending("handover.json")
            try JQCRunner.succeeded(jqc("--as", "Dana", "handover", inspection, "-o", file, "--to", "Ben"))
        }
    }

    static let shared = Result { try Sender() }
    let sender: Sender
    let directory = TemporaryDirectory(prefix: "handover-receiver")
    let receiver: JQCRunner

    init() throws {
        sender = try Self.shared.get()
        receiver = JQCRunner(ledger: directory.appending("b"), environment: ["JQC_AS_TEST": "1"])
        try JQCRunner.succeeded(receiver("init"))
        try JQCRunner.succeeded(receiver("pull", "--from", SampleReference.path))
    }

    func json(_ result: ProcessResult) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
    }

    /// How many records the receiver's log holds.
    func logCount() throws -> Int {
        let result = try JQCRunner.succeeded(receiver("--json", "log"))
        return result.stdout.split(separator: "\n").count
    }

    // MARK: - The sender

    @Test(arguments: [
        ["set", "Floors", "5"], ["clear", "Floors"], ["flag", "--severity", "low", "--description", "Dust"],
        ["submit"], ["discard"],
    ])
    func theSenderRefusesRecordingNamingWhereItWent(_ command: [String]) throws {
        var arguments = ["--as", "Dana", command[0], sender.inspection]
        arguments += command.dropFirst()
        let result = try sender.jqc.reportingKinds.run(arguments)
        #expect(result.status == 1)
        #expect(result.errorKind == "DomainError.handedOver", "\(result.stderr)")
        #expect(result.errorDetail?["to"] as? String == "\"Ben\"", "handed over to Ben: \(result.stderr)")
    }

    @Test func theSenderNeitherListsItAsADraftNorSendsIt() throws {
        #expect(
            try #require(try json(JQCRunner.succeeded(sender.jqc("--json", "drafts"))) as? [Any]).isEmpty, "no drafts")
        let shown = try JQCRunner.succeeded(sender.jqc("show", sender.inspection)).stdout
        #expect(shown.contains("handed over to \"Ben\""), "\(shown)")
        let outbox = try #require(try json(sender.jqc("--json", "outbox")) as? [Any])
        #expect(outbox.isEmpty)
    }

    @Test func handingOverAgainWritesTheFileAndRecordsNothing() throws {
        let again = directory.appending("again.json")
        let before = try JQCRunner.succeeded(sender.jqc("--json", "log")).stdout
        let result = try JQCRunner.succeeded(
            sender.jqc("--as", "Dana", "--json", "handover", sender.inspection, "-o", again))
        let object = try #require(try json(result) as? [String: Any])
        #expect(object["recorded"] as? Bool == false)
        #expect(object["to"] as? String == "Ben")
        #expect(FileManager.default.fileExists(atPath: again))
        #expect(try JQCRunner.succeeded(sender.jqc("--json", "log")).stdout == before)
    }

    @Test func aHandoverFileInsideTheLedgerIsRefused() throws {
        let result = try sender.jqc(
            "--as", "Dana", "handover", sender.inspection, "-o", sender.directory.appending("a/photos/h.json"))
        #expect(result.status == 1)
        #expect(!FileManager.default.fileExists(atPath: sender.directory.appending("a/photos/h.json")))
    }

    @Test func theBundleInsideVerifiesWithThePythonVerifier() throws {
        let file = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: sender.file)))
                as? [String: Any])
        let bundle = directory.appending("bundle.json")
        try JSONSerialization.data(withJSONObject: try #require(file["bundle"])).write(to: URL(fileURLWithPath: bundle))
        let verified = try ProcessRun.run(
            Products.python.executable,
            Products.python.arguments + [Products.repositoryFile("Tools/verify-ledger"), "--bundle", bundle])
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        #expect(verified.stdout.contains("versions 1 to"))
    }

    // MARK: - The receiver

    @Test func theReceiverContinuesTheInspection() throws {
        let output = try JQCRunner.succeeded(receiver("--as", "Ben", "--json", "receive", sender.file))
        let check = try JSONSchemaCheck.validate("receive", output.stdout)
        #expect(check.status == 0, "\(check.stderr)")
        let received = try #require(try json(output) as? [String: Any])
        #expect(received["recorded"] as? Bool == true)
        #expect(received["photos"] as? Int == 1)
        let id = sender.inspection
        let shown = try #require(try json(JQCRunner.succeeded(receiver("--json", "show", id))) as? [String: Any])
        #expect(shown["status"] as? String == "draft")
        #expect(try JQCRunner.succeeded(receiver("drafts")).stdout.contains(String(id.prefix(8))))
        for answer in ["Toilets and urinals=5", "Soap dispensers stocked=pass"] {
            try JQCRunner.succeeded(receiver("--as", "Ben", "set", id, answer))
        }
        try JQCRunner.succeeded(receiver("--as", "Ben", "submit", id))
        let outbox = try #require(try json(receiver("--json", "outbox")) as? [[String: Any]])
        #expect(outbox.compactMap { $0["kind"] as? String }.sorted() == ["inspection", "issue", "photo"])
        try JQCRunner.succeeded(receiver("check", "--photos"))
        try JQCRunner.succeeded(receiver("views", "--check"))
        try JQCRunner.succeeded(receiver("verify", "--full"))
        // The sender's words are kept as the sender's: the log names Dana.
        let types = try JQCRunner.succeeded(receiver("--json", "log", "--inspection", id)).stdout.split(separator: "\n")
            .map {
                try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])["type"] as? String
            }
        #expect(types.contains("inspection.received"), "received from device: \(types)")
    }

    @Test func theReceiversAuditNamesBothDevicesAndProvesTheSendersPart() throws {
        try JQCRunner.succeeded(receiver("--as", "Ben", "receive", sender.file))
        try JQCRunner.succeeded(receiver("--as", "Ben", "set", sender.inspection, "Odor=Acceptable"))
        let config = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: sender.directory.appending("a/config.json"))))
                as? [String: Any])
        let senderDevice = try #require(config["device_id"] as? String).lowercased()
        let audit = try JQCRunner.succeeded(receiver("audit", sender.inspection, "--format", "json"))
        let report = try #require(try json(audit) as? [String: Any])
        let check = try JSONSchemaCheck.validate("audit", audit.stdout)
        #expect(check.status == 0, "\(check.stderr)")
        let timeline = try #require(report["timeline"] as? [[String: Any]])
        let devices = Set(timeline.compactMap { $0["device"] as? String })
        #expect(devices.count == 2, "\(devices)")
        #expect(devices.contains(senderDevice))
        // The sender's records are proven by its checkpoint, the receiver's by its own tree.
        for entry in timeline {
            let carried = entry["device"] as? String == senderDevice
            #expect((entry["chain"] as? String == "sender_checkpoint") == carried, "\(entry["summary"] ?? "")")
        }
        let actors = Set(timeline.compactMap { ($0["actor"] as? [String: Any])?["name"] as? String })
        #expect(actors == ["Dana", "Ben"])
        let notes = try #require(report["notes"] as? [String])
        #expect(notes.contains { $0.contains("proven against its signed checkpoint") }, "\(notes)")
        let html = try JQCRunner.succeeded(receiver("audit", sender.inspection, "--format", "html"))
        #expect(html.stdout.contains("proven against its signed checkpoint"))
    }

    /// A reception's carried records live in the log's `carried` table: a
    /// salvage must keep them, or the salvaged reception could not be read.
    @Test func salvageOfTheReceiverKeepsWhatItsReceptionCarries() throws {
        try JQCRunner.succeeded(receiver("--as", "Ben", "receive", sender.file))
        try JQCRunner.succeeded(receiver("--as", "Ben", "set", sender.inspection, "Odor=Acceptable"))
        let shown = try JQCRunner.succeeded(receiver("--json", "show", sender.inspection)).stdout
        let target = directory.appending("salvaged")
        let salvage = try #require(
            try json(JQCRunner.succeeded(receiver("--json", "salvage", target))) as? [String: Any])
        #expect(salvage["first_break"] is NSNull, "every record found in the store verified: \(salvage)")
        let salvaged = JQCRunner(ledger: target, environment: ["JQC_AS_TEST": "1"])
        #expect(try JQCRunner.succeeded(salvaged("--json", "show", sender.inspection)).stdout == shown)
        let verify = try #require(
            try json(JQCRunner.succeeded(salvaged("--json", "verify", "--full"))) as? [String: Any])
        // The template pinned, the reception, the sender's key pinned beside it, the answer.
        #expect(verify["intact"] as? Bool == true && verify["checked"] as? Int == 4, "\(verify)")
        let audit = try #require(
            try json(JQCRunner.succeeded(salvaged("audit", sender.inspection, "--format", "json"))) as? [String: Any])
        let chains = (audit["timeline"] as? [[String: Any]])?.compactMap { $0["chain"] as? String } ?? []
        #expect(chains.contains("sender_checkpoint"), "proven against its signed checkpoint: \(chains)")
    }

    @Test func receivingTheSameFileTwiceRecordsNothing() throws {
        try JQCRunner.succeeded(receiver("--as", "Ben", "receive", sender.file))
        let count = try logCount()
        let again = try #require(
            try json(JQCRunner.succeeded(receiver("--as", "Ben", "--json", "receive", sender.file))) as? [String: Any])
        #expect(again["recorded"] as? Bool == false, "nothing was recorded: \(again)")
        #expect(try logCount() == count)
    }

    @Test func theSenderCannotReceiveItsOwnFile() throws {
        let result = try sender.jqc.reportingKinds("--as", "Dana", "receive", sender.file)
        #expect(result.status == 1)
        #expect(result.errorKind == "Reception.Conflict.ownFile", "\(result.stderr)")
    }

    /// Where one byte is changed: in a record, a photo, the proofs, the
    /// signature, the template record, the key record.
    enum Damage: String, CaseIterable, Sendable {
        case firstRecord, lastRecord, photo, inclusion, signature, templateRecord, keyRecord, photoList, rawByte

        func apply(to file: inout [String: Any]) throws {
            var bundle = try #require(file["bundle"] as? [String: Any])
            func flip(_ text: String, at index: Int = 20) throws -> String {
                var bytes = [UInt8](try #require(Data(base64Encoded: text)))
                bytes[min(index, bytes.count - 1)] ^= 0x01
                return Data(bytes).base64EncodedString()
            }
            func flipEntry(_ entry: [String: Any], member: String = "record") throws -> [String: Any] {
                var entry = entry
                if member == "inclusion" {
                    var proof = try #require(entry["inclusion"] as? [String])
                    proof[0] = try flip(proof[0], at: 3)
                    entry["inclusion"] = proof
                } else {
                    entry[member] = try flip(try #require(entry[member] as? String), at: 60)
                }
                return entry
            }
            var records = try #require(bundle["records"] as? [[String: Any]])
            switch self {
            case .firstRecord: records[0] = try flipEntry(records[0])
            case .lastRecord: records[records.count - 1] = try flipEntry(records[records.count - 1])
            case .inclusion: records[1] = try flipEntry(records[1], member: "inclusion")
            case .photo:
                var photos = try #require(file["photo_files"] as? [[String: Any]])
                photos[0]["data"] = try flip(try #require(photos[0]["data"] as? String), at: 30)
                file["photo_files"] = photos
            case .signature:
                let note = try #require(bundle["checkpoint"] as? String)
                var scalars = Array(note)
                let index = note.count - 6
                scalars[index] = scalars[index] == "A" ? "B" : "A"
                bundle["checkpoint"] = String(scalars)
            case .templateRecord:
                file["template_record"] = try flipEntry(try #require(file["template_record"] as? [String: Any]))
            case .keyRecord:
                bundle["key_record"] = try flipEntry(try #require(bundle["key_record"] as? [String: Any]))
            case .photoList:
                var photos = try #require(bundle["photos"] as? [[String: Any]])
                photos.removeAll()
                bundle["photos"] = photos
            case .rawByte:
                break
            }
            bundle["records"] = records
            file["bundle"] = bundle
        }
    }

    @Test(arguments: Damage.allCases)
    func aFileChangedInOneByteIsRefusedWithNothingRecorded(_ damage: Damage) throws {
        let original = try Data(contentsOf: URL(fileURLWithPath: sender.file))
        var bytes: Data
        if damage == .rawByte {
            // A byte of the text itself: inside the first record's base64.
            bytes = original
            let text = String(decoding: original, as: UTF8.self)
            let marker = try #require(text.range(of: "\"record\": \""))
            let offset = text.utf8.distance(from: text.startIndex, to: marker.upperBound) + 40
            bytes[offset] = bytes[offset] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        } else {
            var file = try #require(try JSONSerialization.jsonObject(with: original) as? [String: Any])
            try damage.apply(to: &file)
            bytes = try JSONSerialization.data(withJSONObject: file)
        }
        let path = directory.appending("damaged.json")
        try bytes.write(to: URL(fileURLWithPath: path))
        let before = try logCount()
        let result = try receiver("--as", "Ben", "receive", path)
        #expect(result.status == 1, "\(damage): \(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("nothing was recorded"), "\(damage): \(result.stderr)")
        #expect(try logCount() == before)
        let listed = try #require(try json(receiver("--json", "inspections")) as? [Any])
        #expect(listed.isEmpty)
    }

    @Test(arguments: [
        (#"{"format":"jqc-handover/1"}"#, "member \"mode\" is missing from the file"),
        ("[]", "the file is not a JSON object"),
        ("not json", "the file is not well-formed JSON"),
    ])
    func aFileThatIsNotAHandoverFileIsUnreadable(_ text: String, _ reason: String) throws {
        let path = directory.appending("bad.json")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let result = try receiver("--as", "Ben", "receive", path)
        #expect(result.status == 1)
        #expect(result.stderr.contains(reason), "\(result.stderr)")
    }

    @Test func aMemberDifferingOnlyInCaseIsRefused() throws {
        var text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: sender.file)), as: UTF8.self)
        text = text.replacingOccurrences(of: "\"photo_files\"", with: "\"Photo_files\"")
        let path = directory.appending("case.json")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let result = try receiver("--as", "Ben", "receive", path)
        #expect(result.status == 1)
        #expect(result.stderr.contains("Photo_files"), "\(result.stderr)")
    }
}
