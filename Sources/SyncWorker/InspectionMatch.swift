import FoundationEssentials
import Glibc
import InspectionDomain
import LedgerCore

/// Whether a record of the server's history (`GET /inspections`) is the
/// inspection a `POST /inspections` body describes: the exactly-once look-up
/// after a lost answer. Pure, so every rule is tested by a table.
///
/// A record carrying `client_id` (this project's extension) is decided by it
/// alone. The reference backend's history carries no `client_id` and no
/// `started_at` (its summary is the template, facility, area, completion time,
/// score, follow-up badge and parent link), so a record without `client_id`
/// matches when every one of these agrees with the body:
///
/// - `template_id`, `facility_id`, `area_id` and `parent_inspection_id`:
///   the same id, or both null;
/// - `completed_at` (and `started_at`, only when the record has it): the same
///   instant at the precision the server's text keeps (milliseconds:
///   `…09:30:00.123Z` stands for any time within that millisecond, rounded or
///   cut; whole seconds: within that second);
/// - `overall_score`: both null, or within one unit of the last digit the
///   server's number shows (`52.5` keeps tenths);
/// - `follow_up_required`: a record showing `true` needs a body sent with
///   `true`; a record showing `false` matches either, because the server
///   clears the badge when a re-inspection of it arrives.
///
/// A member the record leaves out altogether (not null: absent) says
/// nothing and is not compared, except `completed_at`, without which no
/// record matches: a server showing less can only make more records match,
/// which is said (`Outcome.ambiguous`), never a second record made.
public enum InspectionMatch {
    /// What the history says about the body's inspection.
    public enum Outcome: Equatable, Sendable {
        /// No record matches: the inspection is not on the server.
        case none
        /// Exactly one record matches: its server id.
        case unique(String)
        /// More than one matches and nothing tells which is this inspection
        /// (their ids, in ascending order).
        case ambiguous([String])
    }

    /// The outcome over `records` (ids that are not integers ≥ 1 never match).
    public static func outcome(of body: JSONValue, in records: [JSONValue]) -> Outcome {
        var ids: [String] = []
        for record in records where matches(record, body) {
            guard let id = record["id"]?.integerValue, id >= 1 else { continue }
            if !ids.contains(String(id)) { ids.append(String(id)) }
        }
        switch ids.count {
        case 0: return .none
        case 1: return .unique(ids[0])
        default: return .ambiguous(ids.sorted { Int64($0) ?? 0 < Int64($1) ?? 0 })
        }
    }

    /// Whether `record` is the inspection `body` describes (the rules above).
    public static func matches(_ record: JSONValue, _ body: JSONValue) -> Bool {
        if let theirs = record["client_id"]?.stringValue, !theirs.isEmpty {
            guard let mine = body["client_id"]?.stringValue else { return false }
            return mine.lowercased() == theirs.lowercased()
        }
        for key in ["template_id", "facility_id", "area_id", "parent_inspection_id"]
        where record[key] != nil && !sameID(record[key], body[key]) {
            return false
        }
        guard sameInstant(server: record["completed_at"], ours: body["completed_at"]) else { return false }
        if let started = record["started_at"], !sameInstant(server: started, ours: body["started_at"]) {
            return false
        }
        if let score = record["overall_score"], !sameScore(server: score, ours: body["overall_score"]) { return false }
        if record["follow_up_required"]?.boolValue == true, body["follow_up_required"]?.boolValue != true {
            return false
        }
        return true
    }

    /// The same id (an integer or its text), or both absent or null.
    static func sameID(_ a: JSONValue?, _ b: JSONValue?) -> Bool {
        let x = APIClient.recordID(a)
        let y = APIClient.recordID(b)
        return x == y
    }

    /// The same instant at the precision of the server's text: ours (with
    /// microseconds) lies within one unit of its last digit, either side
    /// (a server may round or cut). A text that is no time never matches.
    static func sameInstant(server: JSONValue?, ours: JSONValue?) -> Bool {
        guard let text = server?.stringValue, let mine = ours?.stringValue,
            let theirs = APIClient.serverTime(text), let local = APIClient.serverTime(mine)
        else { return false }
        let unit = timeUnitMicroseconds(of: text)
        return abs(theirs.microsecondsSinceEpoch - local.microsecondsSinceEpoch) < unit
    }

    /// One unit of the last fractional digit a time's text shows, in
    /// microseconds: 1 000 for milliseconds, 1 000 000 for whole seconds.
    static func timeUnitMicroseconds(of text: String) -> Int64 {
        guard let dot = text.firstIndex(of: ".") else { return 1_000_000 }
        let digits = text[text.index(after: dot)...].prefix(while: \.isNumber).count
        var unit: Int64 = 1_000_000
        for _ in 0..<min(digits, 6) { unit /= 10 }
        return unit
    }

    /// Both null (or absent), or numbers within one unit of the last digit
    /// the server's number shows.
    static func sameScore(server: JSONValue?, ours: JSONValue?) -> Bool {
        let theirs = server.flatMap { $0.isNull ? nil : $0 }
        let mine = ours.flatMap { $0.isNull ? nil : $0 }
        switch (theirs, mine) {
        case (nil, nil): return true
        case (.some(let a), .some(let b)):
            guard case .number(let text) = a, let x = a.doubleValue, let y = b.doubleValue else { return false }
            return abs(x - y) < scoreUnit(of: text)
        default: return false
        }
    }

    /// One unit of the last digit of a JSON number's text (`52` → 1, `48.25` → 0.01);
    /// with an exponent, a relative hair.
    static func scoreUnit(of text: String) -> Double {
        if text.contains(where: { $0 == "e" || $0 == "E" }) { return max(abs(Double(text) ?? 0) * 1e-12, 1e-12) }
        guard let dot = text.firstIndex(of: ".") else { return 1 }
        let digits = text[text.index(after: dot)...].count
        return pow(10, -Double(digits))
    }
}
