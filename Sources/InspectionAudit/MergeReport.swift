import FoundationEssentials
import InspectionDomain
import LedgerCore

/// What the merge of shared copies leaves for a person to see
/// (`docs/domain.md` § Sharing and merging): each conflict with all its
/// values, who, when and which one stands; the answers that arrived after
/// the submit; a second submit that does not stand; a discard, and one
/// overtaken by work it had not seen (who, where, why). The same
/// words in `jqc show`, `jqc fill` and `jqc audit`; the JSON is the
/// `merge` definition of `Schemas/cli/jqc-json.schema.json`.
public struct MergeReport: Sendable {
    public let state: InspectionState

    public init(_ state: InspectionState) { self.state = state }

    /// Whether there is nothing to say.
    public var isEmpty: Bool {
        state.conflicts.isEmpty && state.arrivedAfterSubmit.isEmpty && state.overruledSubmits.isEmpty
            && !(state.status == .completed && !state.discards.isEmpty)
            && (state.status == .completed || state.overtakenDiscards.isEmpty)
    }

    func name(_ field: FieldID) -> String {
        state.template?.field(id: field).map { "\($0.label) (\(field.rawValue))" } ?? "field \(field.rawValue)"
    }

    static func who(_ actor: Actor, _ stamp: EventStamp, _ at: Timestamp) -> String {
        "by \(actor.name) on device \(EventWording.short(stamp.device)) at \(at.iso8601)"
    }

    static func write(_ write: FieldWrite) -> String {
        (write.value == nil ? "cleared" : EventWording.valueText(write.value)) + " "
            + who(write.actor, write.stamp, write.recordedAt)
    }

    /// The report as lines of text (person-written parts through `sanitise`).
    public func lines(sanitise: (String) -> String = { $0 }) -> [String] {
        var lines: [String] = []
        for conflict in state.conflicts {
            lines.append(
                "Conflict: \(sanitise(name(conflict.fieldID))) was changed on more than one device since they last "
                    + "exchanged; a new answer here settles it:")
            for (index, write) in conflict.writes.enumerated() {
                lines.append("  \(index == 0 ? "stands:" : "also:  ") \(sanitise(Self.write(write)))")
            }
        }
        if !state.arrivedAfterSubmit.isEmpty {
            lines.append("Arrived after submit (kept in the history, not part of the submitted form):")
            for write in state.arrivedAfterSubmit {
                lines.append("  \(sanitise(name(write.fieldID))): \(sanitise(Self.write(write)))")
            }
        }
        if state.status != .completed {
            for discard in state.overtakenDiscards {
                let reason = discard.reason.map { ", reason: \($0)" } ?? ""
                lines.append(
                    sanitise(
                        "Discard overtaken: discarded \(Self.who(discard.by, discard.stamp, discard.at))\(reason); "
                            + "that device had not seen \(Self.count(state.unseenWork(by: discard), "later record")) "
                            + "(answers, photos or issues), "
                            + (state.status == .discarded
                                ? "so it closed nothing (a later discard that saw everything did)"
                                : "so the inspection stays open here")))
            }
        }
        if let standing = state.standingSubmit {
            for other in state.overruledSubmits {
                lines.append(
                    "Also submitted \(sanitise(Self.who(other.by, other.stamp, other.at))): the submit on device "
                        + "\(EventWording.short(standing.stamp.device)) stands, and only that device sends it")
            }
            if state.status == .completed {
                for discard in state.discards {
                    lines.append(
                        "Discarded \(sanitise(Self.who(discard.by, discard.stamp, discard.at))): the submit stands")
                }
            }
        }
        return lines
    }

    /// `1 later record`, `2 later records`.
    static func count(_ n: Int, _ noun: String) -> String { Plural.of(n, noun) }

    static func json(_ write: FieldWrite, standing: Bool?) -> JSONValue {
        var members: [JSONValue.Member] = [
            .init("value", write.value?.jsonValue ?? .null), .init("cleared", .bool(write.value == nil)),
            .init("actor", .string(write.actor.name)), .init("device", .string(write.stamp.device.lowercased)),
            .init("recorded_at", .string(write.recordedAt.iso8601)),
        ]
        if let standing { members.append(.init("standing", .bool(standing))) }
        return .object(members)
    }

    static func json(_ closing: Closing) -> JSONValue {
        .object([
            .init("actor", .string(closing.by.name)), .init("device", .string(closing.stamp.device.lowercased)),
            .init("at", .string(closing.at.iso8601)),
        ])
    }

    /// The inspection's records on the server, as each device reported
    /// them, in server-id order: which one this device sent, which stands.
    var serverRecords: [JSONValue] {
        let standing = state.standingServerRecord?.serverID
        var seen: Set<String> = []
        return state.sync.serverRecords.sorted { ($0.serverID, $0.at) < ($1.serverID, $1.at) }
            .filter { seen.insert($0.serverID).inserted }
            .map { record in
                .object([
                    .init("server_id", .string(record.serverID)), .init("device", .string(record.device.lowercased)),
                    .init("sent_here", .bool(record.device == state.device)),
                    .init("stands", .bool(record.serverID == standing)),
                ])
            }
    }

    /// The `merge` definition of `Schemas/cli/jqc-json.schema.json`.
    public var jsonValue: JSONValue {
        let conflicts: [JSONValue] = state.conflicts.map { conflict in
            .object([
                .init("field_id", .string(conflict.fieldID.rawValue)),
                .init(
                    "writes",
                    .array(conflict.writes.enumerated().map { Self.json($0.element, standing: $0.offset == 0) })),
            ])
        }
        let late: [JSONValue] = state.arrivedAfterSubmit.map { write in
            .object([
                .init("field_id", .string(write.fieldID.rawValue)), .init("write", Self.json(write, standing: nil)),
            ])
        }
        return .object([
            .init("merged", .bool(state.isMerged)), .init("conflicts", .array(conflicts)),
            .init("arrived_after_submit", .array(late)),
            .init("submitted_by", state.standingSubmit.map(Self.json) ?? .null),
            .init("overruled_submits", .array(state.overruledSubmits.map(Self.json))),
            .init("discards", .array(state.discards.map(Self.json))),
            .init(
                "overtaken_discards",
                .array(
                    state.overtakenDiscards.map { discard in
                        .object([
                            .init("actor", .string(discard.by.name)),
                            .init("device", .string(discard.stamp.device.lowercased)),
                            .init("at", .string(discard.at.iso8601)), .init("reason", .optional(discard.reason)),
                            .init("unseen_records", .integer(state.unseenWork(by: discard))),
                        ])
                    })),
            .init("server_records", .array(serverRecords)),
        ])
    }
}
