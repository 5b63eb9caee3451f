import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// The template, facility and area a person names for `jqc start`, without
/// `jqc`: by id or by name in any case, each refusal listing what is known
/// (the sample reference data of `SyncStandingTests`).
@Suite struct ReferenceChoiceTests {
    @Test func aTemplateIsNamedByItsIdOrItsNameInAnyCase() throws {
        let fixture = try SyncStandingTests()
        let byID = try ReferenceChoice.template(named: "11", in: fixture.ledger)
        #expect(try ReferenceChoice.template(named: byID.name.uppercased(), in: fixture.ledger) == byID)
        let error = #expect(throws: ReferenceChoice.Refusal.self) {
            try ReferenceChoice.template(named: "no such template", in: fixture.ledger)
        }
        guard case .notFound("template", "no such template", let hint)? = error else {
            Issue.record("not refused as no template: \(String(describing: error))")
            return
        }
        #expect(hint.hasPrefix("Known: "))
    }

    @Test func theStartNamesTheFacilityAndAreaChosen() throws {
        let fixture = try SyncStandingTests()
        let facility = try #require(try fixture.ledger.reference.facility(id: "101"))
        let area = try #require(facility.areas.first)
        let start = try ReferenceChoice.start(
            template: "11", facility: facility.name.lowercased(), area: area.name, in: fixture.ledger)
        #expect(start.facilityID == facility.id)
        #expect(start.areaID == area.id)
        #expect(start.areaName == area.name)
        #expect(start.template.id == "11")
        #expect(!start.templateAlreadyPinned)
        let error = #expect(throws: ReferenceChoice.Refusal.self) {
            try ReferenceChoice.start(template: "11", facility: facility.id, area: "nowhere", in: fixture.ledger)
        }
        guard case .notFound("area of \(facility.name)", "nowhere", let hint)? = error else {
            Issue.record("not refused as no area: \(String(describing: error))")
            return
        }
        #expect(hint.hasPrefix("Its areas: "))
    }

    @Test func aDeviceWithoutReferenceDataSaysToPullIt() throws {
        let temporary = TemporaryDirectory(prefix: "reference-choice")
        let ledger = try InspectionLedger(
            storePath: temporary.appending("store"), photosPath: temporary.appending("photos"), access: .creating)
        defer { ledger.close() }
        #expect(throws: ReferenceChoice.Refusal.nothingPulled("templates")) {
            try ReferenceChoice.template(named: "11", in: ledger)
        }
        #expect(throws: ReferenceChoice.Refusal.nothingPulled("facilities")) {
            try ReferenceChoice.facility(named: "101", in: ledger)
        }
    }
}
