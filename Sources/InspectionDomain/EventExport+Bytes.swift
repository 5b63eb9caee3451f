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

    /// A JSON string as `writeString` writes it: quote, backslash, `\n`,
    /// `\r`, `\t` and other C0 controls escaped, everything else as is (a
    /// byte of a multi-byte UTF-8 sequence is never below 0x80, so copying
    /// bytes copies the same scalars).
    static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings (ids, names, types) need no escape: copied whole.
        if !needsEscape(text) {
            out.append(contentsOf: text.utf8)
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
            case 0x0A: out.append(contentsOf: #"\n"#.utf8)
            case 0x0D: out.append(contentsOf: #"\r"#.utf8)
            case 0x09: out.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20:
                out.append(contentsOf: #"\u00"#.utf8)
                out.append(hexDigit(byte >> 4))
                out.append(hexDigit(byte & 0x0F))
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Whether any byte of `text` is escaped in JSON (a Span walks the
    /// bytes in place, a few times faster than the UTF8View).
    private static func needsEscape(_ text: String) -> Bool {
        let bytes = text.utf8.span
        for i in bytes.indices {
            let byte = bytes[i]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return true }
        }
        return false
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }
}
