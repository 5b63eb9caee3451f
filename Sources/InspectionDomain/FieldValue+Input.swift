// MARK: - From text a person typed

extension FieldValue {
    /// The words a checkbox accepts, ignoring case.
    static let trueWords: Set<String> = ["true", "yes", "y", "1", "on", "checked"]
    static let falseWords: Set<String> = ["false", "no", "n", "0", "off", "unchecked"]

    /// Parses what a person typed on the command line for `field`.
    ///
    /// - checkbox: true/false, yes/no, 1/0 (also y/n, on/off).
    /// - checkbox_group: options separated by commas, or a JSON array of them
    ///   (for options that contain a comma); an empty text chooses none.
    /// - radio, select, pass_fail: matched ignoring case.
    /// - table: rows separated by `;` and cells by `,`, or a JSON array of
    ///   arrays; an empty text is a table without rows.
    /// - signature, image: refused; a file is attached with `jqc photo`.
    public static func parse(_ text: String, for field: TemplateField) throws(DomainError) -> FieldValue {
        let description = field.fieldDescription
        func refuse(_ reason: String) -> DomainError {
            .valueRefused(field: description, input: text, reason: reason)
        }
        let trimmed = text.trimmingWhiteSpace
        let value: FieldValue
        switch field.type {
        case .section, .label: throw .displayOnlyField(description)
        case .signature, .image: throw .photoFieldNeedsCapture(description)
        case .text, .textarea, .email:
            // Text is kept exactly as typed; only an email address is trimmed.
            value = .text(text)
        case .number:
            do {
                value = .number(try ExactDecimal(parsing: text))
            } catch {
                throw refuse(error.reason + ".")
            }
        case .date:
            do {
                value = .date(try CalendarDate(parsing: text))
            } catch {
                throw refuse(error.reason + ".")
            }
        case .checkbox:
            let word = trimmed.lowercased()
            if trueWords.contains(word) {
                value = .bool(true)
            } else if falseWords.contains(word) {
                value = .bool(false)
            } else {
                throw refuse("a checkbox is true or false (yes/no, 1/0 also work).")
            }
        case .checkboxGroup:
            value = .options(try optionList(trimmed, for: field, refuse: refuse))
        case .radio, .select:
            value = .option(trimmed)
        case .rating:
            guard let number = Int(trimmed), ratings.contains(number) else {
                throw refuse("a rating is a whole number from 0 to 5 (0 means unanswered).")
            }
            value = .rating(number)
        case .passFail:
            guard let answer = PassFail(rawValue: trimmed.lowercased()) else {
                throw refuse("a pass_fail field is pass or fail (or \"\" for unanswered).")
            }
            value = .passFail(answer)
        case .table:
            value = .table(try tableRows(trimmed, for: field, refuse: refuse))
        }
        return try value.validated(for: field, input: text)
    }

