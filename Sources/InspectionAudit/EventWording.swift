import FoundationEssentials
import InspectionDomain
import LedgerCore

/// What an event did, in words an auditor reads without the schemas:
/// `set Floors (2) = 4`, `flagged issue 1a2b3c4d… high: Leaking tap`.
///
/// Ids are shortened to their first eight hex digits (enough to tell apart
/// the events of one inspection; the JSON forms carry them whole). Text
/// answers are quoted, with line breaks escaped, so a trailing space or a
/// second line is visible on one line of output. Every other text a person
/// or a server wrote (names, ids from the log, paths, messages) goes through
/// `TerminalText.singleLine`, so no recorded text can move the cursor, hide
/// what follows or forge a line of an auditor's output.
public enum EventWording {
    /// One line for `event`, recorded in `stream`.
    ///
    /// - Parameters:
    ///   - template: the inspection's pinned template, to name fields by label.
    ///   - before: the inspection as it stood before the event; when given,
    ///     field changes read `old → new` instead of `= new`.
    ///   - templateHash: `template.contentHash` when the caller has already
    ///     computed it (hashing a template is costly; a listing of the log
    ///     names thousands of starts of a few templates).
    ///   - names: the field names of `template` as worded before (a
    ///     listing of the log names the same few fields a million times).
    public static func describe(
        _ event: InspectionEvent, stream: UUID, template: Template?, before: InspectionState? = nil,
        templateHash: String? = nil, names: FieldNames? = nil
    ) -> String {
        switch event {
        case .started(let e):
            return started(e, template: template, templateHash: templateHash)
        case .templatePinned, .fieldSet, .fieldCleared, .photoCaptured, .issueFlagged, .submitted, .discarded:
            return inspecting(event, template: template, before: before, names: names)
        case .photoUploaded, .inspectionAccepted, .issueAccepted, .syncAttemptFailed, .syncGaveUp, .syncRetryRequested,
            .syncDismissed, .sendAdopted:
            return syncOutcome(event, stream: stream)
        case .handedOver, .received:
            return handover(event)
        case .unrecognized(let stored):
            return unrecognized(stored)
        }
    }

    /// `inspection.started`: the template (named when it is the one pinned), the place, the parent.
    static func started(_ e: InspectionStarted, template: Template?, templateHash: String?) -> String {
        var text = "started the inspection from template \(shown(e.templateID))"
        if let template, (templateHash ?? template.contentHash) == e.templateHash {
            text += " \"\(shown(template.name))\" version \(template.version)"
        }
        text += " at \(shown(e.facilityName)) (\(shown(e.facilityID)))"
        if let areaID = e.areaID { text += ", \(shown(e.areaName ?? "area")) (\(shown(areaID)))" }
        if let parent = e.parentInspectionID {
            text += "; re-inspection of \(short(parent))"
            if !e.prefilled.isEmpty {
                text += ", \(e.prefilled.count) answer\(e.prefilled.count == 1 ? "" : "s") copied from it"
            }
        } else if let server = e.parentServerID {
            text += "; re-inspection of the server's record \(shown(server))"
            if !e.prefilled.isEmpty {
                text += ", \(e.prefilled.count) answer\(e.prefilled.count == 1 ? "" : "s") copied from its form"
            }
        }
        return text
    }

