import Foundation
import InspectionDomain
import LedgerCore
import Testing

/// `InspectionCommand.adoptSending` decided on simulated devices
/// (`MergePropertyTests.Device`): who may become the sender of another
/// device's submission, and who sends once adoptions meet.
@Suite struct SendAdoptionTests {
    typealias Device = MergePropertyTests.Device

    /// A (device 0) starts and shares to B (1) and C (2); unless `submit` is
    /// false, A answers, submits and shares the submitted copy to both.
    static func submittedOnA(submit: Bool = true) throws -> (
        a: Device, b: Device, c: Device, template: Template, now: Int64
    ) {
        var (a, b, template, now) = try MergeRulesTests.sharedPair()
        var c = Device(2, skew: 0, merge: .latest)
        let done1 = try c.receive(try a.file, at: now, template: template)
        #expect(done1)
        guard submit else { return (a, b, c, template, now + 1_000_000) }
        for (field, value) in [("2", "4"), ("3", "4"), ("5", "pass")] {
            a.run(.setField(field: field, to: .text(value)), at: now)
        }
        let done2 = a.run(.submit(followUpRequired: false), at: now + 1_000_000)
        #expect(done2)
        a.run(.handOver(mode: .share, to: nil), at: now + 2_000_000)
        let done3 = try b.receive(try a.file, at: now + 3_000_000, template: template)
        #expect(done3)
        let done4 = try c.receive(try a.file, at: now + 3_000_000, template: template)
        #expect(done4)
        return (a, b, c, template, now + 4_000_000)
    }

    /// Each refusal, and the device that asks.
    enum Case: String, CaseIterable, CustomTestStringConvertible {
        case draft, submittedHere, reportedSent, adoptedHere, adoptedElsewhere
        var testDescription: String { rawValue }
    }

    @Test(arguments: Case.allCases)
    func adoptionIsRefused(_ refusal: Case) throws {
        var (a, b, c, template, now) = try Self.submittedOnA(submit: refusal != .draft)
        let expected: AdoptionRefusal
        var asking = b
        switch refusal {
        case .draft:
            expected = .notSubmitted(.draft)
        case .submittedHere:
            asking = a
            expected = .submittedHere
        case .reportedSent:
            a.append([.inspectionAccepted(InspectionAccepted(serverID: "5050"))], at: now)
            a.run(.handOver(mode: .share, to: nil), at: now + 1_000_000)
            let done5 = try b.receive(try a.file, at: now + 2_000_000, template: template)
            #expect(done5)
            expected = .alreadySent(serverID: "5050", by: a.device)
            asking = b
        case .adoptedHere:
            let done6 = b.run(.adoptSending, at: now)
            #expect(done6)
            expected = .adoptedHere(at: Timestamp(microsecondsSinceEpoch: now))
            asking = b
        case .adoptedElsewhere:
            let done7 = b.run(.adoptSending, at: now)
            #expect(done7)
            b.run(.handOver(mode: .share, to: nil), at: now + 1_000_000)
            let done8 = try c.receive(try b.file, at: now + 2_000_000, template: template)
            #expect(done8)
            expected = .adoptedElsewhere(device: b.device, at: Timestamp(microsecondsSinceEpoch: now))
            asking = c
        }
        #expect(throws: DomainError.adoptionRefused(MergePropertyTests.inspection, expected)) {
            try asking.state.decide(.adoptSending)
        }
        let words = DomainError.adoptionRefused(MergePropertyTests.inspection, expected).description
        #expect(words.contains("cannot be adopted for sending") && words.contains("Nothing was recorded"), "\(words)")
    }

    @Test func anAdoptionNamesTheSubmitAndMovesTheSendingEverywhere() throws {
        var (a, b, _, template, now) = try Self.submittedOnA()
        #expect(b.state.unreportedSubmission != nil && !b.state.sendsHere)
        let events = try b.state.decide(.adoptSending)
        let submit = try #require(a.records.last { $0.type == InspectionEventType.submitted.rawValue })
        #expect(events == [.sendAdopted(InspectionSendAdopted(submittedOnDevice: a.device, submitEvent: submit.id))])
        b.append(events, at: now)
        #expect(b.state.sendsHere && b.state.adoptedHere && b.state.mayBeSentElsewhere)
        #expect(b.state.unreportedSubmission == nil)
        // The submitter learns of it: B sends it, A no longer does.
        #expect(a.state.sendsHere)
        b.run(.handOver(mode: .share, to: nil), at: now + 1_000_000)
        let done9 = try a.receive(try b.file, at: now + 2_000_000, template: template)
        #expect(done9)
        #expect(!a.state.sendsHere && a.state.sendingDevice == b.device)
        #expect(a.state.unreportedSubmission != nil)
    }

    /// Two adoptions made before the devices exchanged: after the exchange
    /// both derive the same sender (the first by the merge's order), and the
    /// other's outbox lets it go.
    @Test func twoAdoptionsBeforeAnExchangeLeaveOneSenderOnBoth() throws {
        var (_, b, c, template, now) = try Self.submittedOnA()
        let done10 = c.run(.adoptSending, at: now)
        #expect(done10)
        let done11 = b.run(.adoptSending, at: now + 1_000_000)
        #expect(done11)
        b.run(.handOver(mode: .share, to: nil), at: now + 2_000_000)
        c.run(.handOver(mode: .share, to: nil), at: now + 2_000_000)
        let fromB = try b.file
        let fromC = try c.file
        let done12 = try c.receive(fromB, at: now + 3_000_000, template: template)
        #expect(done12)
        let done13 = try b.receive(fromC, at: now + 3_000_000, template: template)
        #expect(done13)
        #expect(b.state.sendingDevice == c.device && c.state.sendingDevice == c.device)
        #expect(c.state.sendsHere && !b.state.sendsHere)
        #expect(b.state.standingAdoption == c.state.standingAdoption)
    }
}
