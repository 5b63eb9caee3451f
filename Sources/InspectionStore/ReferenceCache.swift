import FoundationEssentials
import InspectionDomain
import LMDB
import LedgerCore
import LedgerStore

/// Facilities and templates pulled from the server (or imported from a file),
/// kept in tables of their own beside the log.
///
/// It is a cache: replacing or clearing it never touches the log, and an
/// inspection never reads its template from here after it started (it reads
/// the pinned copy recorded in the log).
public final class ReferenceCache: Sendable {
    let log: EventLog
    let facilities: Table
    let templates: Table
    let meta: Table

    public init(log: EventLog) throws {
        self.log = log
        facilities = try log.table(TableName.Reference.facilities)
        templates = try log.table(TableName.Reference.templates)
        meta = try log.table(TableName.Reference.meta)
    }

    /// What a pull or import brings.
    public struct Snapshot: Sendable {
        public var facilities: [Facility]
        public var templates: [Template]

        public init(facilities: [Facility], templates: [Template]) {
            self.facilities = facilities
            self.templates = templates
        }

        /// This snapshot with `other`'s facilities and templates added, each
        /// replacing the one of the same id (`jqc pull --from FILE --add`:
        /// one new template without re-importing everything).
        public func adding(_ other: Snapshot) -> Snapshot {
            let facilityIDs = Set(other.facilities.map(\.id))
            let templateIDs = Set(other.templates.map(\.id))
            return Snapshot(
                facilities: facilities.filter { !facilityIDs.contains($0.id) } + other.facilities,
                templates: templates.filter { !templateIDs.contains($0.id) } + other.templates)
        }

        /// Reads `{"facilities": [...], "templates": [...]}` as `init(json:)`
        /// does, except that a template this jqc cannot use is left out and
        /// named in `skipped` (one line each) instead of refusing the file:
        /// the rule a server pull follows too.
        public static func keepingUsable(json: JSONValue) throws -> (snapshot: Snapshot, skipped: [String]) {
            guard case .object(var members) = json, let list = json["templates"] else {
                return (try Snapshot(json: json), [])
            }
            var usable: [JSONValue] = []
            var skipped: [String] = []
            for (index, item) in (list.arrayValue ?? list["data"]?.arrayValue ?? []).enumerated() {
                do {
                    try Template(json: item).validate()
                    usable.append(item)
                } catch {
                    let name = item["name"]?.stringValue.map {
                        " \"\(TerminalText.singleLine(String($0.prefix(60))))\""
                    }
                    let id = Facility.normalizedID(item["id"]).map { TerminalText.singleLine(String($0.prefix(40))) }
                    skipped.append(
                        "Template \(id ?? "number \(index + 1)")\(name ?? "") was skipped: \(error). This jqc cannot "
                            + "record it.")
                }
            }
            if list.arrayValue != nil || list["data"]?.arrayValue != nil {
                members.removeAll { $0.key == "templates" }
                members.append(.init("templates", .array(usable)))
            }
            return (try Snapshot(json: .object(members)), skipped)
        }

        /// Reads `{"facilities": [...], "templates": [...]}`, where each list
        /// may also be the server's envelope `{"ok": true, "data": [...]}`.
        public init(json: JSONValue) throws {
            func list(_ key: String) -> [JSONValue]? {
                guard let value = json[key] else { return nil }
                return value.arrayValue ?? value["data"]?.arrayValue
            }
            guard let facilityList = list("facilities"), let templateList = list("templates") else {
                throw ReferenceDataError.invalid("expected an object with \"facilities\" and \"templates\" lists")
            }
            facilities = try facilityList.map { json throws in try Facility(json: json) }
            templates = try templateList.map { json throws in
                let template = try Template(json: json)
                try template.validate()
                return template
            }
            let facilityIDs = ReferenceDataError.repeated(facilities.map(\.id))
            let templateIDs = ReferenceDataError.repeated(templates.map(\.id))
            guard facilityIDs.isEmpty && templateIDs.isEmpty else {
                throw ReferenceDataError.duplicateIDs(facilities: facilityIDs, templates: templateIDs)
            }
        }
    }

    /// What a replace kept.
    public struct Kept: Equatable, Sendable {
        public var facilities: Int
        public var templates: Int
    }