    /// The events of filling in and closing an inspection.
    static func inspecting(
        _ event: InspectionEvent, template: Template?, before: InspectionState?, names: FieldNames? = nil
    ) -> String {
        func fieldName(_ id: FieldID, template: Template?) -> String {
            names?.name(id) ?? EventWording.fieldName(id, template: template)
        }
        switch event {
        case .templatePinned(let e):
            return
                "pinned template \(shown(e.template.id)) \"\(shown(e.template.name))\" version \(e.template.version) "
                + "(content sha256 \(shortHash(e.templateHash)), \(e.template.fields.count) fields)"
        case .fieldSet(let e):
            let name = fieldName(e.fieldID, template: template)
            guard let before else { return "set \(name) = \(valueText(e.value))" }
            let old = before.values[e.fieldID]
            if old == e.value { return "set \(name) = \(valueText(e.value)) (unchanged)" }
            return "set \(name): \(valueText(old)) → \(valueText(e.value))"
        case .fieldCleared(let e):
            let name = fieldName(e.fieldID, template: template)
            guard let before else { return "cleared \(name)" }
            guard let old = before.values[e.fieldID] else { return "cleared \(name) (it was unanswered)" }
            return "cleared \(name): \(valueText(old)) → \(valueText(nil))"
        case .photoCaptured(let e):
            var text =
                "captured \(e.kind.rawValue) \(short(e.photo.photoID)) (\(shown(e.photo.mediaType)), "
                + "\(e.photo.size) bytes, sha256 \(shortHash(e.photo.sha256.hex)))"
            if let field = e.fieldID { text += " for \(fieldName(field, template: template))" }
            if let issue = e.issueID { text += " for issue \(short(issue))" }
            return text
        case .issueFlagged(let e):
            var text = "flagged issue \(short(e.issueID)) \(e.severity.rawValue): \(quotedIfNeeded(e.description))"
            if let photo = e.photoID { text += " (photo \(short(photo)))" }
            return text
        case .submitted(let e):
            let score =
                e.score.map { "score \(FixedPoint.text($0, places: 2))" } ?? "no score (nothing scoreable answered)"
            return "submitted the inspection: \(score), follow-up \(e.followUpRequired ? "required" : "not required")"
        case .discarded(let e):
            return "discarded the draft" + (e.reason.map { ": \(quotedIfNeeded($0))" } ?? " (no reason given)")
        default:
            preconditionFailure("\(event.typeName) is not an event of filling in an inspection")
        }
    }

    /// What the server and the sync worker said of the inspection's items.
    static func syncOutcome(_ event: InspectionEvent, stream: UUID) -> String {
        switch event {
        case .photoUploaded(let e):
            return "uploaded photo \(short(e.photoID)) → \(shown(e.serverPath))"
        case .inspectionAccepted(let e):
            return "the server accepted the inspection as \(shown(e.serverID))"
        case .issueAccepted(let e):
            let again =
                e.sentAgainAfterLostAnswer
                ? " (sent again after its answer was lost; the server may hold it twice)" : ""
            return "the server accepted issue \(short(e.issueID)) as \(shown(e.serverID))\(again)"
        case .syncAttemptFailed(let e):
            var text = "sync attempt \(e.attempt) for \(itemName(e.item, stream: stream)) failed"
            if let status = e.httpStatus { text += " (HTTP \(status))" }
            text += ": \(quotedIfNeeded(e.error))"
            if e.willRetry {
                text += e.nextAttemptAt.map { ", retry at \($0.iso8601)" } ?? ", will retry"
            } else {
                text += ", no retry"
            }
            return text
        case .syncGaveUp(let e):
            return "sync gave up on \(itemName(e.item, stream: stream)): \(quotedIfNeeded(e.error))"
        case .syncRetryRequested(let e):
            return "retry requested for \(itemName(e.item, stream: stream))"
        case .syncDismissed(let e):
            return "dismissed \(itemName(e.item, stream: stream)), failed for good, from the outbox: "
                + quotedIfNeeded(e.reason)
        case .sendAdopted(let e):
            // adopt (#30 item 3): the recording device becomes the sender.
            return "adopted the sending of the submission recorded on device \(e.submittedOnDevice.lowercased) "
                + "(submit record \(short(e.submitEvent))): this device sends it, looked up on the server first"
        default:
            preconditionFailure("\(event.typeName) is not a sync outcome")
        }
    }

    /// Handing an inspection over, or sharing a copy, and receiving one.
    static func handover(_ event: InspectionEvent) -> String {
        switch event {
        case .handedOver(let e):
            let to = e.to.map { " to \(shown($0))" } ?? ""
            return e.mode == .handover
                ? "handed over\(to): this device records nothing more on it"
                : "shared a copy\(to), keeping the right to record"
        case .received(let e):
            return "received from device \(short(e.fromDevice)) (\(e.mode == .handover ? "handed over" : "shared"), "
                + "\(e.records.count) records proven against its signed checkpoint"
                + (e.continues.map { ", continuing its version \($0.streamVersion) held here" } ?? "") + ")"
        default:
            preconditionFailure("\(event.typeName) is not a handover event")
        }
    }

