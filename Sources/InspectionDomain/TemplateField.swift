/// One field of a template's form, laid out on a 12-column grid.
public struct TemplateField: Hashable, Sendable {
    /// The grid the server's web editor and the app both use.
    public static let gridColumns = 12

    public var id: FieldID
    public var type: FieldType
    public var label: String
    public var required: Bool
    /// The choices of radio, select and checkbox_group fields, in form order.
    public var options: [String]?
    /// The column headings of a table field.
    public var columns: [String]?
    /// Layout: first column (1–12), first row (from 1), and the spans.
    public var col: Int
    public var row: Int
    public var colSpan: Int
    public var rowSpan: Int

    /// A field; the layout defaults to a full-width single row, which is
    /// what a test or a hand-written template usually wants.
    public init(
        id: FieldID, type: FieldType, label: String, required: Bool = false, options: [String]? = nil,
        columns: [String]? = nil, col: Int = 1, row: Int = 1, colSpan: Int = 12, rowSpan: Int = 1
    ) {
        self.id = id
        self.type = type
        self.label = label
        self.required = required
        self.options = options
        self.columns = columns
        self.col = col
        self.row = row
        self.colSpan = colSpan
        self.rowSpan = rowSpan
    }

    /// The field as messages name it: id, label and type.
    public var fieldDescription: FieldDescription { FieldDescription(id: id, label: label, type: type) }

    /// Whether submit insists on a value: a required display-only field has
    /// nothing to fill in, so it never blocks a submit.
    public var demandsValue: Bool { required && !type.isDisplayOnly }

    // MARK: - Validation

    /// Checks what the server's contract leaves to clients: choices for
    /// choice fields, columns for tables, a layout that fits the grid.
    /// Returns the reason a field is unusable, or nil.
    func problem() -> String? {
        if type.offersOptions {
            guard let options, !options.isEmpty else {
                return "offers no options; a \(type) field needs at least one"
            }
            if options.contains(where: { $0.trimmingWhiteSpace.isEmpty }) {
                return "has an empty option"
            }
            var seen = Set<String>()
            for option in options where !seen.insert(option.lowercased()).inserted {
                // Input matches options case-insensitively, so "Pass" and
                // "pass" could never be told apart.
                return "offers \"\(option)\" twice (options are matched ignoring case)"
            }
        }
        if type == .table {
            guard let columns, !columns.isEmpty else { return "has no columns; a table field needs at least one" }
        }
        guard (1...Self.gridColumns).contains(col) else { return "starts in column \(col), outside columns 1–12" }
        guard (1...Self.gridColumns).contains(colSpan) else { return "spans \(colSpan) columns, outside 1–12" }
        guard col + colSpan - 1 <= Self.gridColumns else {
            return "runs past column 12 (column \(col) spanning \(colSpan))"
        }
        guard row >= 1 else { return "starts in row \(row); rows start at 1" }
        guard rowSpan >= 1 else { return "spans \(rowSpan) rows; a field spans at least 1" }
        return nil
    }
}
