import Foundation
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
        out.append(contentsOf: #"{"position":"#.utf8)
        out.append(contentsOf: String(record.position).utf8)
        out.append(contentsOf: #","id":""#.utf8)
        record.id.appendLowercased(to: &out)
        out.append(contentsOf: #"","stream":""#.utf8)
        record.stream.appendLowercased(to: &out)
        out.append(contentsOf: #"","stream_version":"#.utf8)
        out.append(contentsOf: String(record.streamVersion).utf8)
        out.append(contentsOf: #","type":"#.utf8)
        JSONValue.appendString(event.typeName, to: &out)
        out.append(contentsOf: #","schema_version":"#.utf8)
        out.append(contentsOf: String(event.schemaVersion).utf8)
        out.append(contentsOf: #","actor":{"id":"#.utf8)
        JSONValue.appendString(record.actor.id, to: &out)
        out.append(contentsOf: #","name":"#.utf8)
        JSONValue.appendString(record.actor.name, to: &out)
        out.append(contentsOf: (record.actor.verified ? #","verified":true"# : #","verified":false"#).utf8)
        out.append(contentsOf: #"},"device":""#.utf8)
        record.device.appendLowercased(to: &out)
        out.append(contentsOf: #"","recorded_at":""#.utf8)
        record.recordedAt.appendISO8601(to: &out)
        out.append(contentsOf: #"","recorded_at_us":"#.utf8)
        out.append(contentsOf: String(record.recordedAt.microsecondsSinceEpoch).utf8)
        out.append(contentsOf: #","payload":"#.utf8)
        event.jsonObject.appendSerialized(to: &out)
        out.append(UInt8(ascii: "}"))
    }
}

extension JSONValue {
    /// Appends the UTF-8 of `serialized()` to `out`.
    func appendSerialized(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
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
