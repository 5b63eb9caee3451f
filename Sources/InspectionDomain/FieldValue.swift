import FoundationEssentials
import LedgerCore

/// The answer held by one form field, typed by the field it belongs to.
///
/// | field type | case |
/// |---|---|
/// | text, email, textarea | `text` |
/// | number | `number` (exact decimal text) |
/// | date | `date` |
/// | checkbox | `bool` |
/// | checkbox_group | `options` (a set, in the template's option order) |
/// | radio, select | `option` (in the template's spelling) |
/// | rating | `rating` (0–5; 0 means unanswered) |
/// | pass_fail | `passFail` |
/// | signature, image | `photo` |
/// | table | `table` (rows of one cell per column) |
///
/// A value gets into an event only through `validated(for:)` (directly, or
/// through `parse(_:for:)` and `init(json:for:)`), so every recorded value
/// fits its field when it was recorded.
public enum FieldValue: Hashable, Sendable {
    case text(String)
    case number(ExactDecimal)
    case date(CalendarDate)
    case bool(Bool)
    case options([String])
    case option(String)
    case rating(Int)
    case passFail(PassFail)
    indirect case photo(PhotoReference)
    case table([[String]])

    /// The ratings a field accepts; 0 means unanswered.
    public static let ratings = 0...5

    /// Whether the value counts as "not filled in" for a required field: an
    /// empty (or blank) text, no option chosen, rating 0, pass_fail "", a
    /// table without rows. A checkbox that was set, even to false, is answered.
    public var isEmpty: Bool {
        switch self {
        // Nothing but white space, as `trimmingWhiteSpace` reads it (no copy made).
        case .text(let text), .option(let text): text.unicodeScalars.allSatisfy(\.properties.isWhitespace)
        case .options(let chosen): chosen.isEmpty
        case .rating(let value): value == 0
        case .passFail(let answer): answer == .unanswered
        case .table(let rows): rows.isEmpty
        case .number, .date, .bool, .photo: false
        }
    }

    /// Whether this case is the one `type` holds.
    public func isKind(of type: FieldType) -> Bool {
        switch (self, type) {
        case (.text, .text), (.text, .email), (.text, .textarea), (.number, .number), (.date, .date),
            (.bool, .checkbox), (.options, .checkboxGroup), (.option, .radio), (.option, .select),
            (.rating, .rating), (.passFail, .passFail), (.photo, .signature), (.photo, .image),
            (.table, .table):
            true
        default: false
        }
    }

    /// The value as a person would type it back, for messages.
    public var displayText: String {
        switch self {
        case .text(let text), .option(let text): text
        case .number(let number): number.text
        case .date(let date): date.description
        case .bool(let flag): flag ? "true" : "false"
        case .options(let chosen): chosen.joined(separator: ", ")
        case .rating(let value): String(value)
        case .passFail(let answer): answer.rawValue
        case .photo(let photo): "photo \(photo.photoID.lowercased)"
        case .table(let rows): rows.map { $0.joined(separator: ",") }.joined(separator: ";")
        }
    }

    /// The value as a form shows it: `displayText`, except that an
    /// unanswered rating (0) is "—", as an unanswered field is.
    public var shownText: String {
        if case .rating(0) = self { return "—" }
        return displayText
    }

    // MARK: - Validation

    /// The value checked against `field` and put in its canonical form: an
    /// option in the template's spelling, a checkbox group in option order.
    public func validated(for field: TemplateField) throws(DomainError) -> FieldValue {
        try validated(for: field, input: displayText)
    }

