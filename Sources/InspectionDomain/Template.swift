import LedgerCore

/// An inspection form as the server defines it, pinned by content.
///
/// An inspection records the exact template its inspector saw: the canonical
/// CBOR of the template is written once in a `template.pinned` event and the
/// inspection refers to it by `contentHash`. A later version of the template
/// on the server, or clearing the reference cache, never changes what an old
/// inspection means.
public struct Template: Hashable, Sendable, CustomStringConvertible {
    /// The server's id, normalised (`22` and `"22"` are both `"22"`).
    public var id: String
    public var name: String
    public var version: Int
    public var fields: [TemplateField]

    /// A template as given; `validate()` checks it.
    public init(id: String, name: String, version: Int, fields: [TemplateField]) {
        self.id = id
        self.name = name
        self.version = version
        self.fields = fields
    }

    /// How messages name the template: `11 "Restroom QC"`.
    public var description: String { "\(id) \"\(name)\"" }

    /// Checks field ids are unique and every field is usable.
    public func validate() throws(DomainError) {
        var ids = Set<FieldID>()
        for field in fields {
            guard ids.insert(field.id).inserted else {
                throw .invalidTemplate(template: description, reason: "two fields have the id \(field.id)")
            }
            if let problem = field.problem() {
                throw .invalidTemplateField(template: description, field: field.fieldDescription, reason: problem)
            }
        }
    }

    // MARK: - Finding fields

    /// The field with exactly this id.
    public func field(id: FieldID) -> TemplateField? {
        fields.first { $0.id == id }
    }

    /// The field a person named, by id or by label.
    ///
    /// An id wins over a label (ids are what scripts use). A label matches
    /// ignoring case and surrounding spaces, and must be unique: two fields
    /// called "Inspector signature" are refused with both listed rather than
    /// one picked.
    public func field(matching reference: String) throws(DomainError) -> TemplateField {
        if let id = FieldID.normalizedIfWellFormed(reference), let field = field(id: id) {
            return field
        }
        let wanted = reference.trimmingWhiteSpace.lowercased()
        let matches = fields.filter { $0.label.trimmingWhiteSpace.lowercased() == wanted }
        switch matches.count {
        case 1: return matches[0]
        case 0:
            throw .unknownField(
                reference: reference, template: description,
                candidates: fields.filter { !$0.type.isDisplayOnly }.map(\.fieldDescription))
        default:
            throw .ambiguousField(
                reference: reference, template: description, candidates: matches.map(\.fieldDescription))
        }
    }

    // MARK: - Content address

    /// SHA-256 (lower-case hex) of `canonicalCBOR`'s encoding: the template's
    /// identity in the log. Equal templates always hash the same, because the
    /// encoding is deterministic and omits only keys that are absent.
    public var contentHash: String {
        SHA256Hasher().digest(canonicalCBOR.encoded()).hex
    }
}
