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
        facilities = try log.table("ref:facilities")
        templates = try log.table("ref:templates")
        meta = try log.table("ref:meta")
    }

    /// What a pull or import brings.
    public struct Snapshot: Sendable {
        public var facilities: [Facility]
        public var templates: [Template]

        public init(facilities: [Facility], templates: [Template]) {
            self.facilities = facilities
            self.templates = templates
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

    public func allFacilities() throws -> [Facility] {
        try log.environment.read { txn in
            var result: [Facility] = []
            try txn.forEach(facilities) { _, value in
                result.append(try Facility(json: try JSONValue(parsing: value)))
                return true
            }
            return result
        }
    }

    public func allTemplates() throws -> [Template] {
        try log.environment.read { txn in
            var result: [Template] = []
            try txn.forEach(templates) { _, value in
                result.append(try Template(cbor: try CBORValue(decoding: value)))
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
