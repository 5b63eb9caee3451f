import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerStore

/// What only the ledger can offer shell completion (`jqc __complete`):
/// inspection and issue ids (drafts first), template, facility and area
/// names, and the fields of the inspection named, with the options an
/// answer may take.
public struct LedgerCompletion {
    public let home: LedgerDirectory

    public init(home: LedgerDirectory) { self.home = home }

    /// The candidates for a value named `name` (a positional's name or an
    /// option's value name) of `command`, after `positionals`, while
    /// `current` is typed; none for a name the ledger knows nothing of.
    public func values(_ name: String, command: [String], positionals: [String], current: String) throws -> [String] {
        // Read-only: a Tab must never write to the ledger (not even to
        // rebuild a stale view) nor wait for the writer lock.
        guard home.exists else { return [] }
        let ledger = try InspectionLedger(
            storePath: home.storePath, photosPath: home.photosPath, access: .reading)
        defer { ledger.close() }
        switch name {
        case "ID":
            // Drafts first: they are what an inspector is working on.
            let summaries = try ledger.summaries()
            let drafts = summaries.filter { $0.status == .draft }.reversed()
            let others = summaries.filter { $0.status != .draft }.reversed()
            return (Array(drafts) + Array(others)).map { summary in
                let id = summary.id.lowercased
                return current.count > 8 ? id : String(id.prefix(8))
            }
        case "ISSUE":
            return try ledger.issues().map { current.count > 8 ? $0.id.lowercased : String($0.id.lowercased.prefix(8)) }
        case "TEMPLATE":
            return try ledger.reference.allTemplates().flatMap { [$0.name, $0.id] }
        case "FACILITY":
            return try ledger.reference.allFacilities().flatMap { [$0.name, $0.id] }
        case "AREA":
            return try ledger.reference.allFacilities().flatMap { $0.areas.flatMap { [$0.name, $0.id] } }
        case "FIELD", "ANSWER":
            // Completion offers what it can: an unresolved reference offers nothing.
            guard let reference = positionals.first,
                let id = try? ledger.resolveInspection(reference),
                let template = try ledger.state(of: id)?.template
            else { return [] }
            var fields = template.fields.filter { !$0.type.isDisplayOnly }
            if command == ["sign"] { fields = fields.filter { $0.type == .signature } }
            if command == ["photo"] { fields = fields.filter { $0.type == .image } }
            guard name == "ANSWER" else { return fields.flatMap { [$0.label, $0.id.rawValue] } }
            // FIELD=VALUE: the field first, then the options it offers.
            if let equals = current.firstIndex(of: "=") {
                let typed = String(current[..<equals])
                guard let field = try? template.field(matching: typed) else { return [] }
                let options: [String] =
                    switch field.type {
                    case .checkbox: ["yes", "no"]
                    case .passFail: ["pass", "fail"]
                    case .rating: ["0", "1", "2", "3", "4", "5"]
                    default: field.type.offersOptions ? field.options ?? [] : []
                    }
                return options.map { "\(typed)=\($0)" }
            }
            return fields.filter { !$0.type.holdsPhoto }.flatMap { ["\($0.label)=", "\($0.id)="] }
        default:
            return []
        }
    }
}
