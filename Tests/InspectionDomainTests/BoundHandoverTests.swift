import Foundation
import InspectionDomain
import LedgerCore
import Testing

/// One owner per plain handover (`docs/domain.md` § Sharing and merging):
/// a handover bound to a device (`to_device`) lets only that device record;
/// any other device receiving the same file holds a read-only copy, until a
/// share from the owner gives it the right back. Over simulated devices
/// (`MergePropertyTests.Device`: A is 0, B is 1, C is 2).
@Suite struct BoundHandoverTests {
    typealias Device = MergePropertyTests.Device

    struct Case: CustomStringConvertible, Sendable {
        var description: String
        /// The device index the handover is bound to, nil for a name or none.
        var boundTo: Int?
        var name: String?
        /// Which of B and C may record after receiving the file.
        var bMayRecord: Bool
        var cMayRecord: Bool
    }

    static let cases: [Case] = [
        Case(description: "bound to B", boundTo: 1, name: nil, bMayRecord: true, cMayRecord: false),
        Case(description: "bound to C", boundTo: 2, name: nil, bMayRecord: false, cMayRecord: true),
        Case(description: "a name only (unbound)", boundTo: nil, name: "Ben", bMayRecord: true, cMayRecord: true),
        Case(description: "no --to (unbound)", boundTo: nil, name: nil, bMayRecord: true, cMayRecord: true),
    ]

    @Test(arguments: cases)
    func onlyTheBoundDeviceRecordsOnAPlainHandover(_ given: Case) throws {
        let template = try Samples.restroom()
        var a = Device(0, skew: 0, merge: .latest)
        var b = Device(1, skew: 0, merge: .latest)
        var c = Device(2, skew: 0, merge: .latest)
        let now = Samples.start.microsecondsSinceEpoch
        a.run(
            .start(
                StartInspection(
                    template: template, templateAlreadyPinned: false, facilityID: "3", facilityName: "Harbor Tower")),
            at: now)
        let bound = given.boundTo.map { [a, b, c][$0].device }
        let handed = a.run(
            .handOver(mode: .handover, to: given.name ?? bound?.lowercased, toDevice: bound), at: now + 1_000_000)
        #expect(handed)
        #expect(a.state.handedOver?.toDevice == bound)
        let file = try a.file
        #expect(file.addressedTo == bound)
        let done1 = try b.receive(file, at: now + 2_000_000, template: template)
        #expect(done1)
        let done2 = try c.receive(file, at: now + 2_000_000, template: template)
        #expect(done2)

        for (device, mayRecord) in [(b, given.bMayRecord), (c, given.cMayRecord)] {
            #expect(device.state.readOnlyCopyOf == (mayRecord ? nil : bound))
            for command: InspectionCommand in [
                .setField(field: "2", to: .text("4")), .submit(followUpRequired: false), .discard(reason: nil),
                .handOver(mode: .share, to: nil),
            ] {
                do {
                    _ = try device.state.decide(command)
                    #expect(mayRecord, "\(command) was decided on a read-only copy")
                } catch {
                    // A refusal for another reason (the form is not complete)
                    // is not the ownership rule's.
                    if case .readOnlyCopy(let inspection, let owner) = error {
                        #expect(!mayRecord)
                        #expect(inspection == MergePropertyTests.inspection && owner == bound)
                        #expect(error.description.contains("addressed to device \(bound?.lowercased ?? "")"))
                    } else {
                        #expect(mayRecord, "\(command) on a read-only copy refused otherwise: \(error)")
                    }
                }
            }
        }
    }

    @Test func aShareFromTheOwnerGivesAReadOnlyCopyTheRightBack() throws {
        let template = try Samples.restroom()
        var a = Device(0, skew: 0, merge: .latest)
        var b = Device(1, skew: 0, merge: .latest)
        var c = Device(2, skew: 0, merge: .latest)
        let now = Samples.start.microsecondsSinceEpoch
        a.run(
            .start(
                StartInspection(
                    template: template, templateAlreadyPinned: false, facilityID: "3", facilityName: "Harbor Tower")),
            at: now)
        a.run(.handOver(mode: .handover, to: nil, toDevice: b.device), at: now + 1_000_000)
        let file = try a.file
        try b.receive(file, at: now + 2_000_000, template: template)
        try c.receive(file, at: now + 2_000_000, template: template)
        #expect(c.state.readOnlyCopyOf == b.device)
        let done3 = c.run(.setField(field: "2", to: .text("3")), at: now + 3_000_000)
        #expect(!done3)
        let done4 = b.run(.setField(field: "2", to: .text("4")), at: now + 3_000_000)
        #expect(done4)
        let done5 = b.run(.handOver(mode: .share, to: nil), at: now + 4_000_000)
        #expect(done5)
        let done6 = try c.receive(try b.file, at: now + 5_000_000, template: template)
        #expect(done6)
        #expect(c.state.readOnlyCopyOf == nil)
        let done7 = c.run(.setField(field: "3", to: .text("5")), at: now + 6_000_000)
        #expect(done7)
        #expect(c.state.values["2"] == .rating(4))
    }
}
