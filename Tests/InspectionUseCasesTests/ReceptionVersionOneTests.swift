import Foundation
import InspectionDomain
@_spi(RawAppend) import InspectionStore
import LedgerCore
@_spi(RawAppend) import LedgerStore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// A ledger written before `inspection.received` version 2 holds receptions
/// that embed their records' bytes: it still folds, audits and hands the
/// inspection on (a version-1 reception inside a new file needs no
/// `carried_records`).
@Suite struct ReceptionVersionOneTests {
    typealias Device = HandoverUseCaseTests.Device

    /// The version-1 payload of `received`, as jqc wrote it before version 2:
    /// every record's bytes embedded as `{position, record, inclusion}`.
    static func versionOnePayload(_ received: InspectionReceived) throws -> [UInt8] {
        func carried(_ position: UInt64, _ bytes: [UInt8], _ inclusion: [Digest256]) -> CBORValue {
            .textMap([
                ("position", .unsigned(position)), ("record", .bytes(bytes)),
                ("inclusion", .array(inclusion.map { .bytes($0.bytes) })),
            ])
        }
        let records = zip(received.records, try received.resolvedBytes()).map { reference, bytes in
            carried(reference.position, bytes, reference.inclusion)
        }
        return CBORValue.textMap([
            ("from_device", .text(received.fromDevice.lowercased)), ("mode", .text(received.mode.rawValue)),
            ("checkpoint", .text(received.checkpoint)), ("public_key", .text(received.publicKey)),
            (
                "key_record",
                carried(received.keyRecord.position, received.keyRecord.record, received.keyRecord.inclusion)
            ),
            (
                "template_record",
                carried(
                    received.templateRecord.position, received.templateRecord.record,
                    received.templateRecord.inclusion)
            ),
            ("records", .array(records)), ("file_sha256", .text(received.fileSHA256.hex)),
        ]).encoded()
    }

    @Test func aVersionOneReceptionFoldsAuditsAndIsHandedOn() throws {
        let (sender, id, file) = try HandoverUseCaseTests.handedOver()
        defer { withExtendedLifetime(sender) {} }
        // Ben receives it as today (version 2) ...
        let ben = try Device(actor: "Ben")
        _ = try Reception(ledger: ben.ledger, device: ben.device).receive(
            file: file, actor: ben.actor, clock: ben.clock)
        let received = try ben.ledger.log.read { reader -> InspectionReceived in
            let record = try #require(
                try reader.records(inStream: id).first { $0.type == InspectionEventType.received.rawValue })
            guard case .received(let received) = try CarriedClosure.event(of: record, reader: reader) else {
                throw CocoaError(.coderReadCorrupt)
            }
            return received
        }
        // ... and an older jqc recorded the same file as version 1.
        let old = try Device(actor: "Cleo")
        let template = try #require(try ben.ledger.state(of: id)?.template)
        let pin = InspectionEvent.templatePinned(TemplatePinned(templateHash: template.contentHash, template: template))
        let now = old.clock.now()
        try old.ledger.append([
            pin.pending(stream: id, actor: old.actor, device: old.device, recordedAt: now),
            PendingEvent(
                stream: id, type: InspectionEventType.received.rawValue, schemaVersion: 1, actor: old.actor,
                device: old.device, recordedAt: now, payload: try Self.versionOnePayload(received)),
        ])
        #expect(try old.ledger.log.read { try $0.carriedCount() } == 0, "a version-1 reception needs no table")
        // It folds to the same state ...
        let folded = try #require(try old.ledger.state(of: id))
        let expected = try #require(try ben.ledger.state(of: id))
        #expect(folded.values == expected.values && folded.status == expected.status)
        #expect(folded.photos.count == 1 && folded.issues.count == 1)
        // ... its sender's part is proven as the sender's ...
        let stored = try old.ledger.log.read { reader -> InspectionReceived in
            let record = try #require(try reader.records(inStream: id).last)
            #expect(record.schemaVersion == 1)
            guard case .received(let stored) = try CarriedClosure.event(of: record, reader: reader) else {
                throw CocoaError(.coderReadCorrupt)
            }
            return stored
        }
        #expect(stored == received)
        #expect(try ReceivedProof.verify(stored, inspection: id) > 0)
        // ... and it is handed on: the version-1 reception travels in the
        // bundle with its bytes, so the file needs no carried_records.
        try old.ledger.photos.keep(
            try old.ledger.photos.prepare(
                data: try #require(sender.ledger.photos.contents(sha256: folded.photos[0].photo.sha256.hex)),
                name: "photo"))
        let onward = old.temporary.appending("onward.json")
        _ = try Handover(ledger: old.ledger, identity: old.identity).write(
            inspection: id, to: nil, mode: .share, output: onward, actor: old.actor, clock: old.clock)
        let json = try JSONValue(parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: onward))))
        #expect(json["format"] == .string("jqc-handover/3"))
        #expect(json["carried_records"] == .array([]))
        let dana = try Device(actor: "Dana")
        let taken = try Reception(ledger: dana.ledger, device: dana.device).receive(
            file: onward, actor: dana.actor, clock: dana.clock)
        #expect(taken.recorded)
        let shown = try #require(try dana.ledger.state(of: id))
        #expect(shown.values == expected.values && shown.photos.count == 1 && shown.issues.count == 1)
    }
}
