import Foundation
import InspectionUseCases
import Testing

/// What `jqc handover --to` takes as a device (binding the file) and what
/// stays a display name (unbound): `Handover.device(named:)`.
@Suite struct RecipientDeviceTests {
    static let device = UUID(uuidString: "5a56ef4e-7cb5-46c8-ae28-5219e13fe396")!

    static let cases: [(given: String, device: UUID?)] = [
        ("5a56ef4e-7cb5-46c8-ae28-5219e13fe396", device),
        ("5A56EF4E-7CB5-46C8-AE28-5219E13FE396", device),
        ("  5a56ef4e-7cb5-46c8-ae28-5219e13fe396 ", device),
        ("jqc/5a56ef4e-7cb5-46c8-ae28-5219e13fe396", device),
        ("jqc/5a56ef4e-7cb5-46c8-ae28-5219e13fe396+1a2b3c4d+AXn1fQ==", device),
        ("Ben", nil),
        ("Ben's tablet", nil),
        ("5a56ef4e", nil),
        ("5a56ef4e7cb546c8ae285219e13fe396", nil),
        ("jqc/Ben", nil),
        ("device 5a56ef4e-7cb5-46c8-ae28-5219e13fe396", nil),
        ("", nil),
    ]

    @Test(arguments: cases)
    func aDeviceIdBindsAndAnythingElseIsAName(_ given: String, _ device: UUID?) {
        #expect(Handover.device(named: given) == device, "\(given)")
    }
}