    func validated(for field: TemplateField, input: String) throws(DomainError) -> FieldValue {
        let description = field.fieldDescription
        func refuse(_ reason: String) -> DomainError {
            .valueRefused(field: description, input: input, reason: reason)
        }
        guard !field.type.isDisplayOnly else { throw .displayOnlyField(description) }
        guard isKind(of: field.type) else { throw refuse(Self.expectation(for: field)) }
        switch self {
        case .text(let text):
            guard field.type == .email else { return self }
            let address = text.trimmingWhiteSpace
            guard EmailAddress.isPlausible(address) else {
                throw refuse(
                    "an email address has one @, a name before it and a domain with a dot after it, and no spaces (name@example.com)."
                )
            }
            return .text(address)
        case .option(let chosen):
            guard !chosen.trimmingWhiteSpace.isEmpty else {
                throw refuse(
                    "choose one of \(Self.quoted(field.options ?? [])); to leave it unanswered, clear the field.")
            }
            return .option(try Self.offered(chosen, by: field, refuse: refuse))
        case .options(let chosen):
            var picked = Set<String>()
            for item in chosen {
                let option = try Self.offered(item, by: field, refuse: refuse)
                guard picked.insert(option).inserted else {
                    throw refuse("\"\(option)\" is chosen twice; each option is either chosen or not.")
                }
            }
            return .options((field.options ?? []).filter(picked.contains))
        case .rating(let value):
            guard Self.ratings.contains(value) else {
                throw refuse("a rating is a whole number from 0 to 5 (0 means unanswered).")
            }
            return self
        case .table(let rows):
            let columns = field.columns ?? []
            for (index, row) in rows.enumerated() where row.count != columns.count {
                throw refuse(
                    "row \(index + 1) has \(row.count) cells, but the table has \(columns.count) columns (\(Self.quoted(columns)))."
                )
            }
            return self
        case .photo(let photo):
            try photo.validate()
            return self
        case .number, .date, .bool, .passFail:
            // Their types admit only valid values.
            return self
        }
    }

    /// The option of `field` that `input` names, ignoring case.
    static func offered(
        _ input: String, by field: TemplateField, refuse: (String) -> DomainError
    ) throws(DomainError) -> String {
        let options = field.options ?? []
        let wanted = input.trimmingWhiteSpace.lowercased()
        guard let match = options.first(where: { $0.lowercased() == wanted }) else {
            throw refuse("\"\(input.trimmingWhiteSpace)\" is not offered; choose one of \(quoted(options)).")
        }
        return match
    }

    static func quoted(_ items: [String]) -> String {
        items.map { "\"\($0)\"" }.joined(separator: ", ")
    }

    /// What a field of this type holds, for "refuses" messages and prompts.
    public static func expectation(for field: TemplateField) -> String {
        switch field.type {
        case .text, .textarea: "a \(field.type) field holds text."
        case .email: "an email field holds an address such as name@example.com."
        case .number: "a number field holds a decimal number such as 12 or -3.75."
        case .date: "a date field holds a date written YYYY-MM-DD."
        case .checkbox: "a checkbox holds true or false (yes/no, 1/0)."
        case .checkboxGroup: "a checkbox group holds a list of its options: \(quoted(field.options ?? []))."
        case .radio, .select: "a \(field.type) field holds one of its options: \(quoted(field.options ?? []))."
        case .rating: "a rating is a whole number from 0 to 5 (0 means unanswered)."
        case .passFail: "a pass_fail field holds pass, fail or \"\" (unanswered)."
        case .signature: "a signature field holds a captured image of the signature; use 'jqc sign'."
        case .image: "an image field holds a captured photo; use 'jqc photo'."
        case .table: "a table holds rows of \((field.columns ?? []).count) cells (\(quoted(field.columns ?? [])))."
        case .section, .label: "section and label fields hold nothing."
        }
    }
}

/// A deliberately simple check of an email address, with no regular
/// expression: the only way to know an address works is to send mail to it,
/// so this catches typing slips, not every RFC 5322 corner.
public enum EmailAddress {
    /// One `@`; a non-empty name before it; after it a domain of non-empty
    /// labels with at least one dot; no spaces or control characters.
    public static func isPlausible(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty else { return false }
        guard
            !text.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F })
        else { return false }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2 && labels.allSatisfy { !$0.isEmpty }
    }
}
