import Foundation
import InspectionDomain
import LedgerCore
@_spi(RawAppend) import LedgerStore
import LedgerTestSupport
import Testing

@_spi(RawAppend) @testable import InspectionStore

/// `InspectionResolver`: the one way an id or prefix becomes an inspection,
/// for recording commands and auditors alike, from the log's stream index.
@Suite struct InspectionResolverTests {
    let directory = TemporaryDirectory()

    /// `id` with its last hex digit replaced by `digit`.
    static func sibling(of id: UUID, _ digit: Character) -> UUID {
        UUID(uuidString: String(id.lowercased.dropLast()) + String(digit))!
    }

    static func differentDigit(from id: UUID) -> Character {
        id.lowercased.last == "0" ? "1" : "0"
    }

    func publishKey(_ recorder: Recorder, device: UUID) throws {
        let key = "jqc/\(device.lowercased)+1a2b3c4d+AQcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcH"
        try recorder.ledger.append([
            DeviceStreamEvent.keyPublished(.init(key: key)).pending(
                device: device, actor: recorder.actor, recordedAt: recorder.clock.now())
        ])
    }

    @Test func aDeviceStreamIsNeverAnInspectionNorMakesOneAmbiguous() throws {
        let recorder = try Recorder(directory: directory)
        defer { recorder.ledger.close() }
        let id = try recorder.start(template: "11")
        let device = Self.sibling(of: id, Self.differentDigit(from: id))
        try publishKey(recorder, device: device)
        let shared = String(id.lowercased.dropLast())
        #expect(try recorder.ledger.resolveInspection(shared) == id)
        #expect(try InspectionResolver.resolve(shared, in: recorder.ledger.log) == id)
        let error = #expect(throws: LookupError.self) { try recorder.ledger.resolveInspection(device.lowercased) }
        guard case .noInspection(let given)? = error else {
            Issue.record("expected LookupError.noInspection, got \(String(describing: error))")
            return
        }
        #expect(given == device.lowercased)
    }

    @Test func aDiscardedDraftAndAStreamWithoutAViewRowResolve() throws {
        let recorder = try Recorder(directory: directory)
        defer { recorder.ledger.close() }
        let discarded = try recorder.start(template: "11")
        try recorder.perform(.discard(reason: "wrong facility"), on: discarded)
        #expect(try recorder.ledger.resolveInspection(String(discarded.lowercased.prefix(13))) == discarded)
        // A stream of events this jqc does not know has no row in any view:
        // the log holds it, so it resolves (its state is then "not started").
        let other = UUID()
        try recorder.ledger.append([
            PendingEvent(
                stream: other, type: "newer.kind", schemaVersion: 1, actor: recorder.actor, device: recorder.device,
                recordedAt: recorder.clock.now(), payload: [0xA0])
        ])
        #expect(try recorder.ledger.resolveInspection(other.lowercased) == other)
    }

    static let refused: [(String, String)] = [
        ("not-hex!", "is not an id"), ("ffffffffffff", "no inspection matches 'ffffffffffff'."),
    ]

    @Test(arguments: refused)
    func aReferenceNamingNothingSaysWhatToDo(reference: String, words: String) throws {
        let recorder = try Recorder(directory: directory)
        defer { recorder.ledger.close() }
        _ = try recorder.start(template: "11")
        let error = #expect(throws: LookupError.self) { try recorder.ledger.resolveInspection(reference) }
        #expect(error?.description.contains(words) == true, "\(String(describing: error))")
    }

    @Test func aPrefixOfTwoInspectionsIsAmbiguous() throws {
        let recorder = try Recorder(directory: directory)
        defer { recorder.ledger.close() }
        let id = try recorder.start(template: "11")
        let twin = Self.sibling(of: id, Self.differentDigit(from: id))
        try recorder.ledger.append([
            PendingEvent(
                stream: twin, type: "newer.kind", schemaVersion: 1, actor: recorder.actor, device: recorder.device,
                recordedAt: recorder.clock.now(), payload: [0xA0])
        ])
        let error = #expect(throws: LookupError.self) {
            try recorder.ledger.resolveInspection(String(id.lowercased.dropLast()))
        }
        guard case .ambiguous(_, let ids)? = error else {
            Issue.record("expected an ambiguous reference, got \(String(describing: error))")
            return
        }
        #expect(Set(ids) == [id, twin])
    }
}
