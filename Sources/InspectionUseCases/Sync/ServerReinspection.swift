import FoundationEssentials
import InspectionDomain
import InspectionStore
import SyncWorker

/// A re-inspection of a record the server holds and this ledger does not (a
/// colleague's inspection, from `jqc history`): the same template (from the
/// reference cache), facility and area, linked to the record's server id,
/// pre-filled from the server's form where it sent one. The server clears
/// the record's follow-up when the re-inspection is submitted to it, as the
/// contract says.
public struct ServerReinspection: Sendable {
    /// What to start, and what of the server's form could not be copied.
    public var start: StartInspection
    /// Field ids of the form whose values do not fit the template here.
    public var notCopied: [String]
    /// Whether the server sent the record's form at all.
    public var serverSentForm: Bool

    /// Reads `record` against the reference cache of `ledger`; refuses a
    /// record whose template this device has not pulled.
    public init(of record: ServerInspectionRecord, in ledger: InspectionLedger) throws {
        guard let template = try ledger.reference.template(id: record.templateID) else {
            throw ServerReinspectionError.templateNotPulled(record: record.id, template: record.templateID)
        }
        let facility = try ledger.reference.facility(id: record.facilityID)
        guard let facilityName = record.facilityName ?? facility?.name else {
            throw ServerReinspectionError.facilityUnknown(record: record.id, facility: record.facilityID)
        }
        let areaName =
            record.areaName ?? record.areaID.flatMap { id in facility?.areas.first(where: { $0.id == id })?.name }
        var start = StartInspection(
            template: template, templateAlreadyPinned: try ledger.pinnedTemplate(hash: template.contentHash) != nil,
            facilityID: record.facilityID, facilityName: facilityName, areaID: record.areaID, areaName: areaName)
        var answers: [FieldAnswer] = []
        var notCopied: [String] = []
        for field in template.fields where field.type.copiesToReinspection {
            guard let value = record.formData?[field.id.rawValue], !Self.isUnanswered(value) else { continue }
            do {
                answers.append(FieldAnswer(field: field, value: try FieldValue(json: value, for: field)))
            } catch {
                notCopied.append(field.id.rawValue)
            }
        }
        start.serverParent = StartInspection.ServerParent(
            serverID: record.id, followUpRequired: record.followUpRequired, answers: answers)
        self.start = start
        self.notCopied = notCopied
        serverSentForm = record.formData != nil
    }

    /// The contract's "unanswered" forms: null, "" and an empty list.
    static func isUnanswered(_ value: JSONValue) -> Bool {
        switch value {
        case .null: true
        case .string(let text): text.isEmpty
        case .array(let items): items.isEmpty
        default: false
        }
    }
}

/// Why a server record cannot be re-inspected here.
public enum ServerReinspectionError: Error, CustomStringConvertible, Equatable {
    /// The record's template is not in this device's reference cache.
    case templateNotPulled(record: String, template: String)
    /// Neither the record nor the cache names the record's facility.
    case facilityUnknown(record: String, facility: String)

    public var description: String {
        switch self {
        case .templateNotPulled(let record, let template):
            "the server's record \(record) was made from template \(template), which this device has not pulled; "
                + "nothing was recorded. Run 'jqc pull', then start the re-inspection again."
        case .facilityUnknown(let record, let facility):
            "the server's record \(record) names facility \(facility), which neither the record nor this device's "
                + "reference data names; nothing was recorded. Run 'jqc pull', then start the re-inspection again."
        }
    }
}