    static func optionList(
        _ text: String, for field: TemplateField, refuse: (String) -> DomainError
    ) throws(DomainError) -> [String] {
        if text.isEmpty { return [] }
        if text.hasPrefix("[") {
            let json = try jsonForInput(text, refuse: refuse)
            return try strings(of: json, refuse: refuse, what: "a checkbox group")
        }
        // An option that itself contains a comma can be typed whole.
        let lowered = text.lowercased()
        if let whole = field.options?.first(where: { $0.lowercased() == lowered }) { return [whole] }
        return text.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingWhiteSpace }
    }

    static func tableRows(
        _ text: String, for field: TemplateField, refuse: (String) -> DomainError
    ) throws(DomainError) -> [[String]] {
        if text.isEmpty { return [] }
        if text.hasPrefix("[") {
            return try rows(of: try jsonForInput(text, refuse: refuse), refuse: refuse)
        }
        return text.split(separator: ";", omittingEmptySubsequences: false).map { row in
            row.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingWhiteSpace }
        }
    }

    static func jsonForInput(_ text: String, refuse: (String) -> DomainError) throws(DomainError) -> JSONValue {
        do {
            return try JSONValue(parsing: text)
        } catch {
            throw refuse("it starts with '[' but is not valid JSON (\(error)).")
        }
    }

    static func strings(of json: JSONValue, refuse: (String) -> DomainError, what: String) throws(DomainError)
        -> [String]
    {
        guard case .array(let items) = json else { throw refuse("\(what) is a JSON array of strings.") }
        var out: [String] = []
        for item in items {
            guard let text = item.stringValue else {
                throw refuse("\(what) is a JSON array of strings, and \(item.serialized()) is \(item.kindName).")
            }
            out.append(text)
        }
        return out
    }

    static func rows(of json: JSONValue, refuse: (String) -> DomainError) throws(DomainError) -> [[String]] {
        guard case .array(let items) = json else { throw refuse("a table is a JSON array of rows.") }
        var out: [[String]] = []
        for item in items {
            out.append(try strings(of: item, refuse: refuse, what: "a table row"))
        }
        return out
    }

    // MARK: - From JSON

    /// Reads a value in its JSON form (the server's `form_data` shapes, and
    /// `--json` input): a checkbox takes only a JSON boolean (the string
    /// "true" is refused, as the domain asks), a rating only a whole number,
    /// a number a JSON number or a string of one; null is refused, because
    /// an unanswered field is cleared, not set.
    public init(json: JSONValue, for field: TemplateField) throws(DomainError) {
        let description = field.fieldDescription
        let input = json.stringValue ?? json.serialized()
        func refuse(_ reason: String) -> DomainError {
            .valueRefused(field: description, input: input, reason: reason)
        }
        func wrongKind() -> DomainError {
            refuse("\(Self.expectation(for: field)) It was given \(json.kindName).")
        }
        if json.isNull, !field.type.isDisplayOnly {
            throw refuse("null means unanswered; clear the field instead of setting it.")
        }
        let value: FieldValue
        switch field.type {
        case .section, .label: throw .displayOnlyField(description)
        case .text, .textarea, .email, .radio, .select, .passFail, .date:
            guard let text = json.stringValue else { throw wrongKind() }
            switch field.type {
            case .radio, .select: value = .option(text)
            case .passFail:
                guard let answer = PassFail(rawValue: text.lowercased()) else {
                    throw refuse("a pass_fail field is pass or fail (or \"\" for unanswered).")
                }
                value = .passFail(answer)
            case .date:
                do {
                    value = .date(try CalendarDate(parsing: text))
                } catch {
                    throw refuse(error.reason + ".")
                }
            default: value = .text(text)
            }
        case .number:
            let literal: String
            switch json {
            case .number(let text), .string(let text): literal = text
            default: throw wrongKind()
            }
            do {
                value = .number(try ExactDecimal(parsing: literal))
            } catch {
                throw refuse(error.reason + ".")
            }
        case .checkbox:
            guard let flag = json.boolValue else { throw wrongKind() }
            value = .bool(flag)
        case .checkboxGroup:
            value = .options(try Self.strings(of: json, refuse: refuse, what: "a checkbox group"))
        case .rating:
            guard let number = json.integerValue else { throw wrongKind() }
            guard let rating = Int(exactly: number), Self.ratings.contains(rating) else {
                throw refuse("a rating is a whole number from 0 to 5 (0 means unanswered).")
            }
            value = .rating(rating)
        case .signature, .image:
            do {
                value = .photo(try PhotoReference(json: json))
            } catch {
                throw refuse(error.reason + ".")
            }
        case .table:
            value = .table(try Self.rows(of: json, refuse: refuse))
        }
        self = try value.validated(for: field, input: input)
    }

    // MARK: - To JSON

    /// The value's JSON form, the one `init(json:for:)` reads: a number is a
    /// JSON number with the exact digits, a photo the object
    /// `{photo_id, sha256, size, media_type}`.
    public var jsonValue: JSONValue {
        switch self {
        case .text(let text), .option(let text): .string(text)
        case .number(let number): .number(number.text)
        case .date(let date): .string(date.description)
        case .bool(let flag): .bool(flag)
        case .options(let chosen): .array(chosen.map(JSONValue.string))
        case .rating(let value): .integer(value)
        case .passFail(let answer): .string(answer.rawValue)
        case .photo(let photo): photo.jsonValue
        case .table(let rows): .array(rows.map { .array($0.map(JSONValue.string)) })
        }
    }
}
