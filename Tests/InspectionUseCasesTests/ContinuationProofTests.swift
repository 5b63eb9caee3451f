import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// Issue #30: a version-3 reception continues a version of its sender's
/// stream that an earlier reception from that same sender, recorded by the
/// same device, references. A reception whose `continues` names a leaf this
/// ledger holds only through another device's reception (A's record met
/// inside B's) proves nothing about the records before it: the audit says
/// the part is unproven, never INTACT.
@Suite struct ContinuationProofTests {
    typealias Device = HandoverUseCaseTests.Device

    /// Writes a share of `id` from `from` and receives it on `to` the way `jqc receive` does.
    static func share(_ id: UUID, from: Device, to: Device, _ name: String) throws {
        let file = from.temporary.appending(name)
        _ = try Handover(ledger: from.ledger, identity: from.identity).write(
            inspection: id, to: nil, mode: .share, output: file, actor: from.actor, clock: from.clock)
        _ = try Reception(ledger: to.ledger, device: to.device).receive(file: file, actor: to.actor, clock: to.clock)
    }

    /// Records on `receiver` the reception of `path` that `Reception` would
    /// record, but continuing `continuation` (`nil`: as `Reception` decides).
    static func record(_ path: String, on receiver: Device, continuing continuation: InspectionReceived.Continuation?)
        throws
    {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let sha256 = SHA256Hasher().digest(bytes)
        let file = try HandoverFile(decoding: bytes)
        let verified = try HandoverVerification.verify(file)
        let carried = file.reception(sha256: sha256)
        let ledger = receiver.ledger
        _ = try ledger.record(on: file.inspection, by: receiver.actor, device: receiver.device, clock: receiver.clock) {
            snapshot in
            let reader = snapshot.reader
            let stream = try reader.records(inStream: file.inspection)
            // The sender's key pinned beside it, as `Reception` pins it.
            let trusted = try SenderTrust(ledger: receiver.ledger, device: receiver.device).check(
                file, sha256: sha256, stream: stream, given: nil, reader: reader)
            let crafted = Reception.newToThisReceiver(carried, held: continuation)
            var unheld = CarriedRecords()
            for (leaf, record) in carried.carried.bytes where try reader.carriedRecord(leaf) == nil {
                unheld.insert(record)
            }
            let copy = ReceiveCopy(received: crafted, template: verified.template, templateAlreadyPinned: true)
            return RecordingPlan([.receive(copy)], carrying: unheld, beside: trusted.commands)
        }
    }

    /// The audit's unproven parts of `id` on `device`, and its verdict.
    static func audit(_ id: UUID, on device: Device) throws -> (verdict: String, reasons: [String]) {
        let auditor = try AuditorLedger.open(device.directory, views: true)
        defer { auditor.close() }
        let report = try AuditAssembly(asOf: nil, asOfText: nil, verification: .proofs(.madeNow), embedPhotos: false)
            .report(
                try auditor.resolveInspection(id.lowercased), auditor: auditor, now: device.clock.now(), walked: {})
        return (report.verdict, report.unproven.map(\.reason))
    }

    /// A → B → C, then A's later file straight to C, recorded as continuing
    /// A's last record that C holds only inside B's reception (crafted), or
    /// as `Reception` records it (the whole list: C received nothing from
    /// A before). Only the honest one audits INTACT.
    @Test(arguments: [false, true])
    func aContinuationHeldOnlyUnderAnotherDeviceIsUnproven(crafted: Bool) throws {
        let a = try Device(actor: "Ana")
        let b = try Device(actor: "Ben")
        let c = try Device(actor: "Cleo")
        let id = try a.startInspection()
        try a.record([.setField(field: "2", to: .value(.rating(3)))], on: id)
        try Self.share(id, from: a, to: b, "a1.json")
        try b.record([.setField(field: "3", to: .value(.rating(4)))], on: id)
        try Self.share(id, from: b, to: c, "b1.json")
        // A's last record B's reception carried: C holds it, under B's.
        let aRecords = try a.ledger.log.read { try $0.records(inStream: id) }
        let heldThroughB = try #require(aRecords.last)
        try a.record([.setField(field: "5", to: .value(.passFail(.pass)))], on: id)
        let later = a.temporary.appending("a2.json")
        _ = try Handover(ledger: a.ledger, identity: a.identity).write(
            inspection: id, to: nil, mode: .share, output: later, actor: a.actor, clock: a.clock)
        let continuation = InspectionReceived.Continuation(
            streamVersion: heldThroughB.streamVersion, leaf: CarriedRecords.leaf(of: heldThroughB.encoded()))
        try Self.record(later, on: c, continuing: crafted ? continuation : nil)

        let received = try c.ledger.log.read { try $0.records(inStream: id) }.last
        let payload = try #require(received.map { try InspectionEvent.decode($0) })
        guard case .received(let reception) = payload else { Issue.record("not a reception: \(payload)"); return }
        #expect((reception.continues != nil) == crafted)
        let (verdict, reasons) = try Self.audit(id, on: c)
        if crafted {
            #expect(verdict == "PARTLY PROVEN", "\(reasons)")
            #expect(reasons.contains { $0.contains("no earlier reception from that device") }, "\(reasons)")
        } else {
            #expect(verdict == "INTACT", "\(reasons)")
        }
    }
}
