import Foundation
import InspectionDomain
import LedgerCore
import LedgerTestSupport
import Testing

/// The walks over nested receptions are bounded (`ReceptionWalk`): a
/// reception nested past the depth limit is refused by every walk with an
/// error naming the limit, never a stack overflow; the fold, which must stay
/// total, takes any depth on the heap; a missing record is an error.
@Suite struct ReceptionNestingTests {
    static let inspection = Samples.uuid(1)

    /// A reception whose only record is a reception whose only record is …,
    /// `depth` receptions in all, the innermost carrying the inspection's
    /// start; every record's bytes in the closure. Devices alternate, as two
    /// devices exchanging a copy back and forth would nest it.
    static func nested(depth: Int) throws -> InspectionReceived {
        let template = try Samples.restroom()
        let placeholder = CarriedRecord(position: 1, record: [0xA0], inclusion: [])
        let devices = [Samples.uuid(901), Samples.uuid(902)]
        let actor = Actor(id: "local:d", name: "Device", verified: false)
        let start = InspectionEvent.started(
            InspectionStarted(
                templateID: template.id, templateHash: template.contentHash, facilityID: "3",
                facilityName: "Harbor Tower", areaID: nil, areaName: nil, parentInspectionID: nil,
                parentServerID: nil, prefilled: []))
        func record(_ event: InspectionEvent, device: UUID, version: UInt64) -> [UInt8] {
            let pending = event.pending(
                stream: inspection, actor: actor, device: device,
                recordedAt: Timestamp(microsecondsSinceEpoch: Samples.start.microsecondsSinceEpoch + Int64(version)))
            return EventRecord(position: version, streamVersion: version, event: pending).encoded()
        }
        var closure = CarriedRecords()
        var inner = [record(start, device: devices[0], version: 1)]
        for level in 1..<depth {
            let reception = InspectionReceived(
                fromDevice: devices[level % 2], mode: .share, checkpoint: "", publicKey: "", keyRecord: placeholder,
                templateRecord: placeholder,
                carrying: inner.map { CarriedRecord(position: 1, record: $0, inclusion: []) },
                fileSHA256: SHA256Hasher().digest(Array("level \(level)".utf8)))
            for bytes in inner { closure.insert(bytes) }
            // The stored payload holds references only; its bytes travel in
            // the closure, as `carried_records` carries them.
            var stored = reception
            stored.carried = CarriedRecords()
            inner = [record(.received(stored), device: devices[(level + 1) % 2], version: UInt64(level + 1))]
        }
        return InspectionReceived(
            fromDevice: devices[depth % 2], mode: .share, checkpoint: "", publicKey: "", keyRecord: placeholder,
            templateRecord: placeholder, carrying: inner.map { CarriedRecord(position: 1, record: $0, inclusion: []) },
            fileSHA256: SHA256Hasher().digest(Array("top".utf8)), closure: closure)
    }

    @Test(arguments: [2_000, 20_000])
    func receptionsNestedPastTheLimitAreRefusedByEveryWalk(depth: Int) throws {
        let top = try Self.nested(depth: depth)
        let limit = CarriedRecordsError.tooDeep(limit: ReceptionWalk.maximumDepth)
        #expect(throws: limit) { try top.checkNesting() }
        #expect(throws: limit) { try top.newEventIDs(besides: []) }
        #expect(throws: limit) { try top.startedRecord() }
        #expect(throws: limit) { try top.startedTemplateHash() }
        #expect(limit.description.contains("more than \(ReceptionWalk.maximumDepth) deep"))
        // The fold is total and iterative: it takes the whole chain.
        var state = InspectionState(id: Self.inspection)
        state.apply(
            .received(top), recordedAt: Samples.start, actor: Actor(id: "local:r", name: "Receiver", verified: false),
            device: Samples.uuid(903))
        #expect(state.carriedEventIDs.count == depth)
        #expect(state.startedAt != nil)
    }

    @Test(arguments: [1, 2, ReceptionWalk.maximumDepth])
    func receptionsWithinTheLimitAreWalkedWhole(depth: Int) throws {
        let top = try Self.nested(depth: depth)
        try top.checkNesting()
        #expect(try top.newEventIDs(besides: []).count == depth)
        #expect(try top.startedRecord()?.type == InspectionEventType.started.rawValue)
    }

    @Test func aMissingRecordIsAnErrorNotASkip() throws {
        var top = try Self.nested(depth: 3)
        let kept = top.carried.bytes.filter { (try? EventRecord(decoding: $0.value).type) != "inspection.started" }
        top.carried = CarriedRecords(Array(kept.values))
        #expect {
            try top.newEventIDs(besides: [])
        } throws: { error in
            guard case .missing = error as? CarriedRecordsError else { return false }
            return true
        }
    }
}
