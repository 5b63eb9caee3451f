import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore

/// The reference data a person names when starting an inspection: a
/// template by id or name (any case), a facility by id or name, an area of
/// it by id or name; each refusal lists what is known.
public enum ReferenceChoice {
    /// Why nothing was chosen: what failed, why, and what to do.
    public enum Refusal: Error, Equatable, CustomStringConvertible {
        /// No reference data of this kind (`templates`, `facilities`) is on the device.
        case nothingPulled(String)
        case notFound(kind: String, reference: String, hint: String)
        case ambiguous(kind: String, reference: String, candidates: [String])

        public var description: String {
            switch self {
            case .nothingPulled(let kind):
                "no \(kind) on this device yet. Pull them with 'jqc pull' (online) or 'jqc pull --from FILE'."
            case .notFound(let kind, let reference, let hint):
                "no \(kind) matches '\(reference)'. \(hint)"
            case .ambiguous(let kind, let reference, let candidates):
                "'\(reference)' matches \(candidates.count) \(kind)s: \(candidates.prefix(5).joined(separator: ", "))"
                    + "\(candidates.count > 5 ? ", …" : ""). Type more of the id."
            }
        }
    }

    /// The start of a new inspection of `template` at `facility` (and `area`), as named.
    public static func start(template: String, facility: String, area: String?, in ledger: InspectionLedger) throws
        -> StartInspection
    {
        let template = try Self.template(named: template, in: ledger)
        let facility = try Self.facility(named: facility, in: ledger)
        let chosenArea = try area.map { try Self.area(named: $0, in: facility) }
        let pinned = try ledger.pinnedTemplate(hash: template.contentHash) != nil
        return StartInspection(
            template: template, templateAlreadyPinned: pinned, facilityID: facility.id,
            facilityName: facility.name, areaID: chosenArea?.id, areaName: chosenArea?.name)
    }

    public static func template(named reference: String, in ledger: InspectionLedger) throws -> Template {
        let all = try ledger.reference.allTemplates()
        guard !all.isEmpty else {
            throw Refusal.nothingPulled("templates")
        }
        // A reference that is no id may still be a name, tried next.
        if let normalized = try? RecordID.normalize(text: reference, what: "template id"),
            let byID = all.first(where: { $0.id == normalized })
        {
            return byID
        }
        let byName = all.filter { $0.name.lowercased() == reference.lowercased() }
        if byName.count == 1 { return byName[0] }
        if byName.count > 1 {
            throw Refusal.ambiguous(kind: "template", reference: reference, candidates: byName.map(\.description))
        }
        throw Refusal.notFound(
            kind: "template", reference: reference,
            hint: "Known: \(all.map(\.description).joined(separator: ", ")).")
    }

    public static func facility(named reference: String, in ledger: InspectionLedger) throws -> Facility {
        let all = try ledger.reference.allFacilities()
        guard !all.isEmpty else {
            throw Refusal.nothingPulled("facilities")
        }
        if let byID = all.first(where: { $0.id == reference.trimming(.spaces) }) { return byID }
        let byName = all.filter { $0.name.lowercased() == reference.lowercased() }
        if byName.count == 1 { return byName[0] }
        throw Refusal.notFound(
            kind: "facility", reference: reference,
            hint: "Known: \(all.map { "\($0.id) \"\($0.name)\"" }.joined(separator: ", ")).")
    }

    public static func area(named reference: String, in facility: Facility) throws -> Facility.Area {
        if let byID = facility.areas.first(where: { $0.id == reference }) { return byID }
        let byName = facility.areas.filter { $0.name.lowercased() == reference.lowercased() }
        if byName.count == 1 { return byName[0] }
        throw Refusal.notFound(
            kind: "area of \(facility.name)", reference: reference,
            hint: facility.areas.isEmpty
                ? "It has no areas: start without --area."
                : "Its areas: \(facility.areas.map { "\($0.id) \"\($0.name)\"" }.joined(separator: ", ")).")
    }
}
