import FoundationEssentials
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore

/// An error whose message names facts a script needs, given again as the
/// members of the JSON error line's `"detail"` object (`JQC_ERRORS=json`),
/// so that a script reads them instead of parsing the sentence. Each
/// member's name and meaning is in `Schemas/cli-json.md`.
protocol ErrorDetailing: Error {
    var detail: [JSONValue.Member] { get }
}

extension ErrorKind {
    /// The facts `error` names for scripts; empty when it names none.
    static func detail(of error: any Error) -> [JSONValue.Member] {
        if let wrapping = error as? any ErrorWrapping { return detail(of: wrapping.wrapped) }
        return (error as? any ErrorDetailing)?.detail ?? []
    }
}

extension SenderTrust.Distrust: ErrorDetailing {
    var detail: [JSONValue.Member] {
        switch self {
        case .otherKey(let device, let fileKey, let pinned):
            [
                .init("device", .string(device.lowercased)), .init("file_key_id", Self.keyID(fileKey)),
                .init("pinned_key_ids", .array(pinned.map(Self.keyID))),
            ]
        case .notTheGivenKey(let device, let fileKey, let given):
            [
                .init("device", .string(device.lowercased)), .init("file_key_id", Self.keyID(fileKey)),
                .init("given_key_id", Self.keyID(given)),
            ]
        case .givenKeyUnusable(let device, _, _):
            [.init("device", .string(device.lowercased))]
        case .fork(let fork, _, _, let recorded):
            [
                .init("device", .string(fork.device.lowercased)),
                .init("held", Self.checkpoint(fork.first)), .init("theirs", Self.checkpoint(fork.second)),
                .init("fork_recorded_now", .bool(recorded)),
            ]
        case .otherStart(let inspection, let held, let theirs):
            [
                .init("inspection", .string(inspection.lowercased)), .init("held_start", .string(held.lowercased)),
                .init("their_start", .string(theirs.lowercased)),
            ]
        case .otherBytes(let inspection, let event):
            [.init("inspection", .string(inspection.lowercased)), .init("event", .string(event.lowercased))]
        }
    }

    static func keyID(_ verifierKey: String) -> JSONValue { .string(DeviceKeyFile.keyID(verifierKey)) }

    static func checkpoint(_ seen: DeviceStreamEvent.SeenCheckpoint) -> JSONValue {
        .object([.init("size", .integer(seen.size)), .init("root", .string(seen.root))])
    }
}

extension SyncServiceUnit.UnitRefusal: ErrorDetailing {
    var detail: [JSONValue.Member] { [.init("what", .string(what)), .init("value", .string(value))] }
}

extension LedgerError: ErrorDetailing {
    var detail: [JSONValue.Member] {
        switch self {
        case .brokenChain(let position, _), .corruptRecord(let position, _):
            [.init("position", .integer(position))]
        case .eventIDReused(let id, let position):
            [.init("event", .string(id.lowercased)), .init("position", .integer(position))]
        case .versionConflict(let stream, let expected, let actual):
            [
                .init("stream", .string(stream.lowercased)), .init("expected", .integer(expected)),
                .init("actual", .integer(actual)),
            ]
        case .noSpace(let path, let freeBytes):
            [.init("path", .string(path)), .init("free_bytes", .integer(freeBytes))]
        case .rolledBack(_, _, let recorded, let found, let replaced):
            [
                .init("recorded_position", .integer(recorded.position)),
                .init("found_position", .integer(found.position)), .init("replaced", .bool(replaced)),
            ]
        default:
            []
        }
    }
}

extension ReferenceDataError: ErrorDetailing {
    var detail: [JSONValue.Member] {
        guard case .duplicateIDs(let facilities, let templates) = self else { return [] }
        return [
            .init("facilities", .array(facilities.map(JSONValue.string))),
            .init("templates", .array(templates.map(JSONValue.string))),
        ]
    }
}

extension TreeCheckError: ErrorDetailing {
    var detail: [JSONValue.Member] {
        guard let node = node?.node else { return [] }
        return [.init("level", .integer(node.level)), .init("index", .integer(node.index))]
    }
}

extension DomainError: ErrorDetailing {
    var detail: [JSONValue.Member] {
        switch self {
        case .handedOver(let id, let to, _):
            [.init("inspection", .string(id.lowercased)), .init("to", .string(to))]
        case .readOnlyCopy(let id, let addressedTo):
            [.init("inspection", .string(id.lowercased)), .init("addressed_to", .string(addressedTo.lowercased))]
        case .inspectionNotEditable(let id, let status):
            [.init("inspection", .string(id.lowercased)), .init("status", .string(status.rawValue))]
        case .requiredFieldsEmpty(let id, let missing):
            [
                .init("inspection", .string(id.lowercased)),
                .init("missing", .array(missing.map { .string("\($0.id)") })),
            ]
        case .valueRefused(let field, let input, _):
            [.init("field", .string("\(field.id)")), .init("input", .string(input))]
        case .unknownField(let reference, let template, _):
            [.init("reference", .string(reference)), .init("template", .string(template))]
        default:
            []
        }
    }
}

extension RecordingError: ErrorDetailing {
    var detail: [JSONValue.Member] {
        switch self {
        case .batchRefused(let id, let refusals, let accepted):
            [
                .init("inspection", .string(id.lowercased)), .init("answers", .integer(refusals.count + accepted)),
                .init("refusals", .array(refusals.map(Self.refusal))),
            ]
        case .noLongerApplies(let id, let refusal):
            [.init("inspection", .string(id.lowercased)), .init("refusal", Self.refusal(refusal))]
        case .keptChanging(let id, let attempts):
            [.init("inspection", .string(id.lowercased)), .init("attempts", .integer(attempts))]
        }
    }

    /// One refusal as the JSON error line would give it: its kind, then its detail.
    static func refusal(_ error: any Error) -> JSONValue {
        .object([.init("kind", .string(ErrorKind(of: error).name))] + ErrorKind.detail(of: error))
    }
}

extension HandoverFile.Unreadable: ErrorDetailing {
    var detail: [JSONValue.Member] {
        switch self {
        case .unexpectedByte(let offset, let byte): [.init("offset", .integer(offset)), .init("byte", .integer(byte))]
        case .strict(let unreadable): [.init("reason", .string(ErrorKind(of: unreadable).name))]
        }
    }
}

extension DurableFileError: ErrorDetailing {
    var detail: [JSONValue.Member] {
        [.init("path", .string(path)), .init("step", .string(step)), .init("errno", .integer(code))]
    }
}

extension ViewCheckError: ErrorDetailing {
    var detail: [JSONValue.Member] {
        guard case .differences(_, let views) = self else { return [] }
        return [.init("views", .array(views.map(JSONValue.string)))]
    }
}

extension JQCError: ErrorDetailing {
    var detail: [JSONValue.Member] {
        guard case .outputNotWritten(let code) = self else { return [] }
        return [.init("errno", .integer(Int(code)))]
    }
}
