import Foundation
import InspectionDomain
import LedgerCore
import LedgerStore
import LedgerTestSupport
import Testing

@testable import InspectionStore

/// The auditor's slow path: one scan of the log for a template's pin and
/// the re-inspections of a parent, which names every record it could not
/// read instead of skipping it.
@Suite struct InspectionLinksTests {
    @Test func aTemplatePinnedByAnEarlierInspectionIsFoundWithItsPosition() throws {
        let directory = TemporaryDirectory()
        let recorder = try Recorder(directory: directory)
        defer { recorder.ledger.close() }
        let first = try recorder.start(template: "11")
        let second = try recorder.start(template: "11")
        let hash = try #require(try recorder.ledger.state(of: second)?.templateHash)
        let pins = try recorder.ledger.history(of: first).compactMap { entry -> UInt64? in
            guard case .record(let record) = entry, record.type == InspectionEventType.templatePinned.rawValue else {
                return nil
            }
            return record.position
        }
        let links = try InspectionLinks.scan(recorder.ledger.log, templateHash: hash, parent: nil)
        #expect(links.template?.position == pins.first)
        #expect(links.template?.template.contentHash == hash)
        #expect(links.unread.isEmpty)
    }

    @Test func recordsThatCannotBeReadAreNamedNotSkipped() throws {
        let directory = TemporaryDirectory()
        let recorder = try Recorder(directory: directory)
        defer { recorder.ledger.close() }
        let parent = try recorder.start(template: "11")
        let hash = try #require(try recorder.ledger.state(of: parent)?.templateHash)
        let clock = ManualClock()
        // Events of the right types whose payloads are not theirs: each could have been a link.
        let broken = [
            SampleEvents.event(stream: UUID(), type: InspectionEventType.started.rawValue, at: clock.now()),
            SampleEvents.event(stream: UUID(), type: InspectionEventType.templatePinned.rawValue, at: clock.now()),
        ]
        let outcomes = try recorder.ledger.log.append(broken)
        let links = try InspectionLinks.scan(recorder.ledger.log, templateHash: "0" + hash.dropFirst(), parent: parent)
        #expect(links.template == nil)
        #expect(links.children.isEmpty)
        #expect(links.unread.map(\.position) == outcomes.map(\.position))
        #expect(links.unread.first?.description.contains("inspection.started event is unreadable") == true)
    }
}