    /// Replaces the cached reference data with `snapshot`, in one transaction,
    /// and answers what the tables hold afterwards (what was kept, counted
    /// from the tables rather than from the snapshot).
    @discardableResult
    public func replace(with snapshot: Snapshot, at time: Timestamp) throws -> Kept {
        let facilities = self.facilities
        let templates = self.templates
        let meta = self.meta
        let ids = Set(snapshot.facilities.map(\.id)).count + Set(snapshot.templates.map(\.id)).count
        guard ids == snapshot.facilities.count + snapshot.templates.count else {
            throw ReferenceDataError.duplicateIDs(
                facilities: ReferenceDataError.repeated(snapshot.facilities.map(\.id)),
                templates: ReferenceDataError.repeated(snapshot.templates.map(\.id)))
        }
        do {
            return try log.environment.write { txn in
                try txn.empty(facilities)
                try txn.empty(templates)
                for facility in snapshot.facilities {
                    try txn.put(facilities, Array(facility.id.utf8), Array(facility.jsonValue.serialized().utf8))
                }
                for template in snapshot.templates {
                    try txn.put(templates, Array(template.id.utf8), template.canonicalCBOR.encoded())
                }
                try txn.put(meta, Array("pulled_at".utf8), Array(time.iso8601.utf8))
                return Kept(facilities: try txn.count(facilities), templates: try txn.count(templates))
            }
        } catch let error as LMDBError {
            throw LedgerError.from(error, store: log.environment.path)
        }
    }

    /// Empties the cache (facilities, templates and when it was pulled), in
    /// one transaction, and answers what it held before. Recorded
    /// inspections keep the templates they pinned in the log.
    @discardableResult
    public func clear() throws -> Kept {
        let facilities = self.facilities
        let templates = self.templates
        let meta = self.meta
        do {
            return try log.environment.write { txn in
                let held = Kept(facilities: try txn.count(facilities), templates: try txn.count(templates))
                try txn.empty(facilities)
                try txn.empty(templates)
                _ = try txn.delete(meta, Array("pulled_at".utf8))
                return held
            }
        } catch let error as LMDBError {
            throw LedgerError.from(error, store: log.environment.path)
        }
    }

    public func allFacilities() throws -> [Facility] {
        try all(facilities) { try Facility(json: try JSONValue(parsing: $0)) }
    }

    public func allTemplates() throws -> [Template] {
        try all(templates) { try Template(cbor: try CBORValue(decoding: $0)) }
    }

    /// Every value of `table`, in key order, as `decode` reads it.
    private func all<Item>(_ table: Table, _ decode: ([UInt8]) throws -> Item) throws -> [Item] {
        try log.environment.read { txn in
            var result: [Item] = []
            try txn.forEachValue(table) { value in
                result.append(try decode(value))
                return true
            }
            return result
        }
    }

    public func facility(id: String) throws -> Facility? {
        try allFacilities().first { $0.id == id }
    }

    public func template(id: String) throws -> Template? {
        try allTemplates().first { $0.id == id }
    }

    /// When the cache was last replaced, if ever.
    public func pulledAt() throws -> String? {
        try log.environment.read { txn in
            try txn.get(meta, Array("pulled_at".utf8)).map { String(decoding: $0, as: UTF8.self) }
        }
    }
}

extension InspectionLedger {
    /// Replaces the reference cache with `snapshot` unless that would take
    /// away what recording needs; then the cache is kept as it was and
    /// `ReferenceDataError.wouldLose` says why. A snapshot without a usable
    /// template is refused while the cache holds templates or the pull
    /// skipped some (`skipped`: a hostile or broken server would otherwise
    /// leave `jqc start` nothing, offline), and so is one that leaves out a
    /// template a draft or an outstanding follow-up was started from.
    @discardableResult
    public func replaceReference(
        with snapshot: ReferenceCache.Snapshot, skipped: [String] = [], at time: Timestamp
    ) throws -> ReferenceCache.Kept {
        let cached = try reference.allTemplates()
        if snapshot.templates.isEmpty, !cached.isEmpty || !skipped.isEmpty {
            throw ReferenceDataError.wouldLose(
                "it holds no template this jqc can use (\(skipped.count) skipped), and the cache's "
                    + "\(cached.count) templates would be gone, so no inspection could be started")
        }
        let offered = Set(snapshot.templates.map(\.id))
        let inUse = Set(try summaries(.drafts).map(\.templateID) + summaries(.followUps).map(\.templateID))
        let dropped = cached.map(\.id).filter { inUse.contains($0) && !offered.contains($0) }
        if !dropped.isEmpty {
            throw ReferenceDataError.wouldLose(
                "it leaves out template\(dropped.count == 1 ? "" : "s") \(ReferenceDataError.list(dropped)), which "
                    + "open drafts or outstanding follow-ups were started from")
        }
        return try reference.replace(with: snapshot, at: time)
    }
}