    /// An event this jqc reads only as stored: a device stream's, or one it does not know.
    static func unrecognized(_ stored: StoredPayload) -> String {
        if let device = DeviceStreamEvent(stored) { return describe(device) }
        if DeviceStreamEventType.named(stored.type) != nil {
            return "a \(stored.type) event of version \(stored.schemaVersion) whose payload this jqc cannot read "
                + "(\(stored.payload.count) payload bytes)"
        }
        return "an event of a type this jqc does not know: \(shown(stored.type)) version \(stored.schemaVersion) "
            + "(\(stored.payload.count) payload bytes)"
    }

    /// One line for an event of a device's own stream.
    public static func describe(_ event: DeviceStreamEvent) -> String {
        switch event {
        case .keyPublished(let e):
            let key = "\(shown(e.algorithm)) key \(shown(e.keyID))"
            if e.endorsement != nil {
                return "rotated the device's signing key to \(key), endorsed by the previous key"
            }
            if e.previousKeyLost {
                return "rotated the device's signing key to \(key); the previous key was declared lost"
            }
            return "published the device's signing key: \(key) (\(shown(e.key)))"
        case .checkpointWitnessed(let e):
            let server = shown(e.server)
            let why = e.message.map { ": \(quotedIfNeeded($0))" } ?? ""
            switch e.outcome {
            case .acknowledged:
                let size = e.size.map { " of \($0) record\($0 == 1 ? "" : "s")" } ?? ""
                return "the witness at \(server) acknowledged the device's checkpoint\(size)"
            case .refused:
                return "the witness at \(server) refused the device's checkpoint (it does not extend the one the "
                    + "witness holds)\(why)"
            case .unsupported:
                return "the server \(server) offers no witness, so the history was not witnessed\(why)"
            case .wrongAnswer:
                return "the witness at \(server) answered with another checkpoint than the one sent\(why)"
            case .unrecognized(let outcome):
                return "the witness at \(server) answered \(shown(outcome))\(why)"
            }
        case .checkpointCosigned(let e):
            return "the witness \(shown(e.witness)) (key \(shown(e.keyID))) cosigned the device's checkpoint of "
                + "\(e.size) record\(e.size == 1 ? "" : "s") (root \(shown(e.root))) at "
                + "\(Timestamp(microsecondsSinceEpoch: Int64(clamping: e.timestamp) &* 1_000_000).iso8601), its "
                + "cosignature verified against its configured key"
        case .keyPinned(let e):
            return "pinned the key \(shown(e.keyID)) of device \(short(e.device)): its later files must be signed by "
                + "it or carry a rotation it endorsed"
        case .forkSeen(let e):
            return "saw two histories of device \(short(e.device)): a checkpoint of \(e.first.size) records with root "
                + "\(shown(e.first.root)) and one of \(e.second.size) records with root \(shown(e.second.root)), both "
                + "signed by its key (FORKED)"
        }
    }

    // MARK: - Who acted

    /// A device as a claim names it: `jqc/` and its id's first eight hex
    /// digits (`jqc/ab12cd34`), the start of its key's name.
    public static func deviceName(_ device: UUID) -> String {
        "jqc/" + device.lowercased.prefix(8)
    }

    /// Who recorded an event, as this ledger can vouch for it. Only this
    /// device's own records name an actor this ledger checked (its own
    /// login session, or `--as` marked unverified): another device's actor
    /// is that device's word, signed with its key but never checked against
    /// a login here, so it reads as a claim
    /// (`Supervisor (as recorded by device jqc/ab12cd34, not verified here)`).
    ///
    /// - Parameters:
    ///   - device: the device whose log holds the record (nil: unknown,
    ///     worded as this device's).
    ///   - own: this ledger's device id (nil: unknown, likewise).
    ///   - markingUnverified: whether an actor named with `--as` says so
    ///     (the audit does, `jqc show` does not).
    public static func actor(
        _ actor: Actor, recordedBy device: UUID?, here own: UUID?, markingUnverified: Bool
    ) -> String {
        guard let device, let own, device != own else {
            return markingUnverified && !actor.verified ? "\(shown(actor.name)) (unverified)" : shown(actor.name)
        }
        return claimed(actor, by: device, markingUnverified: markingUnverified)
    }

    /// Another device's actor, as that device's claim.
    public static func claimed(_ actor: Actor, by device: UUID, markingUnverified: Bool) -> String {
        let name = shown(actor.name)
        if markingUnverified && !actor.verified {
            return "\(name) (unverified, as recorded by device \(deviceName(device)))"
        }
        return "\(name) (as recorded by device \(deviceName(device)), not verified here)"
    }

