import FoundationEssentials
import LedgerCore

// MARK: - CBOR

extension FieldValue {
    /// The value as a CBOR item: text for text, number (exact digits), date,
    /// option and pass_fail; a bool; an int rating; an array of text for a
    /// checkbox group; an array of arrays of text for a table; and for a
    /// photo the map `{photo_id, sha256, size, media_type}`.
    public var cbor: CBORValue {
        switch self {
        case .text(let text), .option(let text): .text(text)
        case .number(let number): .text(number.text)
        case .date(let date): .text(date.description)
        case .bool(let flag): .bool(flag)
        case .options(let chosen): .array(chosen.map(CBORValue.text))
        case .rating(let value): .integer(Int64(value))
        case .passFail(let answer): .text(answer.rawValue)
        case .photo(let photo):
            .textMap([
                ("photo_id", .text(photo.photoID.lowercased)), ("sha256", .text(photo.sha256.hex)),
                ("size", .integer(Int64(photo.size))), ("media_type", .text(photo.mediaType)),
            ])
        case .table(let rows): .array(rows.map { .array($0.map(CBORValue.text)) })
        }
    }

    /// Writes `cbor` without building it first (field_set is the most
    /// frequent event).
    public func write(to writer: inout CBORWriter) {
        switch self {
        case .text(let text), .option(let text): writer.write(text: text)
        case .number(let number): writer.write(text: number.text)
        case .date(let date): writer.write(text: date.description)
        case .bool(let flag): writer.write(bool: flag)
        case .options(let chosen):
            writer.writeArrayHeader(count: chosen.count)
            for option in chosen { writer.write(text: option) }
        case .rating(let value): writer.write(integer: Int64(value))
        case .passFail(let answer): writer.write(text: answer.rawValue)
        case .photo(let photo):
            // Deterministic key order: shorter keys first, then bytewise.
            writer.writeMapHeader(count: 4)
            writer.write(text: "size")
            writer.write(integer: Int64(photo.size))
            writer.write(text: "sha256")
            writer.write(text: photo.sha256.hex)
            writer.write(text: "photo_id")
            writer.write(text: photo.photoID.lowercased)
            writer.write(text: "media_type")
            writer.write(text: photo.mediaType)
        case .table(let rows):
            writer.writeArrayHeader(count: rows.count)
            for row in rows {
                writer.writeArrayHeader(count: row.count)
                for cell in row { writer.write(text: cell) }
            }
        }
    }

    /// Decodes a value recorded for a field of `field`'s type.
    ///
    /// Only the shape is checked, not the template's rules (options offered,
    /// table width): the value was validated against the pinned template when
    /// it was recorded, and the log must read back even if rules tighten.
    public init(cbor: CBORValue, for field: TemplateField) throws(DomainError) {
        try self.init(cbor: cbor, type: field.type)
    }

    /// Decodes a value recorded for a field of `type`.
    public init(cbor: CBORValue, type: FieldType) throws(DomainError) {
        var reader = PayloadReader(cbor.encoded(), type: "field value", schemaVersion: 1)
        self = try Self.read(from: &reader, type: type)
        try reader.finish()
    }

    /// Reads a value in place (see `PayloadReader`).
    static func read(from r: inout PayloadReader, type: FieldType) throws(DomainError) -> FieldValue {
        switch type {
        case .text, .email, .textarea: return .text(try r.text())
        case .radio, .select: return .option(try r.text())
        case .number:
            // Written from an `ExactDecimal`, so already canonical.
            return .number(ExactDecimal(canonical: try r.text()))
        case .date:
            let text = try r.text()
            do {
                return .date(try CalendarDate(parsing: text))
            } catch {
                throw r.malformed("the date \"\(text)\" is not a calendar date")
            }
        case .checkbox: return .bool(try r.bool())
        case .checkboxGroup: return .options(try r.texts())
        case .rating: return .rating(try r.int())
        case .passFail:
            let text = try r.text()
            guard let answer = PassFail(rawValue: text) else {
                throw r.malformed("\"\(text)\" is not pass, fail or \"\"")
            }
            return .passFail(answer)
        case .table:
            let count = try r.arrayCount()
            var rows: [[String]] = []
            rows.reserveCapacity(count)
            for _ in 0..<count { rows.append(try r.texts()) }
            return .table(rows)
        case .signature, .image: return .photo(try PhotoReference.read(from: &r))
        case .section, .label: throw r.malformed("a \(type) field never holds a value")
        }
    }
}

extension PhotoReference {
    /// Reads the map `{photo_id, sha256, size, media_type}`.
    static func read(from r: inout PayloadReader) throws(DomainError) -> PhotoReference {
        var id: UUID?
        var digest: Digest256?
        var size: Int?
        var mediaType: String?
        for _ in 0..<(try r.mapCount()) {
            switch try r.text() {
            case "photo_id": id = try r.uuid("photo_id")
            case "sha256": digest = try r.digest("sha256")
            case "size": size = try r.int()
            case "media_type": mediaType = try r.text()
            default: try r.skip()
            }
        }
        return PhotoReference(
            photoID: try r.required(id, "photo_id"), sha256: try r.required(digest, "sha256"),
            size: try r.required(size, "size"), mediaType: try r.required(mediaType, "media_type"))
    }
}
