import FoundationEssentials
import LedgerCore

/// Reads payloads stored in older schema versions as the current version.
///
/// The log is never rewritten, so every version ever written stays readable:
/// an upcaster turns old payload bytes into current payload bytes (possibly
/// of another type), and the ordinary decoder takes it from there.
///
/// ## `inspection.field_set` version 1
/// Before values were typed, the payload was `{field: uint, value: text}`:
/// the server's integer field id, and the answer as the text the inspector
/// typed (`"4"`, `"PASS"`, `"yes"`), interpreted only when shown. Reading it
/// as version 2 (`{field_id, field_type, value}`) needs the field's type,
/// which only the inspection's pinned template knows, so the caller passes
/// the template (`InspectionState.template`: every field_set follows its
/// stream's start). The text is parsed as today's command line would parse
/// it; an empty text meant "unanswered" and reads as
/// `inspection.field_cleared`.
///
/// ## `inspection.received` version 1
/// Each carried record's bytes were embedded in the payload; version 2 holds
/// its leaf hash instead, the bytes beside it. Version 1 is read in place
/// (`readsInPlace`): its records become references and their bytes the
/// reception's `carried` closure.
///
/// ## `inspection.handed_over` version 1
/// `{mode, to}`, before a handover could be bound to a device: read in place
/// as version 2 with no `to_device` (unbound).
public enum EventUpcaster {
    /// Decodes a payload of any version: old versions are upcast first.
    public static func decode(
        type: String, schemaVersion: Int, payload: [UInt8], template: Template?
    ) throws(DomainError) -> InspectionEvent {
        let current = try upcast(type: type, schemaVersion: schemaVersion, payload: payload, template: template)
        return try InspectionEvent.decode(
            type: current.type, schemaVersion: current.schemaVersion, payload: current.payload)
    }

    /// Decodes a stored record of any version.
    public static func decode(_ record: EventRecord, template: Template?) throws(DomainError) -> InspectionEvent {
        try decode(type: record.type, schemaVersion: record.schemaVersion, payload: record.payload, template: template)
    }

    /// Whether a stored version must be upcast before it can be decoded.
    public static func needsUpcast(type: String, schemaVersion: Int) -> Bool {
        guard let known = InspectionEventType.named(type) else { return false }
        return schemaVersion < known.schemaVersion && !readsInPlace(known, schemaVersion)
    }

    /// An older version the decoder reads as it stands, with no bytes
    /// rewritten: `inspection.received` version 1, whose embedded records
    /// become the references of version 2 and the bytes they resolve to
    /// (`InspectionReceived.carried`), so nothing of it is lost; and
    /// version 2, every record of the sender's stream with `continues` null.
    public static func readsInPlace(_ type: InspectionEventType, _ schemaVersion: Int) -> Bool {
        (type == .received && schemaVersion < 3) || (type == .handedOver && schemaVersion == 1)
    }

    /// The payload in the current version of its type; current versions and
    /// unknown types are returned unchanged.
    public static func upcast(
        type: String, schemaVersion: Int, payload: [UInt8], template: Template?
    ) throws(DomainError) -> StoredPayload {
        var stored = StoredPayload(type: type, schemaVersion: schemaVersion, payload: payload)
        // Each step lifts one version, so a chain v1 → v2 → v3 needs only
        // one new step when v3 arrives.
        while needsUpcast(type: stored.type, schemaVersion: stored.schemaVersion) {
            switch (stored.type, stored.schemaVersion) {
            case (InspectionEventType.fieldSet.rawValue, 1):
                stored = try fieldSetV1(stored.payload, template: template)
            default:
                throw .upcastFailed(
                    type: stored.type, schemaVersion: stored.schemaVersion,
                    reason: "no upcaster from this version is known")
            }
        }
        return stored
    }

    /// `inspection.field_set` v1 `{field: uint, value: text}` → v2, or →
    /// `inspection.field_cleared` v1 for an empty value.
    static func fieldSetV1(_ payload: [UInt8], template: Template?) throws(DomainError) -> StoredPayload {
        let type = InspectionEventType.fieldSet.rawValue
        func fail(_ reason: String) -> DomainError { .upcastFailed(type: type, schemaVersion: 1, reason: reason) }
        var r = PayloadReader(payload, type: type, schemaVersion: 1)
        var number: Int64?
        var text: String?
        for _ in 0..<(try r.mapCount()) {
            switch try r.text() {
            case "field": number = try r.int64()
            case "value": text = try r.text()
            default: try r.skip()
            }
        }
        try r.finish()
        let fieldNumber = try r.required(number, "field")
        let typed = try r.required(text, "value")
        guard let template else {
            throw fail("it needs the inspection's template to type the value, and none was given")
        }
        guard fieldNumber >= 0, let field = template.field(id: FieldID(rawValue: String(fieldNumber))) else {
            throw fail("field \(fieldNumber) is not in template \(template)")
        }
        if typed.isEmpty {
            let cleared = InspectionEvent.fieldCleared(FieldCleared(fieldID: field.id))
            return StoredPayload(
                type: cleared.typeName, schemaVersion: cleared.schemaVersion, payload: cleared.payloadCBOR())
        }
        let value: FieldValue
        do {
            value = try FieldValue.parse(typed, for: field)
        } catch {
            throw fail("\(error)")
        }
        let set = InspectionEvent.fieldSet(FieldAnswer(field: field, value: value))
        return StoredPayload(type: set.typeName, schemaVersion: set.schemaVersion, payload: set.payloadCBOR())
    }
}