    /// Whether the actor of a record of `device` is one this ledger checked:
    /// a verified actor of its own device's records only.
    public static func actorVerifiedHere(_ actor: Actor, recordedBy device: UUID?, here own: UUID?) -> Bool {
        actor.verified && (device == nil || own == nil || device == own)
    }

    // MARK: - Parts

    /// An id shortened for reading: its first eight hex digits and `…`.
    public static func short(_ id: UUID) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(11)
        id.appendShortLowercased(to: &bytes)
        bytes.append(contentsOf: "…".utf8)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A SHA-256 shortened for reading: its first twelve hex digits and `…`.
    public static func shortHash(_ hex: String) -> String { String(hex.prefix(12)) + "…" }

    /// `fieldName(_:template:)` of one template, each field worded once.
    /// A class: the listing that keeps it shares one for the streams of
    /// that template.
    public final class FieldNames {
        public let template: Template
        private var names: [FieldID: String] = [:]
        /// The same names as UTF-8, for lines written as bytes.
        private var encoded: [FieldID: [UInt8]] = [:]

        public init(_ template: Template) { self.template = template }

        /// `fieldName(id, template: template)`.
        public func name(_ id: FieldID) -> String {
            if let known = names[id] { return known }
            let name = EventWording.fieldName(id, template: template)
            names[id] = name
            return name
        }

        /// Appends the UTF-8 of `name(id)`.
        public func appendName(_ id: FieldID, to out: inout [UInt8]) {
            if let known = encoded[id] {
                out.append(contentsOf: known)
                return
            }
            let name = Array(name(id).utf8)
            encoded[id] = name
            out.append(contentsOf: name)
        }
    }

    /// A field as `Label (id)`, or `field id` when the template is unknown.
    public static func fieldName(_ id: FieldID, template: Template?) -> String {
        guard let field = template?.field(id: id) else { return "field \(shown(id.rawValue))" }
        return "\(shown(field.label)) (\(shown(id.rawValue)))"
    }

    /// A value as one line: text quoted, photos by id and hash, nothing as
    /// `(unanswered)`.
    public static func valueText(_ value: FieldValue?) -> String {
        switch value {
        case nil: "(unanswered)"
        case .text(let text): quoted(text)
        case .photo(let photo): "photo \(short(photo.photoID)) (sha256 \(shortHash(photo.sha256.hex)))"
        case .passFail(let answer) where answer == .unanswered: "\"\" (unanswered)"
        case .rating(let rating) where rating == 0: "— (unanswered)"
        case .some(let value): escaped(value.displayText)
        }
    }

    /// A sync item as a reader names it: `the inspection`, `photo 1a2b…`.
    static func itemName(_ item: SyncItem, stream: UUID) -> String {
        item.kind == .inspection && item.id == stream ? "the inspection" : "\(item.kind.rawValue) \(short(item.id))"
    }

    /// Text in double quotes, with quotes, backslashes and control
    /// characters escaped as in JSON.
    public static func quoted(_ text: String) -> String {
        "\"" + escaped(text, quotes: true) + "\""
    }

    /// Free text (a description, an error) as is, unless it holds line
    /// breaks or other control characters, which would break the one-line
    /// form: then quoted.
    static func quotedIfNeeded(_ text: String) -> String {
        TerminalText.singleLine(text) == text ? text : quoted(text)
    }

    /// A name or other text a person or a server wrote, for one line.
    public static func shown(_ text: String) -> String { TerminalText.singleLine(text) }

    /// JSON-like escapes for C0 controls; C1 controls and bidi overrides
    /// (which JSON leaves alone) as `TerminalText` shows them.
    static func escaped(_ text: String, quotes: Bool = false) -> String {
        // Most answers are plain ASCII with nothing to escape: kept as they are.
        if TerminalText.isPrintableASCII(text, allowingLineBreaks: false),
            !quotes || !text.utf8.contains(where: { $0 == 0x22 || $0 == 0x5C })
        {
            return text
        }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"" where quotes: out += "\\\""
            case "\\" where quotes: out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out +=
                    "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return TerminalText.safe(out)
    }
}
