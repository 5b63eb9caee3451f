import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// What shell completion offers from the ledger, without `jqc`: ids,
/// reference names, an inspection's fields and an answer's options.
@Suite struct LedgerCompletionTests {
    @Test func idsAreShortUntilMoreIsTyped() throws {
        let audited = try AuditAssemblyTests.Audited()
        let completion = LedgerCompletion(home: audited.directory)
        let id = audited.inspection.lowercased
        #expect(try completion.values("ID", command: ["show"], positionals: [], current: "") == [String(id.prefix(8))])
        #expect(try completion.values("ID", command: ["show"], positionals: [], current: String(id.prefix(9))) == [id])
        #expect(try completion.values("ISSUE", command: ["photo"], positionals: [], current: "").isEmpty)
    }

    @Test func referenceNamesAndIdsAreOffered() throws {
        let audited = try AuditAssemblyTests.Audited()
        let completion = LedgerCompletion(home: audited.directory)
        let ledger = try InspectionLedger(
            storePath: audited.directory.storePath, photosPath: audited.directory.photosPath, access: .reading)
        let templates = try ledger.reference.allTemplates()
        let facilities = try ledger.reference.allFacilities()
        ledger.close()
        #expect(
            try completion.values("TEMPLATE", command: ["start"], positionals: [], current: "")
                == templates.flatMap { [$0.name, $0.id] })
        #expect(
            try completion.values("FACILITY", command: ["start"], positionals: [], current: "")
                == facilities.flatMap { [$0.name, $0.id] })
        #expect(try completion.values("NOTHING", command: ["start"], positionals: [], current: "").isEmpty)
    }

    @Test func theFieldsOfTheInspectionNamedAndTheirOptions() throws {
        let audited = try AuditAssemblyTests.Audited()
        let completion = LedgerCompletion(home: audited.directory)
        let reference = String(audited.inspection.lowercased.prefix(8))
        let fields = try completion.values("FIELD", command: ["set"], positionals: [reference], current: "")
        #expect(fields.contains("Notes"))
        let ledger = try InspectionLedger(
            storePath: audited.directory.storePath, photosPath: audited.directory.photosPath, access: .reading)
        let template = try #require(try ledger.state(of: audited.inspection)?.template)
        ledger.close()
        let passFail = try #require(template.fields.first { $0.type == .passFail })
        #expect(
            try completion.values("ANSWER", command: ["set"], positionals: [reference], current: passFail.label + "=")
                == ["\(passFail.label)=pass", "\(passFail.label)=fail"])
        #expect(try completion.values("FIELD", command: ["set"], positionals: ["ffffffff"], current: "").isEmpty)
    }

    @Test func noLedgerOffersNothing() throws {
        let temporary = TemporaryDirectory(prefix: "completion")
        let completion = LedgerCompletion(home: LedgerDirectory(path: temporary.appending("none")))
        #expect(try completion.values("ID", command: ["show"], positionals: [], current: "").isEmpty)
    }
}
