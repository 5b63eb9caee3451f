import Foundation
import InspectionDomain
import LedgerCore
import LedgerTestSupport

/// The fixture templates and sample values every suite uses.
enum Samples {
    /// The server's two sample templates (ids sent as integers in one and as
    /// strings in the other), loaded from the test bundle.
    static func templates() throws -> [Template] {
        let url = try fixtureURL("templates.json")
        return try Template.list(json: try JSONValue(parsing: Array(try Data(contentsOf: url))))
    }

    /// Template 11 "Restroom QC": ratings, pass_fail, checkbox, radio, notes, image, signature.
    static func restroom() throws -> Template { try templates().first { $0.id == "11" }! }

    /// Template 22 "Office Area QC": one field of nearly every type.
    static func office() throws -> Template { try templates().first { $0.id == "22" }! }

    static func fixtureURL(_ name: String) throws -> URL {
        let url = Bundle.module.resourceURL!.appendingPathComponent("Fixtures/\(name)")
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: url.path])
        }
        return url
    }

    static func field(_ template: Template, _ id: FieldID) -> TemplateField { template.field(id: id)! }

    static let actor = SampleEvents.actor
    static let start = Timestamp(microsecondsSinceEpoch: 1_795_000_000_123_456)

    /// The n-th moment after `start`, one second apart.
    static func time(_ n: Int) -> Timestamp {
        Timestamp(microsecondsSinceEpoch: start.microsecondsSinceEpoch + Int64(n) * 1_000_000)
    }

    /// An `inspection.received` payload carrying `records` (CBOR records of
    /// the sender's stream; two placeholder records when none are given).
    static func received(_ records: [[UInt8]] = [[0xA0], [0xA1, 0x00, 0x00]]) -> InspectionReceived {
        let hash = SHA256Hasher().digest(Array("node".utf8))
        func carried(_ n: Int, _ bytes: [UInt8]) -> CarriedRecord {
            CarriedRecord(position: UInt64(n), record: bytes, inclusion: [hash, hash])
        }
        return InspectionReceived(
            fromDevice: uuid(77), mode: .handover, checkpoint: "jqc/device\n3\nroot\n\n— jqc/device sig\n",
            publicKey: "jqc/device+01234567+AQ==", keyRecord: carried(1, [0xA0]), templateRecord: carried(2, [0xA0]),
            carrying: records.enumerated().map { carried($0.offset + 3, $0.element) },
            fileSHA256: SHA256Hasher().digest(Array("file".utf8)))
    }

    static func uuid(_ n: Int) -> UUID {
        UUID(uuidString: String(format: "0190a1b2-c3d4-7e5f-8a6b-%012x", n))!
    }

    static func photo(_ n: Int, size: Int = 48_213, mediaType: String = "image/jpeg") -> PhotoReference {
        let digest = SHA256Hasher().digest(Array("photo \(n)".utf8))
        return PhotoReference(photoID: uuid(1000 + n), sha256: digest, size: size, mediaType: mediaType)
    }
}

/// Runs a decision against a state and applies what it returns, as the CLI
/// would after appending the events.
struct Inspection {
    var state: InspectionState
    var clock = 0

    init(id: UUID = Samples.uuid(1)) { state = InspectionState(id: id) }

    /// Decides `command`, applies the events, and returns them.
    @discardableResult
    mutating func run(_ command: InspectionCommand) throws(DomainError) -> [InspectionEvent] {
        let events = try state.decide(command)
        for event in events {
            clock += 1
            state.apply(event, recordedAt: Samples.time(clock), actor: Samples.actor)
        }
        return events
    }

    /// A started draft of `template` at facility 3.
    static func started(_ template: Template, id: UUID = Samples.uuid(1)) throws -> Inspection {
        var inspection = Inspection(id: id)
        try inspection.run(
            .start(
                StartInspection(
                    template: template, templateAlreadyPinned: false, facilityID: "3", facilityName: "Harbor Tower",
                    areaID: "12", areaName: "Level 2 restrooms")))
        return inspection
    }
}
