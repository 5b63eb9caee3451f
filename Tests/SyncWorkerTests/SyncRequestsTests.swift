import Foundation
import InspectionDomain
import LedgerCore
import SyncWorker
import Testing

/// The exact bodies `Schemas/openapi.yaml` requires, built from folded state.
@Suite struct SyncRequestsTests {
    let sample: SampleLedger

    init() throws { sample = try SampleLedger(serverURL: "http://127.0.0.1:9/api/v1") }

    @Test func anInspectionBodyHasExactlyTheContractsFields() throws {
        let id = try sample.completedInspection(photos: 2, issues: 0)
        let state = try #require(try sample.ledger.state(of: id))
        let image = try #require(state.photos.first { $0.fieldID == "10" })
        let body = SyncRequests.inspection(
            state, photoPath: { $0 == image.photo.photoID ? "/uploads/\(String(repeating: "a", count: 64)).png" : nil },
            parentServerID: nil)

        guard case .object(let members) = body else {
            Issue.record("not an object")
            return
        }
        #expect(
            members.map(\.key) == [
                "client_id", "template_id", "facility_id", "area_id", "form_data", "overall_score", "started_at",
                "completed_at", "parent_inspection_id", "follow_up_required",
            ])
        #expect(body["client_id"] == .string(id.lowercased))
        #expect(body["template_id"] == .integer(11))
        #expect(body["facility_id"] == .integer(101))
        #expect(body["area_id"] == .integer(1001))
        #expect(body["parent_inspection_id"] == .null)
        #expect(body["follow_up_required"] == .bool(false))
        #expect(body["overall_score"] == JSONValue.double(try #require(state.score)))
        let rfc3339 = #/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/#
        #expect(try rfc3339.wholeMatch(in: try #require(body["started_at"]?.stringValue)) != nil)
        #expect(try rfc3339.wholeMatch(in: try #require(body["completed_at"]?.stringValue)) != nil)

        let form = try #require(body["form_data"])
        #expect(form["2"] == .integer(4))
        #expect(form["5"] == .string("pass"))
        #expect(form["7"] == .bool(true))
        #expect(form["8"] == .string("Good"))
        // The uploaded photo is its server path; the one not uploaded is "", never a local reference.
        #expect(form["10"] == .string("/uploads/\(String(repeating: "a", count: 64)).png"))
        #expect(form["11"] == .string(""))
        #expect(form["1"] == nil, "a section never holds a value")
    }

    @Test func aReinspectionNamesItsParentsServerID() throws {
        let parent = try sample.completedInspection(photos: 0, issues: 0, followUp: true)
        let child = try sample.completedReinspection(of: parent)
        let state = try #require(try sample.ledger.state(of: child))
        let body = SyncRequests.inspection(state, photoPath: { _ in nil }, parentServerID: "41")
        #expect(body["parent_inspection_id"] == .integer(41))
        #expect(body["client_id"] == .string(child.lowercased))
    }

    @Test func anIssueBodyUsesTheInspectionsServerID() throws {
        let id = try sample.completedInspection(photos: 0, issues: 1, issuePhoto: false)
        let state = try #require(try sample.ledger.state(of: id))
        let issue = try #require(state.issues.first)
        let body = SyncRequests.issue(issue, of: state, inspectionServerID: "7", photoPath: nil)
        #expect(
            body
                == .object([
                    "client_id": .string(issue.id.lowercased), "inspection_id": .integer(7),
                    "facility_id": .integer(101), "severity": .string("high"),
                    "description": .string("Leaking tap 1"), "photo_path": .null,
                ]))
    }

    @Test func anUploadNamesItsEntityAndField() throws {
        let id = try sample.completedInspection(photos: 1, issues: 1, issuePhoto: true)
        let state = try #require(try sample.ledger.state(of: id))
        let fieldPhoto = try #require(state.photos.first { $0.fieldID != nil })
        let issuePhoto = try #require(state.photos.first { $0.issueID != nil })
        let upload = SyncRequests.upload(fieldPhoto, bytes: [1])
        #expect(upload.entityType == "inspection")
        #expect(upload.fieldID == "10")
        #expect(upload.mediaType == "image/png")
        #expect(upload.filename == "\(fieldPhoto.photo.photoID.lowercased).png")
        let issueUpload = SyncRequests.upload(issuePhoto, bytes: [1])
        #expect(issueUpload.entityType == "issue")
        #expect(issueUpload.fieldID == nil)
    }
}
