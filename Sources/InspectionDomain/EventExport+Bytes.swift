import FoundationEssentials
import LedgerCore

// MARK: - The exported form, written as bytes

extension EventExport {
    /// Appends the UTF-8 of `jsonLine(for:event:)` to `out`: the same bytes
    /// (a test compares the two over every kind of event), written straight
    /// into a reused buffer. `jqc --json log` writes a line per event of the
    /// whole log; building each envelope as a `JSONValue` and serializing
    /// it through `String` one Unicode scalar at a time capped it at tens of
    /// thousands of lines a second.
    public static func appendJSONLine(for record: EventRecord, event: InspectionEvent, to out: inout [UInt8]) {
        var parts = SharedParts()
        appendJSONLine(for: record, event: event, sharing: &parts, to: &out)
    }

    /// `appendJSONLine(for:event:to:)`, with the parts the lines of one
    /// listing share kept in `parts` between lines.
    public static func appendJSONLine(
        for record: EventRecord, event: InspectionEvent, sharing parts: inout SharedParts, to out: inout [UInt8]
    ) {
        appendLiteral(#"{"position":"#, to: &out)
        appendDecimal(record.position, to: &out)
        appendLiteral(#","id":""#, to: &out)
        record.id.appendLowercased(to: &out)
        appendLiteral(#"","stream":""#, to: &out)
        record.stream.appendLowercased(to: &out)
        appendLiteral(#"","stream_version":"#, to: &out)
        appendDecimal(record.streamVersion, to: &out)
        parts.appendType(of: event, to: &out)
        parts.appendActor(of: record, to: &out)
        appendLiteral(#","recorded_at":""#, to: &out)
        record.recordedAt.appendISO8601(to: &out)
        appendLiteral(#"","recorded_at_us":"#, to: &out)
        appendDecimal(record.recordedAt.microsecondsSinceEpoch, to: &out)
        appendLiteral(#","payload":"#, to: &out)
        event.appendPayloadJSON(to: &out)
        out.append(UInt8(ascii: "}"))
    }

    /// The parts of an exported line that follow each other unchanged
    /// through a listing of the log (one device, an inspector or two, a
    /// dozen types), each formatted once and copied while it stays the
    /// same: the type and its version, and the actor with the device.
    public struct SharedParts {
        private var typeName = ""
        private var schemaVersion = 0
        private var typeBytes: [UInt8] = []
        private var actor: Actor?
        private var device: UUID?
        private var actorBytes: [UInt8] = []

        public init() {}

        /// `,"type":…,"schema_version":…`
        mutating func appendType(of event: InspectionEvent, to out: inout [UInt8]) {
            let name = event.typeName
            let version = event.schemaVersion
            if typeBytes.isEmpty || name != typeName || version != schemaVersion {
                typeName = name
                schemaVersion = version
                typeBytes.removeAll(keepingCapacity: true)
                appendLiteral(#","type":"#, to: &typeBytes)
                JSONValue.appendString(name, to: &typeBytes)
                appendLiteral(#","schema_version":"#, to: &typeBytes)
                appendDecimal(Int64(version), to: &typeBytes)
            }
            out.append(contentsOf: typeBytes)
        }

        /// `,"actor":{"id":…,"name":…,"verified":…},"device":"…"`
        mutating func appendActor(of record: EventRecord, to out: inout [UInt8]) {
            if actor != record.actor || device != record.device {
                actor = record.actor
                device = record.device
                actorBytes.removeAll(keepingCapacity: true)
                appendLiteral(#","actor":{"id":"#, to: &actorBytes)
                JSONValue.appendString(record.actor.id, to: &actorBytes)
                appendLiteral(#","name":"#, to: &actorBytes)
                JSONValue.appendString(record.actor.name, to: &actorBytes)
                appendLiteral(record.actor.verified ? #","verified":true"# : #","verified":false"#, to: &actorBytes)
                appendLiteral(#"},"device":""#, to: &actorBytes)
                record.device.appendLowercased(to: &actorBytes)
                actorBytes.append(UInt8(ascii: "\""))
            }
            out.append(contentsOf: actorBytes)
        }
    }
}

// MARK: - The most frequent payloads, written as bytes

extension InspectionEvent {
    /// Appends the UTF-8 of `jsonObject.serialized()`. The payloads of a
    /// listing of the whole log (answers set and cleared, photos, issues:
    /// nearly every line) are written member by member, as their `json`
    /// builds them, without a `JSONValue` tree of strings and arrays for
    /// each; the rest through `jsonObject`. `EventExportBytesTests`
    /// compares the two for every event.
    func appendPayloadJSON(to out: inout [UInt8]) {
        switch self {
        case .fieldSet(let e): e.appendJSON(to: &out)
        case .fieldCleared(let e):
            JSONValue.appendKey(FieldCleared.Key.fieldID, first: true, to: &out)
            JSONValue.appendString(e.fieldID.rawValue, to: &out)
            out.append(UInt8(ascii: "}"))
        case .photoCaptured(let e): e.appendJSON(to: &out)
        case .issueFlagged(let e): e.appendJSON(to: &out)
        default: jsonObject.appendSerialized(to: &out)
        }
    }
}

extension FieldAnswer {
    /// Appends the UTF-8 of `json.serialized()`.
    func appendJSON(to out: inout [UInt8]) {
        JSONValue.appendKey(Key.fieldID, first: true, to: &out)
        JSONValue.appendString(fieldID.rawValue, to: &out)
        JSONValue.appendKey(Key.fieldType, to: &out)
        JSONValue.appendString(fieldType.rawValue, to: &out)
        JSONValue.appendKey(Key.value, to: &out)
        value.appendJSON(to: &out)
        out.append(UInt8(ascii: "}"))
    }
}

extension FieldValue {
    /// Appends the UTF-8 of `jsonValue.serialized()`.
    func appendJSON(to out: inout [UInt8]) {
        switch self {
        case .text(let text), .option(let text): JSONValue.appendString(text, to: &out)
        case .number(let number): out.append(contentsOf: number.text.utf8)
        case .bool(let flag): appendLiteral(flag ? "true" : "false", to: &out)
        case .rating(let value): appendDecimal(Int64(value), to: &out)
        case .passFail(let answer): JSONValue.appendString(answer.rawValue, to: &out)
        default: jsonValue.appendSerialized(to: &out)
        }
    }
}

extension PhotoCaptured {
    /// Appends the UTF-8 of `json.serialized()`.
    func appendJSON(to out: inout [UInt8]) {
        JSONValue.appendKey(Key.photoID, first: true, to: &out)
        JSONValue.appendID(photo.photoID, to: &out)
        JSONValue.appendKey(Key.sha256, to: &out)
        JSONValue.appendString(photo.sha256.hex, to: &out)
        JSONValue.appendKey(Key.size, to: &out)
        appendDecimal(Int64(photo.size), to: &out)
        JSONValue.appendKey(Key.mediaType, to: &out)
        JSONValue.appendString(photo.mediaType, to: &out)
        JSONValue.appendKey(Key.kind, to: &out)
        JSONValue.appendString(kind.rawValue, to: &out)
        JSONValue.appendKey(Key.fieldID, to: &out)
        JSONValue.appendOptional(fieldID?.rawValue, to: &out)
        JSONValue.appendKey(Key.issueID, to: &out)
        if let issueID { JSONValue.appendID(issueID, to: &out) } else { appendLiteral("null", to: &out) }
        out.append(UInt8(ascii: "}"))
    }
}

extension IssueFlagged {
    /// Appends the UTF-8 of `json.serialized()`.
    func appendJSON(to out: inout [UInt8]) {
        JSONValue.appendKey(Key.issueID, first: true, to: &out)
        JSONValue.appendID(issueID, to: &out)
        JSONValue.appendKey(Key.severity, to: &out)
        JSONValue.appendString(severity.rawValue, to: &out)
        JSONValue.appendKey(Key.description, to: &out)
        JSONValue.appendString(description, to: &out)
        JSONValue.appendKey(Key.photoID, to: &out)
        if let photoID { JSONValue.appendID(photoID, to: &out) } else { appendLiteral("null", to: &out) }
        out.append(UInt8(ascii: "}"))
    }
}

extension JSONValue {
    /// Appends `{"key":` (the first member of an object) or `,"key":`.
    /// A payload's keys are plain ASCII names, written as they are.
    static func appendKey(_ key: some PayloadKey, first: Bool = false, to out: inout [UInt8]) {
        appendLiteral(first ? #"{""# : #",""#, to: &out)
        out.append(contentsOf: key.rawValue.utf8)
        appendLiteral(#"":"#, to: &out)
    }

    /// Appends an id as `.string(id.lowercased)` serializes (hex digits
    /// and dashes: nothing to escape).
    static func appendID(_ id: UUID, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        id.appendLowercased(to: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// Appends `.optional(text)` serialized: the string, or `null`.
    static func appendOptional(_ text: String?, to out: inout [UInt8]) {
        if let text { appendString(text, to: &out) } else { appendLiteral("null", to: &out) }
    }

    /// Appends the UTF-8 of `serialized()` to `out`.
    func appendSerialized(to out: inout [UInt8]) {
        switch self {
        case .null: appendLiteral("null", to: &out)
        case .bool(let flag): appendLiteral(flag ? "true" : "false", to: &out)
        case .number(let text): out.append(contentsOf: text.utf8)
        case .string(let text): Self.appendString(text, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.appendSerialized(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, member) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                Self.appendString(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                member.value.appendSerialized(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// A JSON string as `writeString` writes it, by the same rule
    /// (`escape(for:)`): text with nothing to escape is copied as bytes.
    static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings (ids, names, types) need no escape: copied whole.
        if !mayNeedEscape(text) {
            out.append(contentsOf: text.utf8)
            out.append(UInt8(ascii: "\""))
            return
        }
        for scalar in text.unicodeScalars {
            if let escape = escape(for: scalar) {
                out.append(contentsOf: escape.utf8)
            } else {
                UTF8.encode(scalar) { out.append($0) }
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Whether any character of `text` may be escaped in JSON, decided on
    /// the bytes (a Span walks them in place, a few times faster than the
    /// UTF8View): a C0 control, quote, backslash or DEL, or the first byte
    /// of a character that may be one `escape(for:)` escapes — 0xC2 leads
    /// U+0080–U+00BF (the C1 controls), 0xD8 U+0600–U+063F (U+061C), 0xE2
    /// U+2000–U+2FFF (the bidi marks and separators). Other text, accents
    /// and most scripts included, is copied without a walk over its scalars.
    private static func mayNeedEscape(_ text: String) -> Bool {
        let bytes = text.utf8.span
        for i in bytes.indices {
            switch bytes[i] {
            case 0..<0x20, UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x7F, 0xC2, 0xD8, 0xE2: return true
            default: continue
            }
        }
        return false
    }
}
